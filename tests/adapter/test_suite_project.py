"""dbt's adapter suite on floe: aliases, caching, relation changes, copies, hooks, comments.

The classes dbt-spark or dbt-databricks run for some profile, on floe's adapter; the
fixtures differ from dbt's only where Spark SQL spells a thing differently, each said why.
"""

from __future__ import annotations

import os

import pytest
from dbt.tests.adapter.aliases import fixtures as alias_fixtures
from dbt.tests.adapter.aliases.test_aliases import (
    BaseAliasErrors,
    BaseAliases,
    BaseSameAliasDifferentDatabases,
    BaseSameAliasDifferentSchemas,
)
from dbt.tests.adapter.basic.test_table_materialization import BaseTableMaterialization
from dbt.tests.adapter.caching.test_caching import (
    BaseCachingLowercaseModel,
    BaseCachingSelectedSchemaOnly,
    BaseCachingUppercaseModel,
    BaseNoPopulateCache,
)
from dbt.tests.adapter.concurrency.test_concurrency import BaseConcurrency
from dbt.tests.adapter.hooks.test_run_hooks import BaseAfterRunHooks, BasePrePostRunHooks
from dbt.tests.adapter.query_comment.test_query_comment import (
    BaseEmptyQueryComments,
    BaseMacroArgsQueryComments,
    BaseMacroInvalidQueryComments,
    BaseMacroQueryComments,
    BaseNullQueryComments,
    BaseQueryComments,
)
from dbt.tests.adapter.relations.test_changing_relation_type import (
    BaseChangeRelationTypeValidator,
)
from dbt.tests.adapter.relations.test_dropping_schema_named import BaseDropSchemaNamed
from dbt.tests.adapter.sample_mode.test_sample_mode import BaseSampleModeTest
from dbt.tests.adapter.simple_copy.test_simple_copy import EmptyModelsArentRunBase, SimpleCopyBase
from dbt.tests.util import run_dbt

# The suite's string_literal macro dispatches per adapter: Spark's spelling of it.
ALIAS_MACROS = {
    "cast.sql": """
{% macro string_literal(s) -%}
  {{ adapter.dispatch('string_literal', macro_namespace='test')(s) }}
{%- endmacro %}

{% macro floe__string_literal(s) -%}
    cast('{{ s }}' as string)
{%- endmacro %}
""",
    "expect_value.sql": alias_fixtures.MACROS__EXPECT_VALUE_SQL,
}


class TestAliasesFloe(BaseAliases):
    @pytest.fixture(scope="class")
    def macros(self):
        return ALIAS_MACROS


class TestAliasErrorsFloe(BaseAliasErrors):
    @pytest.fixture(scope="class")
    def macros(self):
        return ALIAS_MACROS


class TestSameAliasDifferentSchemasFloe(BaseSameAliasDifferentSchemas):
    @pytest.fixture(scope="class")
    def macros(self):
        return ALIAS_MACROS


class TestSameAliasDifferentDatabasesFloe(BaseSameAliasDifferentDatabases):
    @pytest.fixture(scope="class")
    def macros(self):
        return ALIAS_MACROS


class TestTableMaterializationFloe(BaseTableMaterialization):
    pass


class SparkCachingTest:
    """dbt's cache checks, comparing schema and identifier: a Spark relation has no
    database (dbt-spark refuses one: Spark's namespaces are `schema.table`), and dbt's
    test lower-cases the relation's database. The case of the identifier is what the
    uppercase class checks (a model file `MODEL.sql`, found again on the second run)."""

    def run_and_inspect_cache(self, project, run_args=None):
        run_dbt(run_args)
        relations = list(project.adapter.cache.relations)
        assert len(relations) == 1
        relation = relations[0]
        assert relation.schema == project.test_schema.lower()
        run_dbt(run_args)
        relations = list(project.adapter.cache.relations)
        assert len(relations) == 1
        for key in ["schema", "identifier"]:
            assert getattr(relation, key).lower() == getattr(relations[0], key).lower()


class TestNoPopulateCacheFloe(SparkCachingTest, BaseNoPopulateCache):
    pass


class TestCachingLowercaseModelFloe(SparkCachingTest, BaseCachingLowercaseModel):
    pass


class TestCachingUppercaseModelFloe(SparkCachingTest, BaseCachingUppercaseModel):
    pass


class TestCachingSelectedSchemaOnlyFloe(SparkCachingTest, BaseCachingSelectedSchemaOnly):
    pass


class TestConcurrencyFloe(BaseConcurrency):
    pass


class TestChangeRelationTypesFloe(BaseChangeRelationTypeValidator):
    pass


class TestDropSchemaNamedFloe(BaseDropSchemaNamed):
    pass


class TestSimpleCopyFloe(SimpleCopyBase):
    @pytest.mark.skip(
        reason="Spark limitation: Spark SQL has no materialized views "
        "(https://spark.apache.org/docs/3.5.0/sql-ref-syntax.html lists none)"
    )
    def test_simple_copy_with_materialized_views(self, project):
        pass


@pytest.mark.skip(
    reason="Spark limitation: the class queries information_schema.tables, which Spark's "
    "catalogs do not have (https://spark.apache.org/docs/3.5.0/sql-ref-syntax.html lists "
    "SHOW TABLES instead; dbt-databricks skips it on Hive metastores for the same reason)"
)
class TestEmptyModelsArentRunFloe(EmptyModelsArentRunBase):
    pass


class TestSampleModeFloe(BaseSampleModeTest):
    pass


# dbt's run-hook fixtures are Postgres SQL: `text` columns, a `seed_run.sql` of Postgres
# DDL and double-quoted column names (string literals in Spark SQL). The same hooks,
# table and checks in Spark's dialect; the target checked is floe's session profile.
ON_RUN_HOOK_TABLE = """
create table {schema}.on_run_hook (
    test_state string, target_dbname string, target_host string, target_name string,
    target_schema string, target_type string, target_user string, target_pass string,
    target_threads int, run_started_at string, invocation_id string, thread_id string
)
"""
ON_RUN_HOOK_FIELDS = [
    "test_state",
    "target_dbname",
    "target_host",
    "target_name",
    "target_schema",
    "target_threads",
    "target_type",
    "target_user",
    "target_pass",
    "run_started_at",
    "invocation_id",
    "thread_id",
]


class TestPrePostRunHooksFloe(BasePrePostRunHooks):
    @pytest.fixture(scope="function")
    def setUp(self, project):
        project.run_sql(f"drop table if exists {project.test_schema}.on_run_hook")
        project.run_sql(ON_RUN_HOOK_TABLE.format(schema=project.test_schema))
        for table in ("schemas", "db_schemas"):
            project.run_sql(f"drop table if exists {project.test_schema}.{table}")
        os.environ["TERM_TEST"] = "TESTING"

    @pytest.fixture(scope="class")
    def project_config_update(self):
        schema = "{{ target.schema }}"
        return {
            # in the order given: a drop before its create would fail the run
            "on-run-start": [
                "{{ custom_run_hook('start', target, run_started_at, invocation_id) }}",
                f"create table {schema}.start_hook_order_test (id int)",
                f"drop table {schema}.start_hook_order_test",
                "{{ log(env_var('TERM_TEST'), info=True) }}",
            ],
            "on-run-end": [
                "{{ custom_run_hook('end', target, run_started_at, invocation_id) }}",
                f"create table {schema}.end_hook_order_test (id int)",
                f"drop table {schema}.end_hook_order_test",
                f"create table {schema}.schemas (schema string)",
                f"insert into {schema}.schemas (schema) values "
                "{% for s in schemas %}('{{ s }}'){% if not loop.last %},{% endif %}"
                "{% endfor %}",
                f"create table {schema}.db_schemas (db string, schema string)",
                f"insert into {schema}.db_schemas (db, schema) values "
                "{% for db, s in database_schemas %}('{{ db }}', '{{ s }}')"
                "{% if not loop.last %},{% endif %}{% endfor %}",
            ],
            "seeds": {"quote_columns": False},
        }

    def get_ctx_vars(self, state, project):
        rows = project.run_sql(
            f"select {', '.join(ON_RUN_HOOK_FIELDS)} from {project.test_schema}.on_run_hook "
            f"where test_state = '{state}'",
            fetch="all",
        )
        assert len(rows) == 1, f"one {state} row expected in on_run_hook, got {rows}"
        return dict(zip(ON_RUN_HOOK_FIELDS, rows[0], strict=True))

    def assert_used_schemas(self, project):
        schemas = project.run_sql(f"select * from {project.test_schema}.schemas", fetch="all")
        assert [tuple(r) for r in schemas] == [(project.test_schema,)]
        # dbt's Spark relations have no database part (None, rendered by the hook as
        # text): https://docs.getdbt.com/reference/resource-configs/spark-configs
        # ("database" and "schema" are one and the same on Spark)
        db_schemas = project.run_sql(f"select * from {project.test_schema}.db_schemas", fetch="all")
        assert [tuple(r) for r in db_schemas] == [(str(project.database), project.test_schema)]

    def check_hooks(self, state, project, host):
        ctx = self.get_ctx_vars(state, project)
        assert ctx["test_state"] == state
        assert ctx["target_host"] == host
        assert ctx["target_name"] == "default"
        assert ctx["target_schema"] == project.test_schema
        assert ctx["target_type"] == "floe"
        assert ctx["target_threads"] == 1
        assert ctx["run_started_at"], "run_started_at was not set"
        assert ctx["invocation_id"], "invocation_id was not set"
        assert ctx["thread_id"].startswith("Thread-") or ctx["thread_id"] == "MainThread"


class TestAfterRunHooksFloe(BaseAfterRunHooks):
    pass


class TestQueryCommentsFloe(BaseQueryComments):
    pass


class TestMacroQueryCommentsFloe(BaseMacroQueryComments):
    pass


class TestMacroArgsQueryCommentsFloe(BaseMacroArgsQueryComments):
    pass


class TestMacroInvalidQueryCommentsFloe(BaseMacroInvalidQueryComments):
    pass


class TestNullQueryCommentsFloe(BaseNullQueryComments):
    pass


class TestEmptyQueryCommentsFloe(BaseEmptyQueryComments):
    pass

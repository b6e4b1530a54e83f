"""Model contracts on floe: names and types checked at build, constraints enforced in the
write (docs/decisions/0028-contract-constraints.md).

dbt's constraint classes run with Spark's type names (no `text`, as in dbt-spark's suite)
and without foreign keys, which Iceberg cannot check and floe refuses at compile time
(tested below). A violating row fails the write before Iceberg commits: the rollback
classes expect the previous rows (`blue`), not dbt-spark's Delta behaviour (`red`).
"""

from __future__ import annotations

import re

import pytest
from dbt.tests.adapter.constraints import fixtures
from dbt.tests.adapter.constraints.test_constraints import (
    BaseConstraintQuotedColumn,
    BaseConstraintsRollback,
    BaseConstraintsRuntimeDdlEnforcement,
    BaseIncrementalConstraintsColumnsEqual,
    BaseIncrementalConstraintsRollback,
    BaseIncrementalConstraintsRuntimeDdlEnforcement,
    BaseModelConstraintsRuntimeEnforcement,
    BaseTableConstraintsColumnsEqual,
    BaseViewConstraintsColumnsEqual,
)
from dbt.tests.util import run_dbt, write_file

SPARK_SCHEMA_YML = fixtures.model_schema_yml.replace("text", "string")


class SparkContractTypes:
    """Spark's spellings of the suite's types, as dbt's contract check prints them."""

    @pytest.fixture
    def string_type(self):
        return "string"

    @pytest.fixture
    def int_type(self):
        return "int"

    @pytest.fixture
    def schema_string_type(self):
        return "string"

    @pytest.fixture
    def schema_int_type(self):
        return "int"

    @pytest.fixture
    def data_types(self, int_type, schema_int_type, string_type, schema_string_type):
        # sql_column_value, schema_data_type, error_data_type
        return [
            ["1", schema_int_type, int_type],
            ['"1"', schema_string_type, string_type],
            ["true", "boolean", "boolean"],
            ['array("1","2","3")', "array<string>", "array<string>"],
            ["array(1,2,3)", "array<int>", "array<int>"],
            ["cast('2019-01-01' as date)", "date", "date"],
            ["cast('2019-01-01' as timestamp)", "timestamp", "timestamp"],
            # Spark's bare `decimal` is decimal(10,0): the contract names the precision
            ["cast(1.0 AS DECIMAL(4, 2))", "decimal(4,2)", "decimal(4,2)"],
        ]


class TestTableConstraintsColumnsEqualFloe(SparkContractTypes, BaseTableConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_wrong_name_sql,
            "constraints_schema.yml": SPARK_SCHEMA_YML,
        }


class TestViewConstraintsColumnsEqualFloe(SparkContractTypes, BaseViewConstraintsColumnsEqual):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_view_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_view_wrong_name_sql,
            "constraints_schema.yml": SPARK_SCHEMA_YML,
        }


class TestIncrementalConstraintsColumnsEqualFloe(
    SparkContractTypes, BaseIncrementalConstraintsColumnsEqual
):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model_wrong_order.sql": fixtures.my_model_incremental_wrong_order_sql,
            "my_model_wrong_name.sql": fixtures.my_model_incremental_wrong_name_sql,
            "constraints_schema.yml": SPARK_SCHEMA_YML,
        }


NOT_NULL_REFUSED = ["not_null constraint violated: id is null", "nothing was written"]


class TestTableConstraintsRollbackFloe(BaseConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self):
        return {"my_model.sql": fixtures.my_model_sql, "constraints_schema.yml": SPARK_SCHEMA_YML}

    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        return NOT_NULL_REFUSED


class TestIncrementalConstraintsRollbackFloe(BaseIncrementalConstraintsRollback):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_incremental_model_sql,
            "constraints_schema.yml": SPARK_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_error_messages(self):
        return NOT_NULL_REFUSED


# ---------------------------------------------------------------- floe's own checks

CHECKED_YML = """
version: 2
models:
  - name: checked
    config:
      contract: {enforced: true}
    constraints:
      - type: check
        expression: amount >= 0
        name: no_negative_amounts
      - type: unique
        columns: [id]
    columns:
      - name: id
        data_type: int
        constraints: [{type: not_null}]
      - name: amount
        data_type: int
"""
GOOD_ROWS = "{{ config(materialized='table') }} select 1 as id, 10 as amount union all select 2, 0"
NEGATIVE = "{{ config(materialized='table') }} select 1 as id, 10 as amount union all select 2, -5"
DUPLICATE = "{{ config(materialized='table') }} select 1 as id, 10 as amount union all select 1, 5"
NULL_CHECK = (
    "{{ config(materialized='table') }} "
    "select 1 as id, 10 as amount union all select 2, cast(null as int)"
)
FOREIGN_KEY_YML = """
version: 2
models:
  - name: child
    config:
      contract: {enforced: true}
    columns:
      - name: id
        data_type: int
        constraints:
          - type: foreign_key
            expression: checked (id)
"""


def snapshot_id(project, table: str) -> int:
    rows = project.run_sql(
        f"select snapshot_id from {project.test_schema}.{table}.snapshots "
        "order by committed_at desc limit 1",
        fetch="all",
    )
    return rows[0][0]


class TestConstraintsRefuseTheWriteFloe:
    @pytest.fixture(scope="class")
    def models(self):
        return {"checked.sql": GOOD_ROWS, "schema.yml": CHECKED_YML}

    def rows(self, project):
        sql = f"select id, amount from {project.test_schema}.checked order by id"
        return [tuple(r) for r in project.run_sql(sql, fetch="all")]

    @pytest.mark.parametrize(
        ("sql", "message"),
        [
            (NEGATIVE, "check constraint no_negative_amounts (model) violated: amount >= 0"),
            (DUPLICATE, "unique constraint violated: two rows share id"),
        ],
    )
    def test_a_violating_rebuild_commits_nothing(self, project, sql, message):
        run_dbt(["run"])
        before = (self.rows(project), snapshot_id(project, "checked"))
        write_file(sql, "models", "checked.sql")
        failed = run_dbt(["run"], expect_pass=False)
        assert message in failed[0].message
        assert "nothing was written" in failed[0].message
        assert (self.rows(project), snapshot_id(project, "checked")) == before
        write_file(GOOD_ROWS, "models", "checked.sql")

    def test_a_null_check_result_passes_as_in_sql(self, project):
        write_file(NULL_CHECK, "models", "checked.sql")
        run_dbt(["run"])
        assert self.rows(project) == [(1, 10), (2, None)]
        write_file(GOOD_ROWS, "models", "checked.sql")

    def test_a_foreign_key_is_refused_at_compile_time(self, project):
        write_file("{{ config(materialized='table') }} select 1 as id", "models", "child.sql")
        write_file(FOREIGN_KEY_YML, "models", "child.yml")
        failed = run_dbt(["run", "-s", "child"], expect_pass=False)
        assert re.search(r"cannot enforce a foreign_key constraint", failed[0].message)


# ---------------------------------------------------------------- the DDL floe runs
# dbt's DDL classes compare the statement a contracted model runs with the platform's.
# floe's: one atomic `create or replace table ... as` whose select asserts each constraint
# (no constraint DDL: Iceberg has none). Foreign keys are left out of the fixtures: floe
# refuses them at compile time (TestConstraintsRefuseTheWriteFloe).
FK_FREE_SCHEMA_YML = re.sub(
    r"\n +- type: foreign_key\n +to: ref\('foreign_key_model'\)\n +to_columns: \[\"id\"\]",
    "",
    fixtures.model_fk_constraint_schema_yml.replace("text", "string"),
)
MODEL_LEVEL_SCHEMA_YML = re.sub(
    r"\n +- type: foreign_key\n +columns: \[ id \]\n +expression: \{schema\}\.foreign_key_model \(id\)",
    "",
    fixtures.constrained_model_schema_yml.replace("text", "string"),
)

FLOE_TABLE_DDL = """
create or replace table <model_identifier>
using iceberg
tblproperties (
    'format-version' = '2',
    'write.merge.mode' = 'copy-on-write',
    'write.update.mode' = 'copy-on-write',
    'write.delete.mode' = 'copy-on-write',
    'write.wap.enabled' = 'true'
)
as
select id, color, date_day from (
    select *,
        count(1) over (partition by id) as floe_key_rows_1,
        count(1) over (partition by id) as floe_key_rows_2
    from (
        select id, color, date_day from (
            -- depends_on: <foreign_key_model_identifier>
            select 'blue' as color, 1 as id, '2019-01-01' as date_day
        ) as model_subq
    ) as floe_rows
) as floe_checked
where assert_true(id is not null,
    <model_identifier> not_null constraint violated: id is null; nothing was written') is null
  and assert_true(id is not null,
    <model_identifier> primary_key constraint violated: id is null; nothing was written') is null
  and assert_true(coalesce(((id > 0)), true),
    <model_identifier> check constraint check (column id) violated: (id > 0);
    nothing was written') is null
  and assert_true(coalesce((id >= 1), true),
    <model_identifier> check constraint check (column id) violated: id >= 1;
    nothing was written') is null
  and assert_true(floe_key_rows_1 = 1,
    <model_identifier> primary_key constraint violated: two rows share id;
    nothing was written') is null
  and assert_true(floe_key_rows_2 = 1,
    <model_identifier> unique constraint violated: two rows share id;
    nothing was written') is null
"""
FLOE_MODEL_LEVEL_DDL = """
create or replace table <model_identifier>
using iceberg
tblproperties (
    'format-version' = '2',
    'write.merge.mode' = 'copy-on-write',
    'write.update.mode' = 'copy-on-write',
    'write.delete.mode' = 'copy-on-write',
    'write.wap.enabled' = 'true'
)
as
select id, color, date_day from (
    select *,
        count(1) over (partition by id) as floe_key_rows_1,
        count(1) over (partition by color, date_day) as floe_key_rows_2
    from (
        select id, color, date_day from (
            -- depends_on: <foreign_key_model_identifier>
            select 'blue' as color, 1 as id, '2019-01-01' as date_day
        ) as model_subq
    ) as floe_rows
) as floe_checked
where assert_true(id is not null,
    <model_identifier> not_null constraint violated: id is null; nothing was written') is null
  and assert_true(coalesce(((id > 0)), true),
    <model_identifier> check constraint check (model) violated: (id > 0);
    nothing was written') is null
  and assert_true(coalesce((id >= 1), true),
    <model_identifier> check constraint check (model) violated: id >= 1;
    nothing was written') is null
  and assert_true(id is not null,
    <model_identifier> primary_key constraint violated: id is null; nothing was written') is null
  and assert_true(floe_key_rows_1 = 1,
    <model_identifier> primary_key constraint violated: two rows share id;
    nothing was written') is null
  and assert_true(floe_key_rows_2 = 1,
    <model_identifier> unique constraint violated: two rows share color, date_day;
    nothing was written') is null
"""
FLOE_QUOTED_DDL = r"""
create or replace table <model_identifier>
using iceberg
tblproperties (
    'format-version' = '2',
    'write.merge.mode' = 'copy-on-write',
    'write.update.mode' = 'copy-on-write',
    'write.delete.mode' = 'copy-on-write',
    'write.wap.enabled' = 'true'
)
as
select id, `from`, date_day from (
    select * from (
        select id, `from`, date_day from (
            select 'blue' as `from`, 1 as id, '2019-01-01' as date_day
        ) as model_subq
    ) as floe_rows
) as floe_checked
where assert_true(id is not null,
    <model_identifier> not_null constraint violated: id is null; nothing was written') is null
  and assert_true(`from` is not null,
    <model_identifier> not_null constraint violated: `from` is null;
    nothing was written') is null
  and assert_true(coalesce(((`from` = 'blue')), true),
    <model_identifier> check constraint check (model) violated: (`from` = \'blue\');
    nothing was written') is null
"""


class TestTableConstraintsDdlEnforcementFloe(BaseConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": FK_FREE_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return FLOE_TABLE_DDL


class TestIncrementalConstraintsDdlEnforcementFloe(BaseIncrementalConstraintsRuntimeDdlEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_incremental_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": FK_FREE_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return FLOE_TABLE_DDL


class TestModelConstraintsRuntimeEnforcementFloe(BaseModelConstraintsRuntimeEnforcement):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_wrong_order_depends_on_fk_sql,
            "foreign_key_model.sql": fixtures.foreign_key_model_sql,
            "constraints_schema.yml": MODEL_LEVEL_SCHEMA_YML,
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return FLOE_MODEL_LEVEL_DDL


class TestConstraintQuotedColumnFloe(BaseConstraintQuotedColumn):
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "my_model.sql": fixtures.my_model_with_quoted_column_name_sql,
            "constraints_schema.yml": fixtures.model_quoted_column_schema_yml.replace(
                "text", "string"
            ).replace('"from"', "`from`"),
        }

    @pytest.fixture(scope="class")
    def expected_sql(self):
        return FLOE_QUOTED_DDL

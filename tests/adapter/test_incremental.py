"""dbt's incremental contract on floe: unique keys and on_schema_change."""

from __future__ import annotations

import pytest
from dbt.tests.adapter.incremental import fixtures
from dbt.tests.adapter.incremental.test_incremental_merge_exclude_columns import (
    BaseMergeExcludeColumns,
)
from dbt.tests.adapter.incremental.test_incremental_on_schema_change import (
    BaseIncrementalOnSchemaChange,
    BaseIncrementalOnSchemaChangeSetup,
)
from dbt.tests.adapter.incremental.test_incremental_predicates import BaseIncrementalPredicates
from dbt.tests.adapter.incremental.test_incremental_unique_id import (
    BaseIncrementalUniqueKey,
    seeds__seed_csv,
)
from dbt.tests.util import check_relations_equal, run_dbt

# The suite's row inserts write '2022-02-14' into the seed's DATE column; Spark assigns
# to Iceberg (v2) tables under ANSI store assignment, which casts no string to a date
# (INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST). Same rows, as date literals.
SEED_DUPLICATE_INSERT_SQL = """
insert into {schema}.seed (state, county, city, last_visit_date)
values ('CT', 'Hartford', 'Hartford', date'2022-02-14');
"""
SEED_ADD_NEW_ROWS_SQL = """
insert into {schema}.seed (state, county, city, last_visit_date)
values ('WA', 'King', 'Seattle', date'2022-02-01');

insert into {schema}.seed (state, county, city, last_visit_date)
values ('CA', 'Los Angeles', 'Los Angeles', date'2022-02-01');
"""


class TestIncrementalUniqueKeyFloe(BaseIncrementalUniqueKey):
    # dbt-spark runs this suite with merge on delta; floe's tables are Iceberg.
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "merge", "+file_format": "iceberg"}}

    @pytest.fixture(scope="class")
    def seeds(self):
        return {
            "duplicate_insert.sql": SEED_DUPLICATE_INSERT_SQL,
            "seed.csv": seeds__seed_csv,
            "add_new_rows.sql": SEED_ADD_NEW_ROWS_SQL,
        }


class TestIncrementalOnSchemaChangeFloe(BaseIncrementalOnSchemaChange):
    # Every mode dbt defines, sync_all_columns included (Iceberg drops columns).
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_strategy": "merge",
                "+unique_key": "id",
                "+file_format": "iceberg",
            }
        }


class TestIncrementalOnSchemaChangeAppendFloe(BaseIncrementalOnSchemaChangeSetup):
    # The append strategy (floe's and dbt-spark's default), as dbt-spark's session profile runs it.
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+incremental_strategy": "append", "+file_format": "iceberg"}}

    def test_run_incremental_ignore(self, project):
        self.run_twice_and_assert(
            "model_a incremental_ignore incremental_ignore_target",
            "incremental_ignore",
            "incremental_ignore_target",
            project,
        )

    def test_run_incremental_fail_on_schema_change(self, project):
        run_dbt(["run", "--models", "model_a incremental_fail", "--full-refresh"])
        results = run_dbt(["run", "--models", "model_a incremental_fail"], expect_pass=False)
        assert "Compilation Error" in results[1].message


class TestIncrementalOnSchemaChangeSpecialCharsFloe(BaseIncrementalOnSchemaChangeSetup):
    """Columns that need quoting (a keyword, a dash, a space, dots) added and dropped."""

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_strategy": "merge",
                "+unique_key": "id",
                "+file_format": "iceberg",
            }
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "model_a_special_chars.sql": fixtures._MODELS__A_SPECIAL_CHARS,
            "incremental_append_new_special_chars.sql": (
                fixtures._MODELS__INCREMENTAL_APPEND_NEW_SPECIAL_CHARS
            ),
            "incremental_append_new_special_chars_target.sql": (
                fixtures._MODELS__INCREMENTAL_APPEND_NEW_SPECIAL_CHARS_TARGET
            ),
            "incremental_sync_all_special_chars.sql": (
                fixtures._MODELS__INCREMENTAL_SYNC_ALL_SPECIAL_CHARS
            ),
            "incremental_sync_all_special_chars_target.sql": (
                fixtures._MODELS__INCREMENTAL_SYNC_ALL_SPECIAL_CHARS_TARGET
            ),
        }

    @pytest.mark.parametrize("mode", ["append_new", "sync_all"])
    def test_special_character_columns(self, project, mode):
        model = f"incremental_{mode}_special_chars"
        select = f"model_a_special_chars {model} {model}_target"
        run_dbt(["run", "--select", select, "--full-refresh"])
        run_dbt(["run", "--select", select])
        check_relations_equal(project.adapter, [model, f"{model}_target"])


# dbt-spark's merge variant of the predicates suite (delete+insert is not a Spark strategy).
PREDICATES_MODEL = """
{{ config(materialized='incremental', unique_key='id') }}
{% if not is_incremental() %}
select cast(1 as bigint) as id, 'hello' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'goodbye' as msg, 'red' as color
{% else %}
-- the predicate keeps id 2 from matching: its new row is inserted
select cast(1 as bigint) as id, 'hey' as msg, 'blue' as color
union all
select cast(2 as bigint) as id, 'yo' as msg, 'green' as color
union all
select cast(3 as bigint) as id, 'anyway' as msg, 'purple' as color
{% endif %}
"""


class TestIncrementalPredicatesMergeFloe(BaseIncrementalPredicates):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {
            "models": {
                "+incremental_predicates": ["dbt_internal_dest.id != 2"],
                "+incremental_strategy": "merge",
                "+file_format": "iceberg",
            }
        }

    @pytest.fixture(scope="class")
    def models(self):
        return {"delete_insert_incremental_predicates.sql": PREDICATES_MODEL}


class TestMergeExcludeColumnsFloe(BaseMergeExcludeColumns):
    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "iceberg"}}

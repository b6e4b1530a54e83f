"""Where floe's adapter broke dbt's contract on Iceberg, and floe's safer defaults beside it.

- `drop schema ... cascade` on a namespace holding tables (Iceberg: NamespaceNotEmpty);
- relation lookups in a schema that does not exist (Iceberg: NoSuchNamespace);
- a unique_key column the model lacks, while no rows arrive;
- on_schema_change sync_all_columns and merge without unique_key, as explicit choices,
  next to floe's default (append_new_columns: never drop);
- seed values the session method bound as text ('None' for NULL, quotes unescaped);
- the scd2 materialization's two model forms (one load, every load at once).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dbt.tests.util import run_dbt, write_file

MISSING = "floe_no_such_schema"


def namespaces(spark) -> set[str]:
    return {row[0] for row in spark.sql("show namespaces").collect()}


def rows(project, sql: str) -> list[tuple]:
    return [tuple(row) for row in project.run_sql(sql, fetch="all")]


class TestDropSchemaWithRelationsFloe:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "a_table.sql": "{{ config(materialized='table') }} select 1 as id",
            "a_view.sql": "{{ config(materialized='view') }} select * from {{ ref('a_table') }}",
        }

    def test_drop_schema_drops_tables_views_then_the_namespace(self, project, spark):
        run_dbt(["run"])
        assert project.test_schema in namespaces(spark)
        table = f"{project.test_schema}.a_table"
        files = [
            Path(row[0].removeprefix("file:"))
            for row in spark.sql(
                f"select file_path from {table}.files union all "
                f"select file from {table}.metadata_log_entries"
            ).collect()
        ]
        assert files and all(f.exists() for f in files)
        with project.adapter.connection_named("__test"):
            schema = project.adapter.Relation.create(schema=project.test_schema)
            project.adapter.drop_schema(schema)
        assert project.test_schema not in namespaces(spark)
        # purged: no data or metadata file of the table is left behind
        assert [f for f in files if f.exists()] == []

        # dropping it again is nothing to do, not an error
        with project.adapter.connection_named("__test"):
            project.adapter.drop_schema(schema)

    def test_raw_drop_schema_cascade_empties_the_namespace_first(self, project, spark):
        run_dbt(["run"])
        table = f"{project.test_schema}.a_table"
        files = [
            Path(row[0].removeprefix("file:"))
            for row in spark.sql(f"select file_path from {table}.files").collect()
        ]
        project.run_sql(f"drop schema {project.test_schema} cascade")
        assert project.test_schema not in namespaces(spark)
        assert files and [f for f in files if f.exists()] == []


SOURCES_IN_MISSING_SCHEMA = f"""
version: 2
sources:
  - name: gone
    schema: {MISSING}
    tables:
      - name: orders
"""


class TestMissingSchemaLookupsFloe:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "sources.yml": SOURCES_IN_MISSING_SCHEMA,
            "one.sql": "select 1 as id",
        }

    def test_lookups_in_a_missing_schema_find_nothing(self, project, spark):
        assert MISSING not in namespaces(spark)
        adapter = project.adapter
        with adapter.connection_named("__test"):
            schema = adapter.Relation.create(schema=MISSING)
            assert adapter.list_relations_without_caching(schema) == []
            assert adapter.get_relation(None, MISSING, "orders") is None
            relation = adapter.Relation.create(schema=MISSING, identifier="orders")
            assert adapter.get_columns_in_relation(relation) == []
            assert adapter.check_schema_exists(None, MISSING) is False
        assert MISSING not in namespaces(spark)  # looking created nothing

    def test_docs_catalog_skips_a_source_in_a_missing_schema(self, project):
        run_dbt(["run"])
        run_dbt(["docs", "generate"])
        catalog = json.loads(Path(project.project_root, "target", "catalog.json").read_text())
        assert not catalog["errors"]
        assert "source.test.gone.orders" not in catalog["sources"]
        assert "model.test.one" in catalog["nodes"]


MISSPELLED_KEY = """
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='customer_idd') }}
select 1 as customer_id, 'a' as name
{% if is_incremental() %} where false {% endif %}
"""


class TestUniqueKeyCheckedWithoutNewRowsFloe:
    @pytest.fixture(scope="class")
    def models(self):
        return {"misspelled_key.sql": MISSPELLED_KEY}

    def test_a_misspelled_unique_key_fails_the_first_incremental_run(self, project):
        run_dbt(["run"])  # dbt's contract: the first build applies no key
        result = run_dbt(["run"], expect_pass=False).results[0]
        assert "unique_key column customer_idd not in the model's columns" in result.message
        assert "(customer_id, name)" in result.message


SCHEMA_CHANGE = """
{{{{ config(materialized='incremental', incremental_strategy='merge', unique_key='id'{extra}) }}}}
{{% if is_incremental() %}}
select 2 as id, 'b' as name
{{% else %}}
select 1 as id, 'a' as name, 'x' as legacy
{{% endif %}}
"""

MERGE_WITHOUT_KEY = """
{{ config(materialized='incremental', incremental_strategy='merge') }}
select 1 as id, 'a' as name
"""


class TestSchemaChangeChoicesFloe:
    @pytest.fixture(scope="class")
    def models(self):
        return {
            "by_default.sql": SCHEMA_CHANGE.format(extra=""),
            "sync_all.sql": SCHEMA_CHANGE.format(extra=", on_schema_change='sync_all_columns'"),
            "merge_without_key.sql": MERGE_WITHOUT_KEY,
        }

    @pytest.fixture(scope="class")
    def project_config_update(self):
        return {"models": {"+file_format": "iceberg"}}

    def test_a_dropped_column_stays_unless_the_model_asks_sync_all_columns(self, project):
        run_dbt(["run", "--select", "by_default sync_all"])
        run_dbt(["run", "--select", "by_default sync_all"])
        schema = project.test_schema
        assert rows(project, f"select id, name, legacy from {schema}.by_default order by id") == [
            (1, "a", "x"),
            (2, "b", None),
        ]
        columns = [
            c.name
            for c in project.adapter.get_columns_in_relation(
                project.adapter.Relation.create(schema=schema, identifier="sync_all")
            )
        ]
        assert columns == ["id", "name"]
        assert rows(project, f"select id, name from {schema}.sync_all order by id") == [
            (1, "a"),
            (2, "b"),
        ]

    def test_merge_without_unique_key_appends(self, project):
        run_dbt(["run", "--select", "merge_without_key"])
        run_dbt(["run", "--select", "merge_without_key"])
        table = f"{project.test_schema}.merge_without_key"
        assert rows(project, f"select id, name from {table}") == [(1, "a"), (1, "a")]


SCD2_LOADS = """
select * from values
    (date'2022-07-01', 'full', 'a'), (date'2022-07-02', 'changes', 'b'),
    (date'2022-07-03', 'changes', 'c')
    as t(load_date, load_kind, fingerprint)
"""

SCD2_SOURCE = """
select * from values
    (1, 'a', date'2022-07-01'), (2, 'b', date'2022-07-01'), (1, 'a2', date'2022-07-02'),
    (2, 'b3', date'2022-07-03'), (3, 'c3', date'2022-07-03')
    as t(id, name, load_date)
"""

SCD2_CONFIG = """{{ config(materialized='scd2', unique_key='id', scd2_loads='loads',
    delete_detection='status') }}
-- depends_on: {{ ref('loads') }}
"""


class TestScd2MultiLoadFormFloe:
    """A model may render every pending load at once (docs/scd2.md); it gives the table
    the one-load form gives, and one that forgets `_scd2_load` fails by name."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "loads.sql": SCD2_LOADS,
            "src.sql": SCD2_SOURCE,
            "dim_one.sql": SCD2_CONFIG + "select id, name from {{ ref('src') }} "
            "where load_date = {{ floe_scd2_load_date() }}",
            "dim_all.sql": SCD2_CONFIG + "select p._scd2_load, s.id, s.name "
            "from {{ ref('src') }} as s "
            "inner join {{ floe_scd2_loads() }} as p on s.load_date = p.load_date",
            "dim_untagged.sql": SCD2_CONFIG + "select s.id, s.name from {{ ref('src') }} as s "
            "inner join {{ floe_scd2_loads() }} as p on s.load_date = p.load_date",
        }

    def test_one_rendering_gives_the_same_versions(self, project):
        run_dbt(["run", "--select", "loads src dim_one dim_all"])
        schema = project.test_schema
        query = "select sk, id, name, valid_from, valid_to from {}.{} order by sk"
        one = rows(project, query.format(schema, "dim_one"))
        assert rows(project, query.format(schema, "dim_all")) == one
        # surrogate keys by load, then key; each load effective its own date
        assert [(r[0], r[1], r[2], str(r[3]), str(r[4])) for r in one] == [
            (1, 1, "a", "2022-07-01", "2022-07-01"),
            (2, 2, "b", "2022-07-01", "2022-07-02"),
            (3, 1, "a2", "2022-07-02", "9999-12-31"),
            (4, 2, "b3", "2022-07-03", "9999-12-31"),
            (5, 3, "c3", "2022-07-03", "9999-12-31"),
        ]

    def test_a_model_that_does_not_tag_its_rows_fails_by_name(self, project):
        run_dbt(["run", "--select", "loads src"])
        result = run_dbt(["run", "--select", "dim_untagged"], expect_pass=False).results[0]
        assert "dim_untagged reads floe_scd2_loads() and must return its _scd2_load" in (
            result.message
        )


AWKWARD_SEED = """id,name,note
1,O'Brien,back\\slash
2,,100%
3,"quote "" inside",
"""


class TestSeedValuesAreLiteralsFloe:
    @pytest.fixture(scope="class")
    def seeds(self):
        return {"awkward.csv": AWKWARD_SEED}

    def test_nulls_quotes_and_backslashes_load_as_written(self, project):
        run_dbt(["seed"])
        assert rows(
            project, f"select id, name, note from {project.test_schema}.awkward order by id"
        ) == [
            (1, "O'Brien", "back\\slash"),
            (2, None, "100%"),
            (3, 'quote " inside', None),
        ]


def test_public_macros_are_documented_with_their_signatures(tmp_path):
    """The adapter's macro YAML matches the macros' Jinja signatures and types.

    dbt checks it only under `validate_macro_args`; a tiny project parses with that flag
    and warnings as errors, then every public macro must carry a description and typed
    arguments in the manifest.
    """
    from floe.dbt_runner import run_dbt as floe_run_dbt

    write_file(
        "name: macro_docs\nprofile: floe\nconfig-version: 2\n"
        "flags:\n  validate_macro_args: true\n  send_anonymous_usage_stats: false\n",
        str(tmp_path),
        "dbt_project.yml",
    )
    run = floe_run_dbt(
        ["--warn-error", "parse"], project=tmp_path, target_path=tmp_path / "target", quiet=True
    )
    assert run.success, run.exception
    manifest = json.loads((tmp_path / "target" / "manifest.json").read_text())
    public = {
        "as_of": ["event_ts", "dim", "valid_from", "valid_to", "grain"],
        "cdc_unapplied": ["column"],
        "floe_scd2_load_date": [],
        "floe_scd2_loads": [],
        "floe__generate_schema_name": ["custom_schema_name", "node"],
        "test_scd2_one_current_row": ["model", "key", "valid_to", "sentinel"],
        "test_scd2_valid_intervals": ["model", "key", "valid_from", "valid_to"],
        "test_expression_is_true": ["model", "expression"],
        "test_floe_checks": ["model", "checks"],
        "iceberg_compact": ["table", "strategy", "min_input_files"],
        "iceberg_expire_snapshots": ["table", "retain_last", "older_than_days"],
        "iceberg_remove_orphan_files": ["table", "older_than_days"],
        "iceberg_rewrite_manifests": ["table"],
    }
    for name, arguments in public.items():
        macro = manifest["macros"][f"macro.dbt_floe.{name}"]
        assert macro["description"].strip(), f"{name} has no description"
        assert [a["name"] for a in macro["arguments"]] == arguments, name
        assert all(a["type"] and a["description"] for a in macro["arguments"]), name
    # Internal macros too (hidden from the docs site): every macro but dispatch
    # implementations, materializations and generic tests, whose entry points are documented.
    dispatched = ("floe__", "spark__", "default__", "materialization_", "test_")
    for macro in manifest["macros"].values():
        if macro["package_name"] == "dbt_floe" and not macro["name"].startswith(dispatched):
            assert macro["description"].strip(), f"{macro['name']} has no description"
    # Materializations take model config, not arguments: their options are typed tables.
    for kind in ("table", "incremental", "scd2"):
        macro = manifest["macros"][f"macro.dbt_floe.materialization_{kind}_floe"]
        assert "| option | type | meaning |" in macro["description"], kind
    options = manifest["macros"]["macro.dbt_floe.materialization_incremental_floe"]["description"]
    assert "| `on_schema_change` | string |" in options
    assert "| `write_mode` | string |" in options


class TestSparkJobsCarryTheirNodeFloe:
    """Each Spark job names the dbt node it ran for (its job group), SQL and Python alike."""

    @pytest.fixture(scope="class")
    def models(self):
        return {
            "tagged_sql.sql": "{{ config(materialized='table') }} select 1 as id",
            "tagged_py.py": (
                "def model(dbt, session):\n"
                "    dbt.config(materialized='table')\n"
                "    return session.range(3).selectExpr('id * 2 as id')\n"
            ),
            "schema.yml": (
                "version: 2\nmodels:\n  - name: tagged_sql\n"
                "    columns:\n      - name: id\n        data_tests: [not_null]\n"
            ),
        }

    def test_jobs_are_grouped_by_node(self, project, spark):
        results = run_dbt(["build"])
        tracker = spark.sparkContext.statusTracker()
        by_node = {
            r.node.unique_id: set(tracker.getJobIdsForGroup(r.node.unique_id)) for r in results
        }
        models = {node.rsplit(".", 1)[1] for node in by_node if node.startswith("model.")}
        assert models == {"tagged_sql", "tagged_py"}
        assert any(node.startswith("test.") for node in by_node)
        assert all(by_node.values()), {node: len(ids) for node, ids in by_node.items()}
        # a node's group ends with it: this thread's next jobs are not dbt's
        assert spark.sparkContext.getLocalProperty("spark.jobGroup.id") is None

"""floe's seed materialization: one DataFrame write per seed, on real Iceberg tables.

The fixture project (tests/materializations/fixtures/seed_project) is copied per test,
so a test can edit its CSVs.
"""

from __future__ import annotations

import datetime as dt
import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt
from tests.helpers import current_snapshot

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "seed_project"


@pytest.fixture
def seeds(lakehouse, tmp_path):
    project = tmp_path / "seed_project"
    shutil.copytree(FIXTURE, project)

    def run(*args: str, ok: bool = True):
        result = run_dbt(
            ["seed", *args],
            project=project,
            profiles_dir=Path(__file__).parents[2] / "profiles",
            target_path=tmp_path / "target",
            quiet=True,
        )
        if ok:
            assert result.success, result.failures or result.exception
        else:
            assert not result.success, "dbt seed should have failed"
        return result

    run.project = project  # type: ignore[attr-defined]
    return run


def _snapshot_count(spark, table: str) -> int:
    return spark.sql(f"select count(*) from {table}.snapshots").first()[0]


def test_types_from_column_types_and_inference(spark, seeds):
    seeds()
    types = dict(spark.table("staging.people").dtypes)
    assert types == {
        "id": "int",  # column_types
        "name": "string",
        "joined": "date",
        "joined_at": "timestamp",
        "score": "decimal(10,2)",  # column_types
        "active": "boolean",
        "code": "string",  # column_types keeps the leading zeros
    }
    rows = {r.id: r.asDict() for r in spark.table("staging.people").collect()}
    assert rows[1] == {
        "id": 1,
        "name": "Ada",
        "joined": dt.date(2022, 7, 1),
        "joined_at": dt.datetime(2022, 7, 1, 10, 0),
        "score": Decimal("12.50"),
        "active": True,
        "code": "007",
    }
    assert rows[2]["score"] == Decimal("7.00") and rows[2]["code"] == "010"
    # quotes, commas and backslashes land as they are; empty cells are NULL
    assert rows[3]["name"] == "O'Brien, \\ Ann"
    assert all(rows[3][c] is None for c in ("joined", "joined_at", "score", "active", "code"))
    # a custom schema per seed; Iceberg format 2 without any file_format
    countries = spark.table("reference.countries")
    assert countries.count() == 2
    # shapes the fast path leaves to agate's own tester: grouped numbers, ISO 'T' times
    assert dict(countries.dtypes)["area"] == "bigint", countries.dtypes
    assert dict(countries.dtypes)["founded"] == "timestamp", countries.dtypes
    de = countries.where("iso = 'DE'").first()
    assert de.area == 357592 and de.founded == dt.datetime(1949, 5, 23)
    props = {r.key: r.value for r in spark.sql("show tblproperties staging.people").collect()}
    assert props["format-version"] == "2"
    assert _snapshot_count(spark, "staging.people") == 1, "one commit per seed"


def test_reseed_unchanged_commits_nothing_changed_replaces_in_one_commit(spark, seeds):
    seeds()
    first = current_snapshot(spark, "staging.people")
    seeds()
    assert current_snapshot(spark, "staging.people") == first, "same CSV: nothing committed"

    csv = seeds.project / "seeds" / "people.csv"
    lines = csv.read_text().splitlines()
    csv.write_text("\n".join([lines[0], lines[1], "4,Linus,2022-07-04,,1.25,true,x"]) + "\n")
    seeds()
    assert {r.id for r in spark.table("staging.people").collect()} == {1, 4}
    assert _snapshot_count(spark, "staging.people") == 2, "a re-seed is one more commit"
    # history is kept: the first load is still readable
    old = spark.sql(f"select count(*) from staging.people version as of {first}").first()[0]
    assert old == 3


def test_full_refresh_follows_a_changed_header_and_types(spark, seeds):
    seeds()
    csv = seeds.project / "seeds" / "countries.csv"
    csv.write_text("iso,name,population\nDE,Germany,84\nIT,Italy,59\n")
    seeds("--full-refresh")
    assert dict(spark.table("reference.countries").dtypes) == {
        "iso": "string",
        "name": "string",
        "population": "bigint",
    }
    assert {r.iso: r.population for r in spark.table("reference.countries").collect()} == {
        "DE": 84,
        "IT": 59,
    }


def test_a_value_its_type_cannot_hold_fails_naming_it(spark, seeds):
    csv = seeds.project / "seeds" / "people.csv"
    csv.write_text("id,name,joined,joined_at,score,active,code\nx1,A,,,,,\n")
    run = seeds("-s", "people", ok=False)
    message = " ".join(run.failures) or str(run.exception)
    assert "'id'" in message and "'x1'" in message and "int" in message, message
    assert not spark.catalog.tableExists("staging.people"), "nothing committed"


def test_a_seed_named_with_dots_loads_and_reseeds(spark, seeds):
    (seeds.project / "seeds" / "rates.by.day.csv").write_text("day,rate\n2024-01-01,1.5\n")
    seeds("-s", "rates.by.day")
    table = "staging.`rates.by.day`"
    assert [tuple(r) for r in spark.table(table).collect()] == [(dt.date(2024, 1, 1), 1.5)]
    first = current_snapshot(spark, table)
    seeds("-s", "rates.by.day")  # found again in the catalog: unchanged, nothing committed
    assert current_snapshot(spark, table) == first
    assert not spark.catalog.tableExists("staging.rates"), "not read as a three-part name"


def test_an_empty_delimiter_is_a_compilation_error(spark, seeds):
    yml = seeds.project / "seeds" / "_seeds.yml"
    yml.write_text("seeds:\n  - name: people\n    config:\n      delimiter: ''\n")
    run = seeds("-s", "people", ok=False)
    message = " ".join(run.failures) or str(run.exception)
    assert "Compilation Error" in message and "1-character" in message, message
    assert not spark.catalog.tableExists("staging.people"), "nothing committed"


def test_a_wrong_delimiter_with_unquoted_columns_fails_as_a_syntax_error(spark, seeds):
    yml = seeds.project / "seeds" / "_seeds.yml"
    yml.write_text(
        "seeds:\n  - name: people\n    config:\n      delimiter: ';'\n      quote_columns: false\n"
    )
    run = seeds("-s", "people", ok=False)
    message = " ".join(run.failures) or str(run.exception)
    assert "syntax error" in message and "delimiter" in message, message
    assert not spark.catalog.tableExists("staging.people"), "nothing committed"
    # quoted (dbt's default) the same header is one odd but legal column name
    yml.write_text("seeds:\n  - name: people\n    config:\n      delimiter: ';'\n")
    seeds("-s", "people")
    assert len(spark.table("staging.people").columns) == 1

"""`dbt clone` on Iceberg: a table registered on the source's snapshot, no file copied.

The fixture (tests/materializations/fixtures/clone_project) builds a table, an
incremental model and a view in `marts` from raw.clone_orders, which the tests write;
`dbt clone --state` then clones them into `dev_marts` (the slim-CI schema prefix,
`--vars {schema_prefix: dev_}`), as docs/decisions/0042-dbt-clone-on-iceberg.md
describes.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "clone_project"
DEV = {"schema_prefix": "dev_"}
TABLES = ("clone_orders_all", "clone_orders_inc")
FIRST = [(1, 50), (2, 150), (3, 250)]


@pytest.fixture
def clone_dbt(lakehouse, dbt_target_path: Path, tmp_path: Path):
    target = dbt_target_path / "clonefixture"

    def run(*args: str, vars: dict | None = None, ok: bool = True):
        result = run_dbt(list(args), vars=vars, project=FIXTURE, target_path=target, quiet=True)
        assert result.success == ok, result.failures or result.exception or "should fail"
        return result

    def save_state() -> str:
        state = tmp_path / "state"
        state.mkdir(exist_ok=True)
        shutil.copyfile(target / "manifest.json", state / "manifest.json")
        return str(state)

    run.save_state = save_state  # type: ignore[attr-defined]
    return run


def _orders(spark, rows: list[tuple[int, int]]) -> None:
    frame = spark.createDataFrame(rows, "id int, amount int")
    frame.writeTo("raw.clone_orders").using("iceberg").createOrReplace()


def _rows(spark, table: str) -> list[tuple]:
    return sorted(tuple(r) for r in spark.table(table).collect())


def _data_files(spark, table: str) -> set[str]:
    return {r[0] for r in spark.sql(f"select file_path from {table}.files").collect()}


def _location(spark, table: str) -> Path:
    row = spark.sql(f"describe table extended {table}").where("col_name = 'Location'").first()
    return Path(row.data_type.removeprefix("file:"))


def _tags(spark, table: str) -> dict[str, int]:
    rows = spark.sql(f"select name, snapshot_id from {table}.refs where type = 'TAG'").collect()
    return {r[0]: r[1] for r in rows}


def _current(spark, table: str) -> int:
    return spark.sql(
        f"select snapshot_id from {table}.snapshots order by committed_at desc limit 1"
    ).first()[0]


def _backdate(directory: Path, days: int = 10) -> None:
    """Every file under ``directory`` looks ``days`` old: orphan removal may take any."""
    then = time.time() - days * 86400
    for path in directory.rglob("*"):
        if path.is_file():
            os.utime(path, (then, then))


def test_clone_copies_no_file_and_survives_maintenance_of_both_sides(spark, lakehouse, clone_dbt):
    from click.testing import CliRunner

    from floe.cli import main

    _orders(spark, FIRST)
    clone_dbt("run")
    state = clone_dbt.save_state()
    results = clone_dbt("clone", "--state", state, vars=DEV)
    assert len(results.result) == 3

    # the shared session's temporary views are listed in every namespace: leave them out
    views = {
        r.viewName for r in spark.sql("show views in dev_marts").collect() if not r.isTemporary
    }
    assert views == {"clone_orders_big"}
    for name in TABLES:
        assert _rows(spark, f"dev_marts.{name}") == FIRST
        # the clone reads the source's files where they are: nothing was copied
        assert _data_files(spark, f"dev_marts.{name}") == _data_files(spark, f"marts.{name}")
        assert not list((_location(spark, f"dev_marts.{name}")).rglob("*.parquet"))
    assert _rows(spark, "dev_marts.clone_orders_big") == [(2, 150), (3, 250)]
    cloned = _current(spark, "marts.clone_orders_all")

    # Both sides move on: production rebuilds and merges, the clone merges its own rows.
    second = [*FIRST, (4, 400)]
    _orders(spark, second)
    clone_dbt("run")
    clone_dbt("run")
    _orders(spark, [*second, (5, 500)])
    clone_dbt("run", "-s", "clone_orders_inc", vars=DEV)
    clone_location = _location(spark, "dev_marts.clone_orders_inc")
    assert list(clone_location.rglob("*.parquet")), "the clone writes under its own location"

    # Maintenance as strict as it gets on both sides: keep one snapshot, any age, and
    # every file old enough for orphan removal.
    tables = [f"{schema}.{name}" for schema in ("marts", "dev_marts") for name in TABLES]
    for table in tables:
        spark.sql(
            f"alter table {table} set tblproperties ("
            "'history.expire.min-snapshots-to-keep' = '1', "
            "'history.expire.max-snapshot-age-ms' = '0')"
        )
    # a tag whose clone never registered (its register_table failed): it would keep the
    # snapshot's files forever; maintenance drops it and keeps the live clone's tag
    spark.sql("alter table marts.clone_orders_inc create tag floe_clone__dev_marts__never_made")
    _backdate(Path(lakehouse.warehouse.removeprefix("file:").removeprefix("//")))
    args = ["maintain", "--env-max-age-days", "0"]
    for table in tables:
        args += ["--table", table]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "expire_snapshots" in out, out  # production did expire snapshots
    assert out.count("expiry and orphan removal skipped: a clone of marts.") == 2, out

    snapshots = {
        r[0]
        for r in spark.sql("select snapshot_id from marts.clone_orders_all.snapshots").collect()
    }
    assert cloned in snapshots, "the tag keeps the cloned snapshot through expiry"
    assert _tags(spark, "marts.clone_orders_all") == {
        "floe_clone__dev_marts__clone_orders_all": cloned
    }
    assert list(_tags(spark, "marts.clone_orders_inc")) == [
        "floe_clone__dev_marts__clone_orders_inc"
    ]
    assert out.count("stale clone tags dropped: 1") == 1, out
    assert _rows(spark, "marts.clone_orders_all") == second
    assert _rows(spark, "marts.clone_orders_inc") == second
    assert _rows(spark, "dev_marts.clone_orders_all") == FIRST
    assert _rows(spark, "dev_marts.clone_orders_inc") == sorted([*second, (5, 500)])
    spark.catalog.clearCache()
    for table in tables:  # every file read: a deleted one fails the count
        spark.table(table).count()


def test_clone_is_a_no_op_then_replaced_then_released(spark, lakehouse, clone_dbt):
    _orders(spark, FIRST)
    clone_dbt("run")
    state = clone_dbt.save_state()
    clone_dbt("clone", "--state", state, vars=DEV)
    first_location = _location(spark, "dev_marts.clone_orders_all")
    source_files = _data_files(spark, "marts.clone_orders_all")

    again = clone_dbt("clone", "--state", state, vars=DEV)
    assert all("no-op" in r.message.lower() for r in again.result)

    # --full-refresh: a new clone of production's current state; the old one's own
    # location goes, production's files stay, one tag per clone
    _orders(spark, [*FIRST, (4, 400)])
    clone_dbt("run")
    clone_dbt("clone", "--state", state, "--full-refresh", vars=DEV)
    assert not first_location.exists()
    assert _rows(spark, "dev_marts.clone_orders_all") == [*FIRST, (4, 400)]
    assert _tags(spark, "marts.clone_orders_all") == {
        "floe_clone__dev_marts__clone_orders_all": _current(spark, "marts.clone_orders_all")
    }
    assert all(Path(f.removeprefix("file:")).exists() for f in source_files)

    # An incremental full refresh in dev drops the clone: its tag on production goes,
    # production's files stay and read.
    clone_dbt("run", "-s", "clone_orders_inc", "--full-refresh", vars=DEV)
    assert _tags(spark, "marts.clone_orders_inc") == {}
    props = {r[0] for r in spark.sql("show tblproperties dev_marts.clone_orders_inc").collect()}
    assert "floe.clone.source" not in props, "a full refresh builds a table of its own"
    assert _rows(spark, "marts.clone_orders_inc") == [*FIRST, (4, 400)]

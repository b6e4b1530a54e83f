"""floe's snapshot materialization against an oracle, every run done twice.

The source (raw.snap_src: tenants a and b; raw.snap_src_a: tenant a) is rewritten
state by state; after each state every snapshot of
tests/materializations/fixtures/snapshot_project runs, is compared with a
plain-Python oracle of dbt's snapshot semantics, and runs again: the second run must
commit nothing.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from floe.dbt_runner import run_dbt
from tests.helpers import current_snapshot

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "snapshot_project"
FAR = dt.datetime(9999, 12, 31)
T = [dt.datetime(2022, 7, d, 8, 0) for d in range(1, 6)]

SOURCE_COLUMNS = ["tenant", "id", "name", "city", "updated_at"]
# (tenant, id, name, city, updated_at[, tier]) per state; states 3+ have a `tier` column
STATES: list[list[tuple]] = [
    [("a", 1, "Ada", "Berlin", T[0]), ("a", 2, "Bob", "Paris", T[0]), ("b", 1, "Cy", "Rome", T[0])],
    # a1 changed, a2 deleted, a3 new, b1 unchanged
    [("a", 1, "Ada2", "Berlin", T[1]), ("b", 1, "Cy", "Rome", T[0]), ("a", 3, "Di", None, T[1])],
    # a2 comes back, a3 deleted, b1 changed, a1 unchanged
    [
        ("a", 1, "Ada2", "Berlin", T[1]),
        ("a", 2, "Bob", "Paris", T[2]),
        ("b", 1, "Cy", "Roma", T[2]),
    ],
    # a column appears in the source; a1 changes only in it (not a checked column)
    [
        ("a", 1, "Ada2", "Berlin", T[3], "gold"),
        ("a", 2, "Bob", "Paris", T[2], None),
        ("b", 1, "Cy", "Roma", T[2], "tin"),
    ],
]

DBT_NAMES = ("dbt_valid_from", "dbt_valid_to", "dbt_scd_id", "dbt_updated_at", "dbt_is_deleted")

CONFIGS: dict[str, dict[str, Any]] = {
    "snap_ts": dict(
        strategy="timestamp",
        keys=["id"],
        hard_deletes="ignore",
        current=None,
        names=DBT_NAMES,
        tenant="a",
    ),
    "snap_ts_invalidate": dict(
        strategy="timestamp",
        keys=["id"],
        hard_deletes="invalidate",
        current=FAR,
        names=DBT_NAMES,
        tenant="a",
    ),
    "snap_check": dict(
        strategy="check",
        keys=["tenant", "id"],
        hard_deletes="new_record",
        current=FAR,
        check=["name", "city"],
        names=("eff_from", "eff_to", "version_id", "changed_at", "deleted_flag"),
        tenant=None,
    ),
}


def _write_state(spark, rows: list[tuple]) -> None:
    columns = SOURCE_COLUMNS + (["tier"] if len(rows[0]) > 5 else [])
    types = "tenant string, id int, name string, city string, updated_at timestamp"
    types += ", tier string" if "tier" in columns else ""
    frame = spark.createDataFrame(rows, types)
    frame.writeTo("raw.snap_src").using("iceberg").createOrReplace()
    frame.where("tenant = 'a'").writeTo("raw.snap_src_a").using("iceberg").createOrReplace()


def _oracle(name: str, states: list[list[tuple]]) -> list[tuple]:
    """dbt's snapshot semantics, times as source timestamps or ('run', i)."""
    cfg = CONFIGS[name]
    versions: list[dict] = []
    for run, state in enumerate(states):
        now = ("run", run)
        rows = [
            dict(zip([*SOURCE_COLUMNS, "tier"], r + (None,) * (6 - len(r)), strict=True))
            for r in state
            if cfg["tenant"] is None or r[0] == cfg["tenant"]
        ]
        current = {v["key"]: v for v in versions if v["to"] is None}
        seen = set()
        for row in rows:
            key = tuple(row[k] for k in cfg["keys"])
            seen.add(key)
            start = row["updated_at"] if cfg["strategy"] == "timestamp" else now
            cur = current.get(key)
            if cur is not None and not cur["deleted"]:
                if cfg["strategy"] == "timestamp":
                    changed = cur["from"] < row["updated_at"]
                else:
                    changed = any(cur["data"][c] != row[c] for c in cfg["check"])
                if not changed:
                    continue
            if cur is not None:
                cur["to"] = start
            versions.append(
                dict(data=row, key=key, **{"from": start, "to": None}, updated=start, deleted=False)
            )
        if run and cfg["hard_deletes"] != "ignore":
            for key, cur in current.items():
                if key in seen or cur["deleted"]:
                    continue
                cur["to"] = now
                if cfg["hard_deletes"] == "new_record":
                    versions.append(
                        dict(
                            data=cur["data"],
                            key=key,
                            **{"from": now, "to": None},
                            updated=now,
                            deleted=True,
                        )
                    )
    out = []
    for v in versions:
        data = tuple(v["data"][c] for c in ("tenant", "id", "name", "city", "updated_at"))
        deleted = (
            ("True" if v["deleted"] else "False") if cfg["hard_deletes"] == "new_record" else None
        )
        out.append((*data, v["data"]["tier"], v["from"], v["to"], v["updated"], deleted))
    return sorted(out, key=repr)


def _actual(spark, name: str, windows: list[tuple[dt.datetime, dt.datetime]]) -> list[tuple]:
    cfg = CONFIGS[name]
    vfrom, vto, scd, upd, deleted = cfg["names"]
    table = spark.table(f"snapshots.{name}")
    rows = table.collect()
    ids = [r[scd] for r in rows]
    assert len(set(ids)) == len(ids) and None not in ids, f"{name}: scd ids not unique"

    def norm(value: Any) -> Any:
        if cfg["current"] is not None and value == cfg["current"]:
            return None
        if value is None or value in T:
            return value
        for run, (start, end) in enumerate(windows):
            if start <= value <= end:
                return ("run", run)
        raise AssertionError(f"{name}: time {value} is no source time and in no run")

    out = []
    for r in rows:
        d = r.asDict()
        out.append(
            (
                d["tenant"],
                d["id"],
                d["name"],
                d["city"],
                d["updated_at"],
                d.get("tier"),
                norm(d[vfrom]),
                norm(d[vto]),
                norm(d[upd]),
                d.get(deleted) if cfg["hard_deletes"] == "new_record" else None,
            )
        )
    return sorted(out, key=repr)


def test_snapshots_match_the_oracle_and_rerun_commits_nothing(spark, lakehouse, dbt_target_path):
    def snapshot() -> tuple[dt.datetime, dt.datetime]:
        start = dt.datetime.now(dt.UTC).replace(tzinfo=None) - dt.timedelta(seconds=1)
        result = run_dbt(
            ["snapshot"], project=FIXTURE, target_path=dbt_target_path / "snapfixture", quiet=True
        )
        assert result.success, result.failures or result.exception
        return start, dt.datetime.now(dt.UTC).replace(tzinfo=None) + dt.timedelta(seconds=1)

    windows: list[tuple[dt.datetime, dt.datetime]] = []
    for number, state in enumerate(STATES):
        _write_state(spark, state)
        windows.append(snapshot())
        for name in CONFIGS:
            assert _actual(spark, name, windows) == _oracle(name, STATES[: number + 1]), (
                f"{name} after state {number}"
            )
        before = {name: current_snapshot(spark, f"snapshots.{name}") for name in CONFIGS}
        snapshot()  # the same source again
        after = {name: current_snapshot(spark, f"snapshots.{name}") for name in CONFIGS}
        assert after == before, f"a re-run with no change committed (state {number})"

    # the deletion row keeps its key and last values
    deleted = spark.table("snapshots.snap_check").where("deleted_flag = 'True'").collect()
    assert {(r.tenant, r.id, r.name) for r in deleted} == {("a", 2, "Bob"), ("a", 3, "Di")}
    # no file_format anywhere: Iceberg tables
    assert spark.sql("select count(*) from snapshots.snap_ts.snapshots").first()[0] >= 1

"""dim_customer through the scd2 materialization, against real Iceberg tables.

One handcrafted history exercises every edge case of docs/scd2.md in a handful of
builds; each step is compared with the plain-Python oracle (tests/models/scd2_oracle.py)
and with explicit expectations. A generator-made history checks the same at
random and full refresh against the incremental sequence.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest

from floe.generator import GenerateOptions, generate
from floe.runtime.settled import RowsOf, is_settled
from tests.helpers import executed_plans, last_execution_id
from tests.models.scd2_oracle import SENTINEL, expected_dim

pytestmark = pytest.mark.integration

DIM = "marts.dim_customer"
LEDGER = "audit.floe_scd2_ledger"
SELECT = "+dim_customer"
MASTER = ["customer_id", "first_name", "last_name", "employer_name", "row_audit_ts"]
ADDRESS = ["customer_id", "email_id", "city", "country", "row_audit_ts"]
# The scd2 memo of dim_customer: its loads model, the ledger, the table; no run_date.
SETTLED = (
    "scd2",
    DIM,
    ["intermediate.int_customers__loads", RowsOf(LEDGER, "model", DIM), DIM],
    "run_date=",
)


def land(landing: Path, day: str, kind: str, master, address, part: str = "part-00000") -> None:
    """Write one load (both tables) the way the landing contract says: CSVs, then manifest."""
    status = kind == "changes"
    for table, header, rows in (
        ("customer_master", MASTER, master),
        ("customer_address", ADDRESS, address),
    ):
        folder = landing / "customers" / table / f"load_date={day}"
        folder.mkdir(parents=True, exist_ok=True)
        cols = [*header, "rec_source_status"] if status else header
        lines = [",".join(cols)] + [",".join("" if v is None else str(v) for v in r) for r in rows]
        (folder / f"{part}.csv").write_text("\n".join(lines) + "\n")
        (folder / "_manifest.json").write_text(json.dumps({"kind": kind}))


def dim_rows(spark) -> list[tuple]:
    return [tuple(r) for r in spark.sql(f"select * from {DIM} order by customer_sk").collect()]


def versions(rows, customer_id):
    return [(r[2:8], r[8], r[9]) for r in rows if r[1] == customer_id]


def ledger_loads(spark) -> list[str]:
    return [
        r[0]
        for r in spark.sql(
            f"select distinct load_date from {LEDGER} where model = '{DIM}' order by 1"
        ).collect()
    ]


def snapshot_id(spark) -> int:
    return spark.sql(
        f"select snapshot_id from {DIM}.snapshots order by committed_at desc limit 1"
    ).collect()[0][0]


def assert_invariants(rows) -> None:
    assert len({r[0] for r in rows}) == len(rows), "customer_sk must be unique"
    assert all(r[9] >= r[8] for r in rows), "no row may have rec_exp_dt < rec_eff_dt"
    current = [r[1] for r in rows if r[9] == SENTINEL]
    assert len(current) == len(set(current)), "one current row per key"


D1, D2, D3 = "2022-07-01", "2022-07-02", "2022-07-03"
T1, T2, T3 = (f"{d} 08:00:00" for d in (D1, D2, D3))


def test_scd2_history_edge_cases(spark, lakehouse, dbt):
    landing = lakehouse.landing
    land(
        landing,
        D1,
        "full",
        master=[
            (1, "Ann", "Lee", "Acme", T1),
            (2, "Bob", "Ray", "Initech", T1),
            (3, "Cy", "Doe", None, T1),  # NULL attribute, and no address at all
            (4, "Dee", "Fox", "Acme", T1),  # two rows, same row_audit_ts: a tie
            (4, "Dee", "Fox", "Zeta", T1),
            (5, "Eve", "Kim", "Globex", T1),
        ],
        address=[
            (1, "ann@x.org", "Paris", "FR", T1),
            (2, "bob@x.org", "Oslo", "NO", T1),
            (4, "dee@x.org", "Bonn", "DE", T1),
            (5, "eve@x.org", "Rome", "IT", T1),
        ],
    )
    land(
        landing,
        D2,
        "changes",
        master=[
            (1, "Ann", "Lee-Smith", "Acme", T2, "U"),
            (2, "Bob", "Ray", "Initech", T2, "D"),  # delete by status in a change load
            (6, "Fay", "Ng", "Acme", T2, "I"),
        ],
        address=[
            (5, "eve@y.org", "Milan", "IT", T2, "U"),  # address-only change
            (6, "fay@x.org", "Lima", "PE", T2, "I"),
        ],
    )
    land(
        landing,
        D3,
        "full",
        master=[  # 5 is absent: deleted by absence from a full extract; 2 returns
            (1, "Ann", "Lee-Smith", "Acme", T3),
            (2, "Bob", "Ray", "Hooli", T3),
            (3, "Cy", "Doe", None, T3),
            (4, "Dee", "Fox", "Zeta", T3),
            (6, "Fay", "Ng", "Acme", T3),
        ],
        address=[
            (1, "ann@x.org", "Paris", "FR", T3),
            (2, "bob@x.org", "Oslo", "NO", T3),
            (4, "dee@x.org", "Bonn", "DE", T3),
            (6, "fay@x.org", "Lima", "PE", T3),
        ],
    )

    # 1. run_date applies loads up to that date only: the initial load.
    dbt(["build", "-s", SELECT], vars={"run_date": D1})
    rows = dim_rows(spark)
    assert rows == expected_dim(landing, up_to=date(2022, 7, 1))
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]  # 1..N in customer_id order
    assert {r[8] for r in rows} == {date(2022, 7, 1)}  # scd2_initial_eff_date
    assert rows[3][4] == "Zeta"  # the tie is broken on the values, not on file order
    assert rows[2][4:8] == (None, None, None, None)  # NULLs kept, no address

    # 2. Away for two days: one build applies both pending loads, each with its date.
    since = last_execution_id(spark)
    dbt(["build", "-s", SELECT])
    # one MERGE, its table side pruned by a Bloom filter of the versions' keys
    # (merge-on-read; docs/decisions/0020-runtime-filtered-merges.md)
    merges = [p for p in executed_plans(spark, since).values() if "MergeRows" in p]
    assert len(merges) == 1 and "might_contain" in merges[0], merges
    rows = dim_rows(spark)
    assert rows == expected_dim(landing)
    assert_invariants(rows)
    one = versions(rows, 1)
    assert [(v[1], v[2]) for v in one] == [
        (date(2022, 7, 1), date(2022, 7, 1)),
        (date(2022, 7, 2), SENTINEL),
    ]
    bob = versions(rows, 2)  # deleted by D on 07-02, back in the 07-03 full extract
    assert [(v[1], v[2]) for v in bob] == [
        (date(2022, 7, 1), date(2022, 7, 1)),
        (date(2022, 7, 3), SENTINEL),
    ]
    eve = versions(rows, 5)  # address change on 07-02, absent from the 07-03 extract
    assert [(v[1], v[2]) for v in eve] == [
        (date(2022, 7, 1), date(2022, 7, 1)),
        (date(2022, 7, 2), date(2022, 7, 2)),
    ]
    assert eve[1][0][3] == "eve@y.org"
    assert len(versions(rows, 3)) == 1 and len(versions(rows, 4)) == 1

    # 3. The same input again: nothing changes, not even the snapshot.
    before = snapshot_id(spark)
    dbt(["build", "-s", SELECT])
    assert snapshot_id(spark) == before
    assert dim_rows(spark) == rows
    # ... and it was answered from the inputs' fingerprints (docs/scd2.md, "Nothing pending").
    assert is_settled(spark, lakehouse, *SETTLED)

    # 3b. A build that died between its MERGE and its ledger insert: the loads are in the
    # table but not in the ledger. The next build records them instead of applying them
    # again (which would compare load 07-02 with the state after 07-03).
    spark.sql(f"delete from {LEDGER} where model = '{DIM}' and load_date in ('{D2}', '{D3}')")
    assert not is_settled(spark, lakehouse, *SETTLED)  # the ledger changed
    dbt(["build", "-s", SELECT])
    assert snapshot_id(spark) == before
    assert dim_rows(spark) == rows
    assert ledger_loads(spark) == [D1, D2, D3]

    # 4. A file lands late into the last applied load: that day's version is replaced.
    land(
        landing,
        D3,
        "full",
        master=[
            (1, "Ann", "Lee-Jones", "Acme", "2022-07-03 09:00:00"),
            (3, "Cy", "Doe", "Umbrella", "2022-07-03 09:00:00"),
        ],
        address=[],
        part="part-00001",
    )
    dbt(["build", "-s", SELECT])
    corrected = dim_rows(spark)
    assert corrected == expected_dim(landing)
    assert_invariants(corrected)
    assert [v[0][1] for v in versions(corrected, 1)] == ["Lee", "Lee-Smith", "Lee-Jones"]
    assert versions(corrected, 1)[1][2] == date(2022, 7, 2)  # expired the day before 07-03

    # 5. A full refresh replays every load and yields the same table, keys included.
    dbt(["build", "-s", "dim_customer", "--full-refresh"])
    assert dim_rows(spark) == corrected

    # 6. A load older than the last applied one is refused, naming both dates.
    land(
        landing,
        D2,
        "changes",
        master=[(7, "Gus", "Orr", "Acme", T2, "I")],
        address=[],
        part="part-00001",
    )
    run = dbt(["build", "-s", SELECT], expect_success=False)
    assert not run.success
    message = " ".join(run.failures)
    assert "2022-07-02" in message and "2022-07-03" in message and "full-refresh" in message
    assert dim_rows(spark) == corrected


def test_generated_history_matches_oracle_and_full_refresh(spark, lakehouse, dbt):
    generate(GenerateOptions(landing=lakehouse.landing, days=6, scale=60), ["customers"])
    dbt(["build", "-s", SELECT])
    incremental = dim_rows(spark)
    assert incremental == expected_dim(lakehouse.landing)
    assert_invariants(incremental)
    # `dbt show` of the dimension shows its rows, not the (empty) pending-load query
    shown = dbt(["show", "-s", "dim_customer", "--limit", "-1"]).result.results[0]
    assert len(shown.agate_table.rows) == len(incremental) > 0
    assert "customer_sk" in shown.agate_table.column_names
    # Deletes and a returning customer happen in the generated history.
    closed = [r for r in incremental if r[9] != SENTINEL]
    assert closed
    dbt(["build", "-s", "dim_customer", "--full-refresh"])
    assert dim_rows(spark) == incremental


def test_change_loads_caught_up_in_one_build_match_the_oracle(spark, lakehouse, dbt):
    """Two pending change loads on a built table: their stack is read once (frozen,
    docs/scd2.md "Catch-up cost") and the history equals applying them one by one."""
    landing = lakehouse.landing
    land(
        landing,
        D1,
        "full",
        master=[(1, "Ann", "Lee", "Acme", T1), (2, "Bob", "Ray", "Initech", T1)],
        address=[(1, "ann@x.org", "Paris", "FR", T1), (2, "bob@x.org", "Oslo", "NO", T1)],
    )
    dbt(["build", "-s", SELECT])
    land(
        landing,
        D2,
        "changes",
        master=[(1, "Ann", "Lee-Smith", "Acme", T2, "U"), (3, "Cy", "Doe", "Hooli", T2, "I")],
        address=[(2, "bob@y.org", "Bergen", "NO", T2, "U")],
    )
    land(
        landing,
        D3,
        "changes",
        master=[(1, "Ann", "Lee-Jones", "Acme", T3, "U"), (2, "Bob", "Ray", "Initech", T3, "D")],
        address=[],
    )
    since = last_execution_id(spark)
    dbt(["build", "-s", SELECT])
    merges = [p for p in executed_plans(spark, since).values() if "MergeRows" in p]
    assert len(merges) == 1, merges  # both loads in one MERGE
    rows = dim_rows(spark)
    assert rows == expected_dim(landing)
    assert_invariants(rows)
    assert [v[0][1] for v in versions(rows, 1)] == ["Lee", "Lee-Smith", "Lee-Jones"]
    assert versions(rows, 2)[-1][2] == date(2022, 7, 2)  # deleted on 07-03
    assert ledger_loads(spark) == [D1, D2, D3]
    dbt(["build", "-s", "dim_customer", "--full-refresh"])
    assert dim_rows(spark) == rows

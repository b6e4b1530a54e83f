"""The acceptance test of erasure (docs/privacy.md): a subject present in raw, raw.quarantine,
staging, marts.dim_customer's SCD2 history, marts.fct_customer_purchases (merge-on-read),
the masked twins and a landed file is erased; afterwards no Parquet file under the
warehouse holds any of the subject's values, every other row is unchanged, a re-run
changes nothing, and audit.erasure_log has exactly one record. Then a rectification.

The tests of this module run in order on one warehouse (tests/privacy/conftest.py).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import pytest
from click.testing import CliRunner

from floe.cli import main
from floe.privacy.masking import encrypt_value, hash_value
from floe.privacy.secrets import load_secrets
from tests.helpers import current_snapshot
from tests.privacy.conftest import MARKER, PHONE
from tests.privacy.scanning import KEY_COLUMNS, _texts, find_subject, parquet_files

pytestmark = pytest.mark.integration

SKIP = {"raw.landed_files", "audit.erasure_log"}
EXPECTED_TABLES = {
    "raw.customer_master",
    "raw.customer_address",
    "raw.customer_events",
    "marts.dim_customer",
    "marts.dim_customer_masked",
    "marts.fct_customer_purchases",
    "marts.fct_customer_purchases_masked",
}


def _tables(spark) -> list[str]:
    from floe.runtime.tables import tables_in

    return [t for t in tables_in(spark) if t not in SKIP]


def _key_values(wh, subject_id: int) -> set[Any]:
    secrets = load_secrets(wh.settings)
    text = str(subject_id)
    return {
        subject_id,
        text,
        encrypt_value(text, secrets.key),
        hash_value(text, secrets.salt),
    }


def _is_subject(row: dict[str, Any], keys: set[Any], markers: list[bytes]) -> bool:
    for name, value in row.items():
        if name.lower() in KEY_COLUMNS and value is not None and value in keys:
            return True
        if any(m in t for t in _texts(value) for m in markers):
            return True
    return False


def _rows(spark, table: str, keys: set[Any], markers: list[bytes]) -> tuple[Counter, int]:
    """Every row of ``table`` but the subject's (as JSON, counted), and the subject's count."""
    others: Counter = Counter()
    mine = 0
    for row in spark.table(table).collect():
        data = row.asDict(recursive=True)
        if _is_subject(data, keys, markers):
            mine += 1
        else:
            others[json.dumps(data, sort_keys=True, default=repr)] += 1
    return others, mine


def _snapshots(spark) -> dict[str, Any]:
    return {t: current_snapshot(spark, t) for t in _tables(spark)}


def _forget(wh, *args: str):
    result = CliRunner().invoke(
        main,
        ["forget", "--subject", wh.subject, "--manifest", str(wh.manifest), "--json", *args],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _count_changes(spark) -> int:
    if not spark.catalog.tableExists("raw.landed_file_changes"):
        return 0
    return spark.table("raw.landed_file_changes").count()


def _log(spark) -> list[Any]:
    return spark.table("audit.erasure_log").collect()


@pytest.fixture(scope="module")
def state(spark, subject_warehouse) -> dict[str, Any]:
    """What the subject looks like before anything is erased (module-wide)."""
    wh = subject_warehouse
    sid = wh.subject_id
    emails = {
        r.email_id
        for r in spark.table("raw.customer_address")
        .where(f"customer_id = {sid}")
        .select("email_id")
        .collect()
        if r.email_id
    }
    assert emails, "the subject has e-mail addresses in the master feed"
    markers = [*sorted(emails), MARKER, PHONE]
    keys = _key_values(wh, sid)
    rows = {t: _rows(spark, t, keys, [m.encode() for m in markers]) for t in _tables(spark)}
    return {"markers": markers, "keys": keys, "rows": rows}


def test_the_subject_is_everywhere_before(spark, subject_warehouse, state):
    wh = subject_warehouse
    held = {t for t, (_, mine) in state["rows"].items() if mine}
    assert held >= EXPECTED_TABLES, held
    versions = spark.sql(
        f"select count(*) from marts.dim_customer where customer_id = {wh.subject_id}"
    ).first()[0]
    assert versions > 1, "the subject has SCD2 history"
    quarantined = spark.sql(
        "select count(*) from raw.quarantine where feed = 'customer_events' "
        f"and _source_file like '%{wh.landed_subject_file.name}'"
    ).first()[0]
    assert quarantined == 1
    hits = find_subject(wh.settings.warehouse, state["keys"], state["markers"])
    for name in ("quarantine", "customer_master", "dim_customer", "fct_customer_purchases"):
        assert any(f"/{name}" in path for path, _, _ in hits), (name, hits[:3])


PRIVATE = ("firstname", "lastname", "dateofbirth", "streetaddress", "phonenumber")


def test_analysts_see_no_clear_private_value(spark, subject_warehouse):
    """The masked twin (Spark SQL side) and the masked reader (pyiceberg side) of
    marts.fct_customer_purchases return none of its private values in clear."""
    from floe.privacy.access import MaskedReader

    wh = subject_warehouse
    clear = {
        v
        for r in spark.table("marts.fct_customer_purchases").select(*PRIVATE).collect()
        for v in r
        if v is not None and len(str(v)) > 4
    }
    assert clear
    twin = spark.table("marts.fct_customer_purchases_masked").select(*PRIVATE).collect()
    reader = MaskedReader.open(wh.settings, wh.manifest)
    read = reader.read("marts.fct_customer_purchases").select(list(PRIVATE)).to_pylist()
    assert len(twin) == len(read) > 0
    for row in [r.asDict() for r in twin] + read:
        for value in row.values():
            assert value is None or not any(c in str(value) for c in clear), value


def test_dry_run_lists_what_would_be_removed_and_changes_nothing(spark, subject_warehouse, state):
    wh = subject_warehouse
    before = _snapshots(spark)
    files_before = parquet_files(wh.settings.warehouse)
    landed = wh.landed_subject_file.read_bytes()
    out = _forget(wh, "--dry-run", "--include-landing")
    assert out["status"] == "dry-run"
    listed = {t["table"]: t["rows"] for t in out["tables"]}
    assert set(listed) >= EXPECTED_TABLES
    for table, (_, mine) in state["rows"].items():
        if mine and table != "raw.quarantine":
            assert listed[table] == mine, table
    assert out["quarantine"] == state["rows"]["raw.quarantine"][1] == 1
    paths = {f["path"] for f in out["landed_files"]}
    assert any(p.endswith(wh.landed_subject_file.name) for p in paths), paths
    assert _snapshots(spark) == before
    assert parquet_files(wh.settings.warehouse) == files_before
    assert wh.landed_subject_file.read_bytes() == landed
    assert not spark.catalog.tableExists("audit.erasure_log")


def test_forget_leaves_the_subject_in_no_parquet_file(spark, subject_warehouse, state):
    wh = subject_warehouse
    landed_lines = wh.landed_subject_file.read_bytes().splitlines(keepends=True)
    out = _forget(wh, "--include-landing")
    assert out["status"] == "complete", out

    # -- no Parquet file under the warehouse holds any value of the subject
    assert find_subject(wh.settings.warehouse, state["keys"], state["markers"]) == []

    # -- every other row of every table unchanged; the subject's rows gone
    for table, (others, _) in state["rows"].items():
        now_others, now_mine = _rows(
            spark, table, state["keys"], [m.encode() for m in state["markers"]]
        )
        assert now_mine == 0, table
        assert now_others == others, table

    # -- exactly one log record, complete, with hashed subject and the tables
    log = _log(spark)
    assert len(log) == 1
    row = log[0]
    assert row.status == "complete" and row.operation == "forget"
    # the clear subject is in no field (as a value or a token; snapshot ids, uuids and
    # timestamps may contain its digits by chance, so a bare substring test is flaky)
    clear = re.compile(rf"(?<![0-9A-Za-z]){re.escape(str(wh.subject_id))}(?![0-9A-Za-z])")
    logged_text = json.dumps(row.asDict(recursive=True), default=str)
    assert not clear.search(logged_text), logged_text
    assert row.subject_hash == hash_value(
        f"customer_id={wh.subject_id}", load_secrets(wh.settings).salt
    )
    logged = {t.table_name: t.rows for t in row.tables}
    assert set(logged) >= EXPECTED_TABLES | {"raw.quarantine"}
    for table, (_, mine) in state["rows"].items():
        if mine:
            assert logged[table] == mine, table

    # -- the landed file: the subject's records gone, every other record byte-identical
    after = wh.landed_subject_file.read_bytes().splitlines(keepends=True)
    subject_lines = [line for line in landed_lines if _line_is_subject(line)]
    assert len(subject_lines) == 4  # three good records and the quarantined one
    assert after == [line for line in landed_lines if line not in subject_lines]
    assert any(f["rewritten"] for f in row.asDict(recursive=True)["landed_files"])

    # -- the ingestion ledger still reconciles for the rewritten file
    key = wh.landed_subject_file.relative_to(wh.settings.landing).as_posix()
    ledger = spark.sql(
        f"select loaded, quarantined, records_in, bytes from raw.landed_files "
        f"where _source_file = '{key}'"
    ).first()
    assert (ledger.loaded, ledger.quarantined, ledger.records_in) == (2, 0, 2)
    assert ledger.bytes == wh.landed_subject_file.stat().st_size
    # ... with the mtime precision and checksum format discovery compares against
    # (floe.feeds.ledger.report_changes), so no later build sees the file as changed
    from floe.feeds.files import file_checksum

    recorded = spark.sql(
        "select unix_micros(modified_at) as modified_us, checksum from raw.landed_files "
        "where _source_file = :key",
        args={"key": key},
    ).first()
    assert recorded.modified_us == wh.landed_subject_file.stat().st_mtime_ns // 1000
    assert recorded.checksum == file_checksum(wh.landed_subject_file)


def _line_is_subject(line: bytes) -> bool:
    import base64

    envelope = json.loads(line)
    return MARKER.encode() in base64.b64decode(envelope["data"])


def test_a_second_run_changes_nothing_and_logs_nothing(spark, subject_warehouse, state):
    wh = subject_warehouse
    before = _snapshots(spark)
    out = _forget(wh, "--include-landing")
    assert out["status"] == "noop"
    assert _snapshots(spark) == before
    assert len(_log(spark)) == 1


def test_a_rebuild_does_not_resurrect_the_subject(spark, subject_warehouse, state, dbt):
    from tests.privacy.conftest import SELECT

    changes_before = _count_changes(spark)
    dbt(["build", "-s", *SELECT])
    # the files the erasure rewrote are not reported as changed after ingestion
    assert _count_changes(spark) == changes_before
    for table in state["rows"]:
        _, mine = _rows(spark, table, state["keys"], [m.encode() for m in state["markers"]])
        assert mine == 0, table


def test_rectify_sets_the_value_everywhere_and_purges_the_old_one(spark, subject_warehouse):
    wh = subject_warehouse
    cid = 5050  # a generated customer that also has the fixture's hand-made purchase
    old = {
        r.phonenumber
        for r in spark.sql(
            f"select phonenumber from raw.customer_events where customerid = {cid}"
        ).collect()
    }
    assert old and "000" not in old
    secrets = load_secrets(wh.settings)
    keys = {cid, str(cid), encrypt_value(str(cid), secrets.key)}
    others_before = {
        t: _rows(spark, t, keys, [])[0]
        for t in ("raw.customer_events", "marts.fct_customer_purchases")
    }
    result = CliRunner().invoke(
        main,
        [
            "rectify", "--subject", f"customer_id={cid}", "--set", "phonenumber='000'",
            "--manifest", str(wh.manifest), "--json",
        ],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["status"] == "complete"
    for table in ("raw.customer_events", "marts.fct_customer_purchases"):
        phones = {
            r[0]
            for r in spark.sql(
                f"select phonenumber from {table} where customerid = {cid}"
            ).collect()
        }
        assert phones == {"000"}, table
        assert _rows(spark, table, keys, [])[0] == others_before[table], table
    masked = {
        r[0]
        for r in spark.table("marts.fct_customer_purchases_masked")
        .where(f"customerid = '{encrypt_value(str(cid), secrets.key)}'")
        .select("phonenumber")
        .collect()
    }
    assert masked == {"000"}  # redacted, keeps the last four characters
    # the old numbers are in no Parquet file's phone column any more
    hits = [
        h for h in find_subject(wh.settings.warehouse, set(), sorted(old)) if h[1] == "phonenumber"
    ]
    assert hits == []
    log = [r for r in _log(spark) if r.operation == "rectify"]
    assert len(log) == 1 and log[0].status == "complete"
    assert list(log[0].columns_set) == ["phonenumber"]


def test_the_dbt_run_operation_erases_with_the_same_engine(spark, subject_warehouse, dbt):
    cid = 5051  # a generated customer with one of the fixture's hand-made purchases too
    count = f"select count(*) from raw.customer_events where customerid = {cid}"
    before = spark.sql(count).first()[0]
    assert before > 0
    snapshots = _snapshots(spark)
    dbt(
        [
            "run-operation",
            "privacy_forget",
            "--args",
            f"{{subject: 'customer_id={cid}', dry_run: true}}",
        ]
    )
    assert _snapshots(spark) == snapshots
    failed = dbt(
        ["run-operation", "privacy_forget", "--args", '{subject: "customer_id=5051\' OR 1=1"}'],
        expect_success=False,
    )
    assert not failed.success
    assert _snapshots(spark) == snapshots
    dbt(["run-operation", "privacy_forget", "--args", f"{{subject: 'customer_id={cid}'}}"])
    assert spark.sql(count).first()[0] == 0
    assert (
        spark.sql(
            f"select count(*) from marts.fct_customer_purchases where customerid = '{cid}'"
        ).first()[0]
        == 0
    )
    hashed = hash_value(f"customer_id={cid}", load_secrets(subject_warehouse.settings).salt)
    logged = [r for r in _log(spark) if r.subject_hash == hashed]
    assert len(logged) == 1 and logged[0].status == "complete"


# --------------------------------------------------------------------------- crash safety

# Progress lines `floe forget` prints (stderr) as it enters each step; the test kills
# the whole process (its JVM too) the moment one appears. FLOE_PRIVACY_CRASH_POINTS=all
# (`make test-privacy-crash`) kills at every step, one after the other.
CRASH_POINTS = ["change: ", "hygiene: "]
ALL_CRASH_POINTS = ["journal: ", "change: ", "ledger: ", "hygiene: ", "verify: "]


def _forget_process(wh, subject: str, *args: str):
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = {
        **os.environ,
        "FLOE_HOME": str(wh.settings.home),
        "FLOE_SETTLE_SECONDS": "0",
        "PYSPARK_PYTHON": sys.executable,
    }
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        env.pop(var, None)
    floe = str(Path(sys.executable).parent / "floe")
    command = [floe, "forget", "--subject", subject, "--manifest", str(wh.manifest), *args]
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group: the kill takes its JVM too
    )


def _kill_at(wh, subject: str, point: str) -> bool:
    """Run `floe forget` and SIGKILL it (and its JVM) when it prints ``point``."""
    import os
    import signal

    process = _forget_process(wh, subject, "--json")
    assert process.stderr is not None
    killed = False
    try:
        for line in process.stderr:
            if line.startswith(point):
                os.killpg(process.pid, signal.SIGKILL)
                killed = True
                break
    finally:
        if not killed and process.poll() is None:
            process.wait(timeout=600)
        process.wait(timeout=120)
        if process.stdout:
            process.stdout.close()
        process.stderr.close()
    return killed


def test_forget_killed_at_any_step_then_rerun_completes_and_logs_once(spark, subject_warehouse):
    import os

    from floe.runtime import open_catalog

    wh = subject_warehouse
    cid = wh.other_id
    subject = f"customer_id={cid}"
    emails = sorted(
        r.email_id
        for r in spark.table("raw.customer_address").where(f"customer_id = {cid}").collect()
        if r.email_id
    )
    keys = _key_values(wh, cid)
    assert find_subject(wh.settings.warehouse, keys, emails) != []
    points = (
        ALL_CRASH_POINTS if os.environ.get("FLOE_PRIVACY_CRASH_POINTS") == "all" else CRASH_POINTS
    )
    for point in points:
        assert _kill_at(wh, subject, point), f"floe forget never reached {point!r}"
    process = _forget_process(wh, subject, "--json")
    out, err = process.communicate(timeout=900)
    assert process.returncode == 0, err[-3000:]
    assert json.loads(out)["status"] == "complete"

    assert find_subject(wh.settings.warehouse, keys, emails) == []
    hashed = hash_value(subject, load_secrets(wh.settings).salt)
    log = open_catalog(wh.settings).load_table(("audit", "erasure_log")).scan().to_arrow()
    mine = [r for r in log.to_pylist() if r["subject_hash"] == hashed]
    assert len(mine) == 1 and mine[0]["status"] == "complete", mine
    assert {t["table_name"] for t in mine[0]["tables"]} >= {
        "raw.customer_master",
        "raw.customer_address",
        "marts.dim_customer",
        "marts.dim_customer_masked",
    }
    # (a second run after a complete one is a no-op: test_a_second_run_changes_nothing...)

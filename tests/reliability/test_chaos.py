"""Crashes at any point and concurrent writers leave the same warehouse as one clean build.

One tiny generated landing zone (``FEEDS``) is built three ways against the same
files, each in its own FLOE_HOME:

- *baseline*: one uninterrupted ``dbt build`` (in this process, sharing its Spark);
- *chaos*: the files land in KILLS + 1 slices (hard links, in name order: the order
  the streams were written); after each slice a ``dbt build`` subprocess is SIGKILLed
  (the whole process group, JVM included: a crash, not a shutdown) at a random moment
  (seeded RNG: during Spark start and parse, or shortly after a random node started),
  and every Iceberg table must then open and scan with pyiceberg; after the last
  slice one build runs to completion;
- *concurrent*: a ``dbt build`` subprocess, ``floe stream --available-now`` and a
  ``dbt build`` in this process, started together on one warehouse (they take turns
  on the writer lock).

Last, on the baseline warehouse: a third day lands in a batch stamped with an
``_ingested_at`` older than the applied ones (a batch that started earlier but
committed later, or a clock set back); both watermarks (``fct_customer_purchases``'
``_load_seq > max``, the cdc model ``movies``' ``cdc_unapplied``) must still apply it.
Under the former ``_ingested_at`` watermarks both skipped it for good.

Every table's order-independent checksum (rows and the sum of a hash per row) must
equal the baseline's, ``raw.landed_files`` and ``raw.quarantine`` included. Columns
that legitimately differ are left out (floe.runtime.tables.VOLATILE_COLUMNS: ingest clock
readings, load sequences, run ids), and so are the ``dq`` and ``audit`` schemas
(bookkeeping appended once per run: a killed run that reached its tests appended).
The warehouse's own FLOE_HOME in text (a quarantine detail naming the local schema
registry's file) is compared as a placeholder.

``make test`` kills 5 times during Spark start, raw ingestion and staging; ``make
chaos`` kills FLOE_CHAOS_KILLS times (default 20 there) over every node
(FLOE_CHAOS_NODES=all). FLOE_CHAOS_SEED picks the kill moments. The kill points (which node was running) are
printed with ``-s`` and kept in the test report.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from floe.generator import GenerateOptions, generate
from floe.runtime import Settings, open_catalog, use_settings
from floe.runtime.tables import (
    VOLATILE_COLUMNS,
    TableFingerprint,
    lakehouse_fingerprints,
    spark_fingerprints,
)

pytestmark = [pytest.mark.integration, pytest.mark.chaos]

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
KILLS = int(os.environ.get("FLOE_CHAOS_KILLS") or 5)
SEED = int(os.environ.get("FLOE_CHAOS_SEED") or 16)
# Kill moments are spread over Spark start and the first FLOE_CHAOS_NODES nodes of the
# build ("all": every node). `make test` keeps to the raw ingestion and staging nodes,
# where the ledger / raw / quarantine commits interleave (the final build covers the
# marts); `make chaos` spreads over every node, the mart merges included.
SPREAD = os.environ.get("FLOE_CHAOS_NODES") or "4"
# Two streams: decode, quarantine and the ledgers, an append mart and a cdc mart (both
# watermark filters). Files land in name order, which is time order for streams.
FEEDS = ["streams.customer_events", "streams.movies_cdc"]
SELECT = ["-s", "+fct_customer_purchases", "+movies"]
DAYS, SCALE = 2, 8
COMPARED_SCHEMAS = ("raw", "staging", "intermediate", "marts", "snapshots")
# Left out of the comparison: floe's volatile columns (ingest clock, load sequence: a
# build killed and re-run numbers its batches differently, run and snapshot ids) and
# when a landed file's change was detected.
IGNORED = {**VOLATILE_COLUMNS, "detected_at": "when a landed file's change was seen"}
START = re.compile(r"(\d+) of \d+ START \S+ (?:\S+ )*?(?:model|snapshot|seed|test) ([\w.]+)")
DONE = re.compile(r"(\d+) of \d+ (?:OK|PASS|ERROR|FAIL|WARN|SKIP)")


@dataclass
class Warehouse:
    name: str
    settings: Settings
    env: dict[str, str]


@dataclass
class Baseline:
    landing: Path
    root: Path
    sums: dict[str, TableFingerprint]
    nodes: int


@contextlib.contextmanager
def _pointed_at(spark, settings: Settings) -> Iterator[None]:
    """This process's session and FLOE_* variables on ``settings``' warehouse, restored after."""
    keys = ("FLOE_HOME", "FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI")
    previous = {k: os.environ.get(k) for k in keys}
    before = Settings.from_env()
    use_settings(spark, settings)
    try:
        yield
    finally:
        use_settings(spark, before)
        for key, value in previous.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _checksums(settings: Settings) -> dict[str, TableFingerprint]:
    """Fingerprints (floe.runtime.tables) of every table of the compared schemas, read
    with pyiceberg; the warehouse's own FLOE_HOME in text (a quarantine detail naming the
    local schema registry file) reads as a placeholder."""
    prints = lakehouse_fingerprints(settings, IGNORED)
    return {name: fp for name, fp in prints.items() if name.split(".")[0] in COMPARED_SCHEMAS}


def _warehouse(root: Path, name: str, landing: Path) -> Warehouse:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOE_")}
    env.update(
        FLOE_HOME=str(root / name),
        FLOE_LANDING=str(landing),
        FLOE_SETTLE_SECONDS="0",
        FLOE_DRIVER_MEMORY="1g",
        FLOE_SPARK_CORES="1",
        FLOE_LOCK_TIMEOUT="600",
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        PYSPARK_PYTHON=sys.executable,
    )
    return Warehouse(name, Settings.from_env(env), env)


def _dbt_process(wh: Warehouse, log: Path, target: Path) -> subprocess.Popen:
    """``dbt build`` of the selection in a new process group (so a kill takes the JVM)."""
    argv = [
        str(BIN / "dbt"),
        "build",
        *SELECT,
        "--project-dir",
        str(ROOT),
        "--profiles-dir",
        str(ROOT / "profiles"),
        "--target-path",
        str(target),
        "--log-path",
        str(target / "logs"),
    ]
    out = log.open("w")
    return subprocess.Popen(
        argv, env=wh.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )


def _running_node(log: Path) -> str:
    """Which node the build was in when it was killed, from its console log."""
    started: dict[str, str] = {}
    finished: set[str] = set()
    for line in log.read_text(errors="replace").splitlines():
        if m := START.search(line):
            started[m.group(1)] = m.group(2)
        elif m := DONE.search(line):
            finished.add(m.group(1))
    if not started:
        return "before the first node (Spark start, parse)"
    last = max(started, key=int)
    state = "after" if last in finished else "during"
    return f"{state} node {last} {started[last]}"


def _first_node_started(proc: subprocess.Popen, log: Path, limit: float = 300) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if " START " in log.read_text(errors="replace"):
            return True
        time.sleep(0.2)
    return False


def _readable_with_pyiceberg(settings: Settings) -> int:
    """Open and scan every Iceberg table of the warehouse; the number of tables."""
    catalog = open_catalog(settings)
    n = 0
    for namespace in catalog.list_namespaces():
        for identifier in catalog.list_tables(namespace):
            table = catalog.load_table(identifier)
            table.scan().to_arrow()
            n += 1
    return n


def _differences(got: dict, want: dict) -> list[str]:
    return [
        f"{t}: {got.get(t)} != baseline {want.get(t)}"
        for t in sorted(set(got) | set(want))
        if got.get(t) != want.get(t)
    ]


@pytest.fixture(scope="module")
def baseline(spark, tmp_path_factory, dbt_target_path) -> Baseline:
    """The landing zone and one uninterrupted build of it (in this process)."""
    from floe.dbt_runner import run_dbt

    root = tmp_path_factory.mktemp("reliability")
    landing = root / "landing"
    generate(GenerateOptions(landing=landing, days=DAYS, scale=SCALE), FEEDS)
    wh = _warehouse(root, "baseline", landing)
    with _pointed_at(spark, wh.settings):
        run = run_dbt(["build", *SELECT], project=ROOT, target_path=dbt_target_path, quiet=True)
        assert run.success, run.failures or run.exception
    sums = _checksums(wh.settings)
    assert sums["raw.landed_files"].rows > 0 and sums["raw.quarantine"].rows > 0
    assert sums["marts.fct_customer_purchases"].rows > 0
    return Baseline(landing, root, sums, len(run.result.results))


def _land_slice(baseline: Baseline, landing: Path, i: int, slices: int) -> int:
    """Hard-link the ``i``-th of ``slices`` slices of the landed files (same bytes and
    modification times, so the ledgers match the baseline's); the number landed.

    Files are taken in time order across feeds (the folders below each feed's own are
    ingest hours), and the first slice holds the first file of every feed: a feed with
    nothing landed builds no cdc table, and its tests then fail on a missing table.
    """
    feeds = [baseline.landing / "/".join(f.split(".")) for f in FEEDS]
    files = sorted(
        (p for p in baseline.landing.rglob("*") if p.is_file()),
        key=lambda p: next((str(p.relative_to(f)), str(f)) for f in feeds if p.is_relative_to(f)),
    )
    first = len(feeds)
    bounds = [0, *(first + (len(files) - first) * j // slices for j in range(1, slices + 1))]
    share = files[bounds[i] : bounds[i + 1]]
    for path in share:
        target = landing / path.relative_to(baseline.landing)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.link(path, target)
    return len(share)


def _kill_moment(
    proc: subprocess.Popen, log: Path, node: int, nodes: int, rng: random.Random
) -> None:
    """Wait for the moment to kill: ``node`` 0 is during Spark start and parse, else
    up to two seconds after node ``node`` of ``nodes`` started (or the build's end)."""
    if node == 0:
        time.sleep(rng.uniform(1.0, 10.0))
        return
    deadline = time.monotonic() + 600
    pattern = re.compile(rf"\b{node} of {nodes} START ")
    while proc.poll() is None and time.monotonic() < deadline:
        if pattern.search(log.read_text(errors="replace")):
            time.sleep(rng.uniform(0.0, 2.0))
            return
        time.sleep(0.1)


def test_builds_killed_at_random_moments_recover_to_the_baseline(
    spark, baseline, dbt_target_path, record_property
):
    from floe.dbt_runner import run_dbt

    landing = baseline.root / "chaos-landing"
    wh = _warehouse(baseline.root, "chaos", landing)
    target = baseline.root / "chaos-target"
    rng = random.Random(SEED)
    kills: list[str] = []
    recoveries = 0
    attempts = 0
    landed = 0
    while len(kills) < KILLS:
        attempts += 1
        assert attempts <= 3 * KILLS, f"builds kept ending before their kill: {kills}"
        if landed == len(kills):  # a new slice for every kill (not for a retry)
            _land_slice(baseline, landing, len(kills), KILLS + 1)
            landed += 1
        log = baseline.root / f"chaos-{attempts}.log"
        proc = _dbt_process(wh, log, target)
        try:
            last = baseline.nodes if SPREAD == "all" else min(int(SPREAD), baseline.nodes)
            _kill_moment(proc, log, rng.randint(0, last), baseline.nodes, rng)
            if proc.poll() is not None:
                assert proc.returncode == 0, log.read_text()[-3000:]
                continue  # finished before its kill moment: not a kill
            point = _running_node(log)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            kills.append(point)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        _readable_with_pyiceberg(wh.settings)  # raises if a table does not open or scan
        recoveries += 1
    _land_slice(baseline, landing, KILLS, KILLS + 1)

    with _pointed_at(spark, wh.settings):
        run = run_dbt(["build", *SELECT], project=ROOT, target_path=dbt_target_path, quiet=True)
        assert run.success, run.failures or run.exception
    differences = _differences(_checksums(wh.settings), baseline.sums)
    summary = f"{len(kills)} kills, {recoveries} recoveries, {len(differences)} differences"
    record_property("kill_points", kills)
    record_property("summary", summary)
    print("\n".join(["", *(f"kill {i}: {p}" for i, p in enumerate(kills, 1)), summary]))
    assert differences == [], "\n".join(differences)


def test_writers_started_together_take_turns_and_equal_one_build(spark, baseline, capfd):
    """A ``dbt build`` subprocess, ``floe stream --available-now`` and a ``dbt build``
    in this process, all at once on one warehouse: nothing doubled, nothing lost."""
    from floe.dbt_runner import run_dbt

    wh = _warehouse(baseline.root, "together", baseline.landing)
    stream_log = baseline.root / "together-stream.log"
    with stream_log.open("w") as out:
        stream = subprocess.Popen(
            [str(BIN / "floe"), "stream", "--available-now"],
            env=wh.env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
        )
    build_log = baseline.root / "together-build.log"
    build = _dbt_process(wh, build_log, baseline.root / "together-target")
    try:
        with _pointed_at(spark, wh.settings):
            run = run_dbt(
                ["build", *SELECT],
                project=ROOT,
                target_path=baseline.root / "together-inprocess-target",
                quiet=True,
            )
        assert run.success, run.failures or run.exception
        assert build.wait(timeout=900) == 0, build_log.read_text()[-3000:]
        assert stream.wait(timeout=900) == 0, stream_log.read_text()[-3000:]
    finally:
        for proc in (build, stream):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    said = capfd.readouterr().err + build_log.read_text() + stream_log.read_text()
    assert "for the writer lock held by" in said, "no writer waited for another"
    assert _differences(_checksums(wh.settings), baseline.sums) == []


def test_a_batch_stamped_before_an_applied_one_is_still_applied(
    spark, baseline, dbt_target_path, monkeypatch
):
    """Runs last: it lands a third day on the baseline's landing zone and warehouse."""
    from floe.dbt_runner import run_dbt

    wh = _warehouse(baseline.root, "baseline", baseline.landing)
    with _pointed_at(spark, wh.settings):
        applied = spark.sql("select min(_ingested_at) from marts.fct_customer_purchases")
        assert applied.first()[0] is not None
        opts = GenerateOptions(landing=baseline.landing, days=DAYS + 1, scale=SCALE)
        assert generate(opts, FEEDS).written
        monkeypatch.setattr("floe.feeds.ledger.batch_time", lambda: "2000-01-01 00:00:00.000000")
        target = dbt_target_path
        run = run_dbt(["run", *SELECT], project=ROOT, target_path=target, quiet=True)
        assert run.success, run.failures or run.exception

        late = "_ingested_at < timestamp '2001-01-01'"
        raw_late = spark.sql(f"select count(*) from raw.customer_events where {late}").first()[0]
        assert raw_late > 0, "the new batch was not stamped early: the test proves nothing"
        raw, mart, mart_late = spark.sql(
            "select (select count(*) from staging.stg_streams__customer_events), "
            "(select count(*) from marts.fct_customer_purchases), "
            f"(select count(*) from marts.fct_customer_purchases where {late})"
        ).first()
        assert (mart, mart_late) == (raw, raw_late)

        props = {r[0]: r[1] for r in spark.sql("show tblproperties marts.movies").collect()}
        assert props["floe.cdc.watermark_column"] == "_load_seq"
        newest = spark.sql("select max(_load_seq) from raw.movies_cdc").first()[0]
        assert props["floe.cdc.watermark"] == str(newest)
        incremental = spark_fingerprints(spark, ["marts"])["marts.movies"]
        run = run_dbt(
            ["run", "-s", "movies", "--full-refresh"], project=ROOT, target_path=target, quiet=True
        )
        assert run.success, run.failures or run.exception
        assert spark_fingerprints(spark, ["marts"])["marts.movies"] == incremental

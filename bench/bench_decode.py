"""Decode throughput against its bounds (ADR 0010).

Landed Kinesis JSONL of framed records (1 % zlib-compressed), measured in stages, each
Spark run in its own process with a fresh JVM (``FLOE_SPARK_CORES`` = 1, then 2):

* **bound**: a bare single-core loop in memory — fastavro ``schemaless_reader`` over
  the same Avro payloads; ``json.loads`` + the compiled validator (fastjsonschema)
  for JSON;
* **JVM ceiling**: Spark's text read + ``from_json`` envelope parse to a ``noop`` sink
  (what a JVM-only reader would pay before decoding anything);
* **floe decode**: the decode pass alone (Python workers read, decode and stage
  Parquet; counts to the driver);
* **floe ingest -> Iceberg**: the whole ``ingest`` (decode, redelivery check, counts)
  plus the append to ``raw.<stream>`` that dbt would do;
* **warm** (``decode_warm``, ``ingest_warm``): the same, timed after one untimed pass
  over the same files in the same process: what every pass after a JVM's first meets
  (a build's later streams, ``floe stream``'s micro-batches, the dev server). The cold
  figures above carry the fresh JVM's one-off JIT and first planning; the per-record
  targets compare the warm figures with the (warm) loop
  (docs/decisions/0066-decode-targets-cold-and-warm.md).

Each Spark child prints its CPU by thread: Spark's task threads, the JIT compilers, GC,
the driver's calls from Python (planning, code generation, commits), Spark's Python
workers, the rest of the JVM, and the Python driver.

Each child is pinned to as many CPUs as it has cores (``FLOE_BENCH_DECODE_PIN=0``: not
pinned), so that the 1-core run's JIT and GC threads share its one core, as on a
one-core machine. Unpinned, they ran on the idle second core and the 1-core run kept
about 1.5 cores busy (docs/decisions/0062-one-core-means-one-cpu.md).

Prints records/s, per-core ratios against the bound (targets: >= 0.5 Avro, stretch
0.8; >= 0.5 JSON), the 2-core / 1-core scaling (target >= 1.7), the load average
with every figure, and — for ``FLOE_BENCH_DECODE_BIG_N`` records (default 10M; 0
skips) — the driver's peak memory against the 1M-record run: it must not grow with
the input. ``FLOE_BENCH_DECODE_N`` (default 1M) sizes the main runs;
``FLOE_BENCH_DECODE_ONLY=rss`` runs the memory comparison alone.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import zlib
from datetime import datetime
from pathlib import Path

POOL = 5_000  # distinct records; the landed files cycle through them
FILES = 16
ROOT = Path(__file__).resolve().parents[1]


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.2f}/{five:.2f}/{fifteen:.2f}"


def _registry(state: Path):
    from floe.registry.sync import schemas_dir, sync_local_registry

    return sync_local_registry(state, schemas_dir(ROOT))


def _weather(i: int) -> dict:
    return {
        "temperature": 60 + i % 50,
        "location": {"city": "Phoenix", "state": "Arizona", "country": "US"},
        "timestamp": 1627335205 + i,
    }


def land(landing: Path, n: int, state: Path, fmt: str) -> list[bytes]:
    """Write n framed records as JSONL files; return the payload bytes of the pool."""
    import random

    from floe.feeds import find_feed, load_feeds
    from floe.feeds.kinds.stream import stream_path
    from floe.generator.demo.streams import _unicorn
    from floe.registry import codec, wire

    name, schema = ("unicorn_rides", "unicorn_ride_request")
    make = lambda i: _unicorn(rng, i, datetime(2022, 7, 1), 1)  # noqa: E731
    if fmt == "JSON":
        name, schema = ("weather", "weather_report")
        make = _weather
    feed = find_feed(load_feeds(ROOT), name)
    version = _registry(state).latest(schema)
    rng = random.Random(7)
    payloads, lines = [], []
    for i in range(POOL):
        payload = codec.encode_payload(make(i), version)
        payloads.append(payload)
        framed = wire.encode_glue(payload, version.uuid, compress=i % 100 == 0)
        lines.append(
            json.dumps(
                {
                    "sequenceNumber": str(10**20 + i),
                    "partitionKey": f"key-{i % 16}",
                    "approximateArrivalTimestamp": "2022-07-01T00:00:00.000Z",
                    "data": base64.b64encode(framed).decode(),
                },
                separators=(",", ":"),
            )
        )
    per_file = -(-n // FILES)
    written = 0
    for f in range(FILES):
        count = min(per_file, n - written)
        if count <= 0:
            break
        path = stream_path(landing, feed, datetime(2022, 7, 1, f % 24), part=f)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w") as out:
            for k in range(written, written + count):
                # Unique sequence numbers: the pool cycles, redeliveries it is not.
                line = lines[k % POOL]
                out.write(line.replace(str(10**20 + k % POOL), str(10**20 + k), 1))
                out.write("\n")
        written += count
    return payloads


def fastavro_loop(payloads: list[bytes], n: int) -> float:
    """Records/s of a bare single-core fastavro loop over the same payload bytes."""
    import fastavro

    schema = fastavro.parse_schema(
        json.loads((ROOT / "schemas/floe/unicorn_ride_request/v1.avsc").read_text())
    )
    compressed = {i: zlib.compress(p) for i, p in enumerate(payloads) if i % 100 == 0}
    reader = fastavro.schemaless_reader
    started = time.process_time()
    for k in range(n):
        i = k % len(payloads)
        data = zlib.decompress(compressed[i]) if i in compressed else payloads[i]
        reader(io.BytesIO(data), schema, None)
    return n / (time.process_time() - started)


def json_loop(payloads: list[bytes], n: int) -> float:
    """Records/s of a bare single-core json.loads + compiled-validator loop."""
    import fastjsonschema

    schema = json.loads((ROOT / "schemas/floe/weather_report/v2.json").read_text())
    validate = fastjsonschema.compile(schema, use_formats=False)
    compressed = {i: zlib.compress(p) for i, p in enumerate(payloads) if i % 100 == 0}
    loads = json.loads
    started = time.process_time()
    for k in range(n):
        i = k % len(payloads)
        data = zlib.decompress(compressed[i]) if i in compressed else payloads[i]
        validate(loads(data))
    return n / (time.process_time() - started)


# ----------------------------------------------------------------- CPU accounting

_TICK = os.sysconf("SC_CLK_TCK")


def stat_cpu(stat: str) -> float:
    """CPU seconds (user + system) in the text of a /proc ``stat`` file (process or thread)."""
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def tree_cpu(root: int) -> dict[int, float]:
    """CPU seconds (user + system) of ``root`` and every descendant, by pid (/proc)."""
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        pid = int(entry.name)
        parents[pid] = int(stat[stat.rindex(")") + 2 :].split()[1])
        cpu[pid] = stat_cpu(stat)
    mine = {root}
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                grew = True
    return {pid: cpu[pid] for pid in mine if pid in cpu}


def cpu_between(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU seconds the process tree spent between two snapshots (new pids count whole)."""
    return sum(seconds - before.get(pid, 0.0) for pid, seconds in after.items())


def thread_kind(name: str) -> str:
    """What a JVM thread does, from its name (/proc/<pid>/task/<tid>/comm, 15 chars)."""
    if name.startswith("Executor task"):
        return "tasks"
    if "CompilerThre" in name:
        return "JIT"
    if name.startswith(("GC Thread", "G1 ", "VM Thread")):
        return "GC"
    if name.startswith("Thread-"):
        return "driver calls"  # py4j's threads: planning, code generation, commits
    return "other"


def process_threads(pid: int) -> dict[int, tuple[str, float]]:
    """CPU seconds (user + system) of every thread of ``pid``, by tid, with its name."""
    out: dict[int, tuple[str, float]] = {}
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        out[int(task.name)] = (stat[stat.index("(") + 1 : stat.rindex(")")], stat_cpu(stat))
    return out


def thread_cpu(root: int) -> dict[tuple[int, int], tuple[str, float]]:
    """CPU seconds of every thread of ``root``'s descendants (the JVM, Spark's Python
    workers), by (pid, tid), with its kind."""
    out: dict[tuple[int, int], tuple[str, float]] = {}
    for pid in tree_cpu(root):
        if pid == root:
            continue
        try:
            java = Path(f"/proc/{pid}/comm").read_text().strip() == "java"
        except OSError:
            continue
        for tid, (name, seconds) in process_threads(pid).items():
            out[pid, tid] = (thread_kind(name) if java else "Python workers", seconds)
    return out


def sum_by_kind(readings) -> dict[str, float]:
    """Seconds summed per kind, from (kind, seconds) pairs."""
    kinds: dict[str, float] = {}
    for kind, seconds in readings:
        kinds[kind] = kinds.get(kind, 0.0) + seconds
    return kinds


def threads_between(before: dict, after: dict) -> dict[str, float]:
    """CPU seconds the child processes' threads spent between two snapshots, by kind."""
    return sum_by_kind(
        (kind, seconds - before.get(key, (kind, 0.0))[1]) for key, (kind, seconds) in after.items()
    )


def _timed(fn) -> dict:
    """Run ``fn``: wall seconds, CPU seconds of the whole process tree, and the JVM's
    CPU by kind of thread (tasks, JIT, GC, driver calls, other)."""
    me = os.getpid()
    cpu0, threads0 = tree_cpu(me), thread_cpu(me)
    started = time.perf_counter()
    extra = fn() or {}
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "cpu": cpu_between(cpu0, tree_cpu(me)),
        "threads": threads_between(threads0, thread_cpu(me)),
        **extra,
    }


def breakdown(landing: Path, state: Path, name: str, bound: float, limit: int) -> None:
    """Where a Python worker's time goes, in-process (no Spark), per record, by CPU time."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from floe.decode import core
    from floe.decode.records import (
        DecodeLimits,
        RecordDecoder,
        decode_lines_batch,
        to_record_batch,
    )
    from floe.feeds.kinds import stream
    from floe.registry.backends import RegistryRef

    feed = _feed(name)
    files = stream.discover(feed, landing)
    schema = to_arrow_schema(core.decode_output_schema(stream.record_type(feed, ROOT)))
    ref = RegistryRef(backend="local", registry_dir=str(state / "registry"))
    decoder = RecordDecoder(stream.spec(feed), ref.open(), DecodeLimits())
    clock = time.process_time
    # Warm up: the first Arrow conversion imports modules (a one-time cost per worker).
    warm, _ = core.piece_lines(str(files[0].path), 0, files[0].size, files[0].size, 1 << 24)
    to_record_batch(
        decode_lines_batch(warm[:100], decoder), schema, {"_source_file": "x", **files[0].attrs}
    )
    spent = dict.fromkeys(("read + split lines", "envelope + frame + decode", "Arrow columns"), 0.0)
    spent["Parquet write"] = 0.0
    records = 0
    with tempfile.TemporaryDirectory() as out:
        writer = core._StagedWriter(out, "breakdown", schema)
        for f in files:
            if records >= limit:
                break
            t0 = clock()
            lines, _ = core.piece_lines(str(f.path), 0, f.size, f.size, 1 << 24)
            lines = lines[: limit - records]
            spent["read + split lines"] += clock() - t0
            for at in range(0, len(lines), core.BATCH_ROWS):
                t0 = clock()
                cols = decode_lines_batch(lines[at : at + core.BATCH_ROWS], decoder)
                t1 = clock()
                batch = to_record_batch(cols, schema, {"_source_file": f.key, **f.attrs})
                t2 = clock()
                writer.write(batch)
                spent["envelope + frame + decode"] += t1 - t0
                spent["Arrow columns"] += t2 - t1
                spent["Parquet write"] += clock() - t2
            records += len(lines)
        t0 = clock()
        writer.close()
        spent["Parquet write"] += clock() - t0
    total = sum(spent.values())
    print(f"  where a worker's time goes ({records:,} records in-process, CPU time):")
    for part, seconds in spent.items():
        print(f"    {part:<28} {seconds / records * 1e6:6.2f} us/record  {seconds / total:5.1%}")
    print(
        f"    {'total':<28} {total / records * 1e6:6.2f} us/record "
        f"= {records / total / bound:.2f}x the loop (loop: {1e6 / bound:.2f} us/record)"
    )


def versus_reference(landing: Path, state: Path, name: str, bound: float, limit: int) -> None:
    """The worker's decode + Arrow conversion against the decoder it replaced
    (tests/decode/reference_decoder.py), same lines, same process, in turns (best of 3):
    a ratio that the machine's load moves far less than either figure alone."""
    from pyspark.sql.pandas.types import to_arrow_schema

    from floe.decode import core, records
    from floe.feeds.kinds import stream
    from floe.registry.backends import RegistryRef
    from tests.decode import reference_decoder as reference

    feed = _feed(name)
    files = stream.discover(feed, landing)
    f = files[0]
    lines: list = []
    for each in files:
        if len(lines) >= limit:
            break
        lines += core.piece_lines(str(each.path), 0, each.size, each.size, 1 << 24)[0]
    lines = lines[:limit]
    schema = to_arrow_schema(core.decode_output_schema(stream.record_type(feed, ROOT)))
    registry = RegistryRef(backend="local", registry_dir=str(state / "registry")).open()
    spec = stream.spec(feed)
    fixed = {"_source_file": f.key, **f.attrs}
    new = records.RecordDecoder(spec, registry, records.DecodeLimits())
    old = reference.RecordDecoder(
        reference.StreamSpec(spec.name, spec.schema, spec.registry, dict(spec.timestamps)),
        registry,
        reference.DecodeLimits(),
    )
    runs = {"new": (records, new), "reference": (reference, old)}
    best = dict.fromkeys(runs, float("inf"))
    for _ in range(3):
        for label, (module, decoder) in runs.items():
            started = time.process_time()
            for at in range(0, len(lines), 8192):
                cols = module.decode_lines_batch(lines[at : at + 8192], decoder)
                module.to_record_batch(cols, schema, fixed)
            best[label] = min(best[label], time.process_time() - started)
    per = {label: seconds / len(lines) * 1e6 for label, seconds in best.items()}
    print(
        f"  decode + Arrow, {len(lines):,} records: new {per['new']:.2f} us/record, "
        f"reference {per['reference']:.2f} us/record: new/reference "
        f"{best['new'] / best['reference']:.2f}x; loop {1e6 / bound:.2f} us/record  [{load()}]"
    )


# ----------------------------------------------------------------- child processes


def _feed(name: str):
    from floe.feeds import find_feed, load_feeds

    return find_feed(load_feeds(ROOT), name)


def child_jvm(name: str) -> dict:
    """Text read + envelope parse in the JVM only, to a noop sink."""
    from pyspark.sql import functions as F

    from floe.feeds.kinds import stream
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    spark = get_spark(settings)
    files = stream.discover(_feed(name), settings.landing)

    def run() -> None:
        ddl = (
            "sequenceNumber string, partitionKey string, approximateArrivalTimestamp string, "
            "data string"
        )
        text = spark.read.text([str(f.path) for f in files])
        env = F.from_json("value", ddl)
        text.select(env["sequenceNumber"], env["partitionKey"], env["data"]).write.format(
            "noop"
        ).mode("overwrite").save()

    return _timed(run)


def child_decode(name: str) -> dict:
    """The decode pass alone, as floe runs it (the JVM decoder where it applies)."""
    return _decode_pass(name, None)


def child_pydecode(name: str) -> dict:
    """The decode pass alone with the Python workers doing every line."""
    return _decode_pass(name, "python")


def _decode_pass(name: str, engine: str | None, warm: bool = False) -> dict:
    """The decode pass alone: staged Parquet and per-piece counts. ``warm``: timed after
    one untimed pass over the same files in the same JVM (its JIT compiled, its classes
    loaded), as every stream after the first in a build meets it."""
    from floe.decode.core import DecodeLimits, stage_files
    from floe.feeds.kinds import stream
    from floe.feeds.kinds.base import IngestContext
    from floe.feeds.ledger import batch_time
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    spark = get_spark(settings)
    feed = _feed(name)
    ctx = IngestContext(settings, batch_time(), ROOT)
    files = stream.discover(feed, settings.landing)
    ref = stream.registry_ref(ctx)

    def run(folder: str) -> dict:
        jvm = stream.jvm_decode(spark, feed, ref, engine or settings.decode_engine)
        pieces = stage_files(
            spark,
            files,
            stream.spec(feed),
            stream.record_type(feed, ROOT),
            ref,
            DecodeLimits.from_settings(settings),
            settings.state_dir / folder,
            settings.decode_split_bytes,
            jvm=jvm,
        )
        return {"decoded": sum(p.decoded for p in pieces), "tasks": len({p.part for p in pieces})}

    if warm:
        run("bench-staging-warm-up")
    return _timed(lambda: run("bench-staging"))


def child_decode_warm(name: str) -> dict:
    """The decode pass, as floe runs it, in a JVM that has run it once."""
    return _decode_pass(name, None, warm=True)


def child_ingest(name: str, warm: bool = False) -> dict:
    """The whole ingest plus the Iceberg append dbt would do. ``warm``: timed after one
    untimed ingest of the same files in the same JVM (a raw table not yet created
    means the ledger takes every file again)."""
    from floe.feeds.ingest import ingest
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    spark = get_spark(settings)
    feed = _feed(name)

    def run() -> dict:
        result = ingest(spark, feed, raw_exists=False, settings=settings, project_dir=ROOT)
        result.rows.writeTo(feed.raw_table).using("iceberg").createOrReplace()
        return {"decoded": sum(c.loaded for c in result.counts.values())}

    if warm:
        run()
        spark.sql(f"drop table {feed.raw_table}")
    return _timed(run)


def child_ingest_warm(name: str) -> dict:
    """The whole ingest in a JVM that has run it once."""
    return child_ingest(name, warm=True)


def _hwm_kib(pid: int) -> int:
    """Peak resident memory (VmHWM) of one process, in KiB (0 when it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def _peaks(pid: int) -> tuple[int, int]:
    """(Python driver, driver JVM) peak RSS in KiB; the JVM is the driver's child."""
    try:
        children = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        children = []
    return _hwm_kib(pid), max((_hwm_kib(c) for c in children), default=0)


def _pinned(cores: int):
    """The child's CPUs: its first ``cores`` usable ones, so that a 1-core run is one core
    for everything in it (Spark's tasks, the JVM's JIT and GC threads, the Python driver
    and workers), not one task thread beside spare cores for the rest. With
    ``FLOE_BENCH_DECODE_PIN=0`` (or fewer CPUs than ``cores``) the child may use them all."""
    usable = sorted(os.sched_getaffinity(0))
    if os.environ.get("FLOE_BENCH_DECODE_PIN", "1") == "0" or len(usable) < cores:
        return None
    chosen = set(usable[:cores])
    return lambda: os.sched_setaffinity(0, chosen)


def run_child(stage: str, name: str, cores: int, home: Path, landing: Path) -> dict:
    env = dict(os.environ)
    env.update(
        FLOE_SPARK_CORES=str(cores),
        FLOE_HOME=str(home),
        FLOE_LANDING=str(landing),
        FLOE_SETTLE_SECONDS="0",
        FLOE_DRIVER_MEMORY=os.environ.get("FLOE_BENCH_DRIVER_MEMORY", "2g"),
        PYSPARK_PYTHON=sys.executable,
    )
    for key in ("FLOE_WAREHOUSE", "FLOE_CATALOG_URI", "FLOE_REGISTRY_BACKEND"):
        env.pop(key, None)
    (home / "state").mkdir(parents=True, exist_ok=True)
    code = f"import json, bench.bench_decode as b; print(json.dumps(b.child_{stage}({name!r})))"
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        preexec_fn=_pinned(cores),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    peaks = {"python_kib": 0, "jvm_kib": 0}

    def watch() -> None:  # sampled: VmHWM is gone once the process has exited
        while proc.poll() is None:
            python, jvm = _peaks(proc.pid)
            peaks["python_kib"] = max(peaks["python_kib"], python)
            peaks["jvm_kib"] = max(peaks["jvm_kib"], jvm)
            time.sleep(0.5)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    watcher.join()
    if proc.returncode != 0:
        raise RuntimeError(f"bench child {stage} failed:\n{err[-3000:]}")
    result = json.loads(out.strip().splitlines()[-1])
    result.update(peaks)
    result["load"] = load()
    return result


def _fresh_home(root: Path, label: str, state: Path) -> Path:
    home = root / f"home-{label}-{time.monotonic_ns()}"
    (home / "state" / "registry").mkdir(parents=True)
    for f in (state / "registry").iterdir():
        (home / "state" / "registry" / f.name).write_bytes(f.read_bytes())
    return home


def measure(root: Path, name: str, stage: str, cores: int, n: int, state: Path, landing: Path):
    res = run_child(stage, name, cores, _fresh_home(root, f"{stage}{cores}", state), landing)
    rps = n / res["seconds"]
    res["per_cpu"] = n / res["cpu"]
    extra = f", {res['tasks']} tasks" if "tasks" in res else ""
    print(
        f"  {stage:<11} {cores} core(s): {rps:>9,.0f} records/s wall ({res['seconds']:.1f}s{extra}); "
        f"{res['per_cpu']:>9,.0f} records per CPU-second, {res['cpu'] / res['seconds']:.2f} cores "
        f"busy  [{res['load']}]",
        flush=True,
    )
    if res.get("threads"):
        kinds = sorted(res["threads"].items(), key=lambda kv: -kv[1])
        children = sum(res["threads"].values())
        print(
            "             CPU by thread: "
            + ", ".join(f"{kind} {sec:.1f}s" for kind, sec in kinds if sec >= 0.05)
            + f"; the Python driver {res['cpu'] - children:.1f}s",
            flush=True,
        )
    if "decoded" in res:
        assert res["decoded"] == n, res
    return rps, res


def summary(
    label: str, res: dict, bound: float, n: int, stages: tuple[str, ...], target: str
) -> None:
    """Ratios per core against the loop: by CPU time (what a core of ours does, whatever
    else runs on the machine) and by wall time (what this run got on a shared machine)."""
    print(f"{label}, per core vs the loop (target >= {target}); scaling target >= 1.7:")
    for stage in stages:
        if stage.endswith("_warm") and not any(
            s.endswith("_warm") for s in stages[: stages.index(stage)]
        ):
            print("  warm: timed after one untimed pass in the same JVM (see the docstring)")
        one, two = res[stage, 1], res[stage, 2]
        wall1, wall2 = n / one["seconds"], n / two["seconds"]
        print(
            f"  {stage:<11} per CPU-second: 1 core {one['per_cpu'] / bound:.2f}, "
            f"2 cores {two['per_cpu'] / bound:.2f} | wall per core: 1 core {wall1 / bound:.2f}, "
            f"2 cores {wall2 / 2 / bound:.2f} | scaling 2/1 wall {wall2 / wall1:.2f}, "
            f"cores busy {two['cpu'] / two['seconds']:.2f}"
        )


def main() -> None:
    n = int(os.environ.get("FLOE_BENCH_DECODE_N", "1000000"))
    big = int(os.environ.get("FLOE_BENCH_DECODE_BIG_N", "10000000"))
    with tempfile.TemporaryDirectory(prefix="floe-bench-decode-") as tmp:
        root = Path(tmp)
        state = root / "state"
        avro_landing = root / "avro"
        t0 = time.perf_counter()
        payloads = land(avro_landing, n, state, "AVRO")
        if os.environ.get("FLOE_BENCH_DECODE_ONLY") == "rss":
            rss(root, n, big or 10 * n, state, avro_landing)
            return
        print(f"landed {n:,} framed UnicornRideRequest records in {time.perf_counter() - t0:.1f}s")
        bound = fastavro_loop(payloads, min(n, 300_000))
        print(f"bound: fastavro loop, in memory: {bound:,.0f} records per CPU-second  [{load()}]")
        breakdown(avro_landing, state, "unicorn_rides", bound, min(n, 200_000))
        versus_reference(avro_landing, state, "unicorn_rides", bound, min(n, 50_000))
        res: dict[tuple[str, int], dict] = {}
        for stage in ("jvm", "pydecode", "decode", "ingest", "decode_warm", "ingest_warm"):
            for cores in (1, 2):
                _, res[stage, cores] = measure(
                    root, "unicorn_rides", stage, cores, n, state, avro_landing
                )
        summary(
            "Avro",
            res,
            bound,
            n,
            ("pydecode", "decode", "ingest", "decode_warm", "ingest_warm"),
            "0.5, stretch 0.8",
        )
        print(
            f"  JVM text + envelope parse alone (the old reader's ceiling): "
            f"{res['jvm', 1]['per_cpu'] / bound:.2f}x the loop per CPU-second"
        )

        json_landing = root / "json"
        json_payloads = land(json_landing, n, state, "JSON")
        jbound = json_loop(json_payloads, min(n, 300_000))
        print(
            f"bound: json.loads + compiled validator: {jbound:,.0f} records per CPU-second  "
            f"[{load()}]"
        )
        breakdown(json_landing, state, "weather", jbound, min(n, 200_000))
        versus_reference(json_landing, state, "weather", jbound, min(n, 50_000))
        jres = {}
        for stage in ("decode", "decode_warm"):
            for cores in (1, 2):
                _, jres[stage, cores] = measure(
                    root, "weather", stage, cores, n, state, json_landing
                )
        summary("JSON", jres, jbound, n, ("decode", "decode_warm"), "0.5")
        del payloads, json_payloads

        if big:
            rss(root, n, big, state, avro_landing, res["ingest", 2])
        print(f"{load()} at the end")


def rss(
    root: Path, n: int, big: int, state: Path, landing: Path, small: dict | None = None
) -> None:
    """Driver peak memory decoding ``n`` and ``big`` records into Iceberg (2 cores)."""
    if small is None:
        _, small = measure(root, "unicorn_rides", "ingest", 2, n, state, landing)
    for path in landing.rglob("*.jsonl"):
        path.unlink()
    land(landing, big, state, "AVRO")
    _, large = measure(root, "unicorn_rides", "ingest", 2, big, state, landing)
    for run, count in ((small, n), (large, big)):
        print(
            f"driver peak RSS, {count:,} records (2g driver): "
            f"JVM {run['jvm_kib'] / 1024:,.0f} MiB, "
            f"Python driver {run['python_kib'] / 1024:,.0f} MiB  [{run['load']}]"
        )


if __name__ == "__main__":
    main()

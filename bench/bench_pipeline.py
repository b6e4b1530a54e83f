"""The whole demo pipeline's cost curve, side by side with its physical bound.

For each scale (``--scales 1,10,100,1000``; N x is ``floe generate --days 5 --scale N*1000``,
so 1000 x is ~2.2M customer rows and ~1.2M records per stream) on a fresh lakehouse:

* **floe**: ``floe build`` (every model and data test, no unit tests) in its own process,
  after the demo was generated (generation is timed apart, not counted);
* **bound**: a plain Spark job in its own process reading the same landed files (CSV as
  strings, Parquet as is, JSON lines as text lines) and appending them to Iceberg tables
  with no logic: what moving the same bytes into the same catalog costs.

Per scale it prints wall time, rows landed, rows/s, the peak resident memory of the driver
(the Python process), the JVM and the Python workers (polled from /proc), how busy the
machine's CPUs were and the CPU seconds of each kind of process (the JVM's also by kind
of thread: tasks, JIT, GC, driver calls, other; bench_decode.thread_kind), the build's wall clock
per layer (raw streams, raw files, marts, tests...: each instant shared among the nodes
running then) beside the bound's copy time per reader, the five slowest dbt nodes
(``run_results.json``), the Spark task threads' CPU per layer and the five costliest
nodes by it (read from the build's Spark event log: every job carries its dbt node as
its job group, docs/runtime.md "Spark jobs by dbt node"), the floe / bound ratios (whole process, and work after Spark is
up) with the load average. After the last scale, every node whose time grew faster than
the rows landed between two scales is named (the issue's "no node's time growing faster
than its input"; at small scales fixed costs hide growth, so read it at the largest pair)
and re-timed alone at both scales, which tells its own growth from the neighbours
sharing the cores. Target (docs/decisions/0045-pipeline-cost-curve-and-merge-choices.md,
figures in 0057): at 1000 x the whole build within 4 x of the bound. The generator is
linear in the scale and writes feeds in parallel (1000 x: 2.7 GB in about two minutes).

    python -m bench pipeline --scales 1,10       # CI-sized
    python -m bench pipeline                     # FLOE_BENCH_PIPELINE_SCALES, default 1,10,100,1000
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bench import jvm_knobs
from bench.bench_decode import process_threads, stat_cpu, sum_by_kind, thread_kind

ROOT = Path(__file__).resolve().parents[1]
DAYS = 5
BASE_SCALE = 1000  # --scale of 1 x: floe build's default demo
# Landed files that are bookkeeping, not records (csv_loads manifests, reference markers).
SKIP_NAMES = ("_manifest.json", "_CHANGED")
EVENTS = "spark-events"  # the floe build's Spark event log, in the scale's home


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}/{fifteen:.1f}"


# --- memory: the process tree's peak resident set, polled from /proc -------------------


def _children(pid: int) -> list[int]:
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:
            continue
    return out


def _cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system) ``pid`` itself has used so far (/proc/<pid>/stat)."""
    try:
        return stat_cpu(Path(f"/proc/{pid}/stat").read_text())
    except (OSError, ValueError):
        return 0.0


def _rss_and_kind(pid: int) -> tuple[int, str]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return 0, ""
    m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return (int(m.group(1)) * 1024 if m else 0), comm


class PeakMemory(threading.Thread):
    """Peak RSS of a process (the driver), its JVM children and its Python workers, and
    the CPU seconds each kind used (the last reading of every process seen: Spark reuses
    its Python workers, so a poll every half second misses little)."""

    def __init__(self, pid: int, every: float = 0.5) -> None:
        super().__init__(daemon=True)
        self.pid, self.every = pid, every
        self.driver = self.jvm = self.workers = 0
        self.cpu: dict[int, tuple[str, float]] = {}  # pid -> (kind, CPU seconds so far)
        self.threads: dict[tuple[int, int], tuple[str, float]] = {}  # JVM (pid, tid) -> same
        self._halt = threading.Event()

    def run(self) -> None:
        while not self._halt.is_set():
            jvm = workers = 0
            driver, _ = _rss_and_kind(self.pid)
            self._cpu(self.pid, "driver")
            todo = _children(self.pid)
            while todo:
                pid = todo.pop()
                rss, comm = _rss_and_kind(pid)
                if comm == "java":
                    jvm += rss
                    self._cpu(pid, "JVM")
                    self._threads(pid)
                elif comm.startswith("python"):
                    workers += rss
                    self._cpu(pid, "Python workers")
                todo += _children(pid)
            self.driver = max(self.driver, driver)
            self.jvm = max(self.jvm, jvm)
            self.workers = max(self.workers, workers)
            self._halt.wait(self.every)

    def stop(self) -> None:
        self._halt.set()
        self.join()

    def _cpu(self, pid: int, kind: str) -> None:
        # CPU time only grows: keep the highest reading (a read after the process is gone
        # gives 0.0 and must not replace what was seen).
        seen = self.cpu.get(pid, (kind, 0.0))[1]
        self.cpu[pid] = (kind, max(seen, _cpu_seconds(pid)))

    def _threads(self, pid: int) -> None:
        for tid, (name, seconds) in process_threads(pid).items():
            seen = self.threads.get((pid, tid), ("", 0.0))[1]
            self.threads[pid, tid] = (thread_kind(name), max(seen, seconds))

    def threads_line(self) -> str:
        """The JVM's CPU by kind of thread (bench_decode.thread_kind): what the tasks ran
        against what compiling, collecting and planning took."""
        by_kind = sum_by_kind(self.threads.values())
        return "JVM CPU seconds by thread: " + ", ".join(
            f"{kind} {seconds:,.0f}"
            for kind, seconds in sorted(by_kind.items(), key=lambda kv: -kv[1])
        )

    def cpu_line(self) -> str:
        by_kind = sum_by_kind(self.cpu.values())
        return "CPU seconds by process: " + ", ".join(
            f"{kind} {seconds:,.0f}" for kind, seconds in sorted(by_kind.items())
        )

    def line(self) -> str:
        mib = 1024 * 1024
        return (
            f"peak RSS driver {self.driver / mib:,.0f} MiB, JVM {self.jvm / mib:,.0f} MiB, "
            f"Python workers {self.workers / mib:,.0f} MiB"
        )


def _cpu_ticks() -> tuple[int, int]:
    """(busy, total) jiffies of every CPU of the machine since boot (/proc/stat)."""
    # user nice system idle iowait irq softirq steal (guest and guest_nice are already
    # counted in user and nice)
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]  # idle + iowait
    return sum(fields) - idle, sum(fields)


@dataclass
class Run:
    wall: float
    output: str
    memory: PeakMemory
    busy: float = float("nan")  # share of the machine's CPUs busy during the run

    def cpu_line(self) -> str:
        cores = os.cpu_count() or 1  # /proc/stat's first line sums every CPU
        return (
            f"CPU busy {100 * self.busy:.0f}% of {cores} cores "
            f"({self.busy * cores * self.wall:,.0f} core-seconds)"
        )


def _run(argv: list[str], env: dict[str, str]) -> Run:
    started = time.perf_counter()
    busy0, total0 = _cpu_ticks()
    proc = subprocess.Popen(
        argv, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    memory = PeakMemory(proc.pid)
    memory.start()
    output, _ = proc.communicate()
    memory.stop()
    wall = time.perf_counter() - started
    busy1, total1 = _cpu_ticks()
    if proc.returncode != 0:
        tail = "\n".join(output.splitlines()[-30:])
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{tail}")
    return Run(wall, output, memory, (busy1 - busy0) / max(1, total1 - total0))


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, FLOE_HOME=str(home), DBT_TARGET_PATH=str(home / "target"))
    env["DBT_LOG_PATH"] = str(home / "logs")
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        env.pop(var, None)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = os.pathsep.join(
        [src, str(ROOT), *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    return env


# --- the bound: the same landed bytes into Iceberg, no logic ----------------------------


def _landed_sets(landing: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """Per landing folder of a feed: (reader, files), the files grouped by reader."""
    sets: dict[str, dict[str, list[str]]] = {}
    for path in sorted(landing.rglob("*")):
        if not path.is_file() or path.name in SKIP_NAMES:
            continue
        reader = {".csv": "csv", ".parquet": "parquet", ".jsonl": "text", ".json": "text"}.get(
            path.suffix
        )
        if reader is None:
            continue
        # the feed folder: the path up to the first hive-style or file level
        parts = path.relative_to(landing).parts[:-1]
        feed = "_".join(p for p in parts if "=" not in p) or "root"
        sets.setdefault(feed, {}).setdefault(reader, []).append(str(path))
    return {feed: sorted(by.items()) for feed, by in sets.items()}


def bound_main(home: Path) -> None:
    """The bound's process: print one JSON line (rows, seconds of work, Spark start)."""
    started = time.perf_counter()
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env({"FLOE_HOME": str(home), **jvm_knobs()})
    spark = get_spark(settings)
    spark_start = time.perf_counter() - started
    work_started = time.perf_counter()
    spark.sql("create namespace if not exists bound")
    rows = 0
    by_kind: dict[str, float] = {}  # reader (csv, parquet, text) -> seconds copying
    for feed, by_reader in _landed_sets(settings.landing).items():
        for reader, files in by_reader:
            copy_started = time.perf_counter()
            if reader == "csv":
                df = spark.read.option("header", "true").csv(files)
            elif reader == "parquet":
                df = spark.read.parquet(*files)
            else:
                df = spark.read.text(files)
            table = f"bound.{re.sub(r'[^a-z0-9_]', '_', feed.lower())}_{reader}"
            # One fresh table per feed and reader; the counts come from its commit summary.
            df.writeTo(table).using("iceberg").create()
            summary = spark.sql(f"select summary['added-records'] from {table}.snapshots").collect()
            rows += sum(int(r[0] or 0) for r in summary)
            took = time.perf_counter() - copy_started
            by_kind[reader] = by_kind.get(reader, 0.0) + took
    work = time.perf_counter() - work_started
    figures = {"rows": rows, "work": work, "spark_start": spark_start, "by_reader": by_kind}
    print("BOUND " + json.dumps(figures))


# --- floe's side and the report ----------------------------------------------------------


@dataclass
class Scale:
    factor: int
    rows: int = 0
    floe: Run | None = None
    bound: Run | None = None
    dbt_seconds: float = 0.0
    spark_ready: float = 0.0
    bound_work: float = 0.0
    bound_rows: int = 0
    nodes: dict[str, float] = field(default_factory=dict)
    # layer -> seconds of the build's wall clock its nodes held (shared evenly among the
    # nodes running at once), and the bound's seconds per reader
    layers: dict[str, float] = field(default_factory=dict)
    bound_by_reader: dict[str, float] = field(default_factory=dict)
    # node -> materialization, for re-timing a node alone (only whole rebuilds can be)
    materialized: dict[str, str] = field(default_factory=dict)
    # dbt node (Spark job group) -> CPU seconds of its Spark tasks (the event log)
    task_cpu: dict[str, float] = field(default_factory=dict)
    node_layers: dict[str, str] = field(default_factory=dict)  # unique id -> layer
    home: Path | None = None


def _floe_figures(scale: Scale, home: Path) -> None:
    assert scale.floe is not None
    out = scale.floe.output
    m = re.search(r"^dbt build: ([0-9.]+)s", out, re.M)
    scale.dbt_seconds = float(m.group(1)) if m else float("nan")
    m = re.search(r"^Spark ready in ([0-9.]+)s", out, re.M)
    scale.spark_ready = float(m.group(1)) if m else float("nan")
    m = re.search(r"^\(all feeds\)\s+(\d+)\s+(\d+)", out, re.M)
    scale.rows = int(m.group(1)) + int(m.group(2)) if m else 0
    results = json.loads((home / "target" / "run_results.json").read_text())
    scale.nodes = {
        r["unique_id"]: float(r["execution_time"])
        for r in results["results"]
        if r["unique_id"].startswith(("model.", "snapshot.", "seed."))
    }
    manifest = json.loads((home / "target" / "manifest.json").read_text())
    scale.layers = wall_by_layer(results["results"], manifest["nodes"])
    scale.node_layers = {uid: _layer(node) for uid, node in manifest["nodes"].items()}
    scale.materialized = {
        uid: str(node.get("config", {}).get("materialized"))
        for uid, node in manifest["nodes"].items()
        if uid in scale.nodes
    }
    scale.task_cpu = task_cpu_by_group(home / EVENTS)


def task_cpu_by_group(events: Path) -> dict[str, float]:
    """CPU seconds of Spark's task threads per job group, summed over the event logs in
    ``events`` (floe tags each job with its dbt node; untagged jobs count as ``(none)``).
    A Python worker's CPU is not a task thread's: it is in the process line instead."""
    group_of: dict[int, str] = {}  # stage id -> job group
    cpu: dict[str, float] = {}
    for log in sorted(events.glob("*")) if events.is_dir() else []:
        with log.open() as lines:
            for line in lines:
                if '"SparkListenerJobStart"' in line:
                    event = json.loads(line)
                    group = event.get("Properties", {}).get("spark.jobGroup.id") or "(none)"
                    for stage in event["Stage IDs"]:
                        group_of[stage] = group
                elif '"SparkListenerTaskEnd"' in line:
                    event = json.loads(line)
                    group = group_of.get(event["Stage ID"], "(none)")
                    nanos = (event.get("Task Metrics") or {}).get("Executor CPU Time", 0)
                    cpu[group] = cpu.get(group, 0.0) + nanos / 1e9
    return cpu


def _layer(node: dict) -> str:
    """A node's layer: tests, snapshots, seeds, or its model folder (raw split into streams
    and file feeds)."""
    kind = str(node.get("resource_type", ""))
    if kind != "model":
        return f"{kind}s"
    fqn = node.get("fqn") or []
    layer = fqn[1] if len(fqn) > 2 else "models"
    if layer == "raw":
        return "raw streams" if len(fqn) > 3 and fqn[2] == "streams" else "raw files"
    return str(layer)


def wall_by_layer(results: list[dict], nodes: dict[str, dict]) -> dict[str, float]:
    """Seconds of the build's wall clock per layer: each instant shared evenly among the
    nodes executing then (run_results' execute timings), so the layers add up to the time
    some node was executing (the build's wall clock less dbt's start, compile phases and
    gaps: 309 of 315 s at 1000x) and show where it went whatever the concurrency."""
    spans = []
    for r in results:
        timing = [t for t in r.get("timing", []) if t.get("name") == "execute"]
        if not timing or not timing[0].get("started_at") or not timing[0].get("completed_at"):
            continue
        start = datetime.fromisoformat(timing[0]["started_at"].rstrip("Z")).timestamp()
        end = datetime.fromisoformat(timing[0]["completed_at"].rstrip("Z")).timestamp()
        node = nodes.get(r["unique_id"], {"resource_type": r["unique_id"].split(".")[0]})
        spans.append((_layer(node), start, end))
    instants = sorted({x for _, start, end in spans for x in (start, end)})
    layers: dict[str, float] = {}
    for a, b in itertools.pairwise(instants):
        live = [layer for layer, start, end in spans if start <= a and end >= b]
        for layer in live:
            layers[layer] = layers.get(layer, 0.0) + (b - a) / len(live)
    return layers


def run_scale(factor: int) -> Scale:
    """One scale on a fresh lakehouse (kept in ``scale.home`` until the caller drops it)."""
    home = Path(tempfile.mkdtemp(prefix=f"floe-bench-pipeline-{factor}x-"))
    env = _env(home)
    (home / EVENTS).mkdir()
    scale = Scale(factor, home=home)
    try:
        floe = [str(Path(sys.executable).with_name("floe"))]
        started = time.perf_counter()
        _run([*floe, "generate", "--days", str(DAYS), "--scale", str(BASE_SCALE * factor)], env)
        landed = sum(p.stat().st_size for p in (home / "landing").rglob("*") if p.is_file())
        print(
            f"  {factor} x: generated {landed / 2**20:,.1f} MiB in "
            f"{time.perf_counter() - started:.0f}s ({_load()})",
            flush=True,
        )
        build_env = dict(env, FLOE_SPARK_EVENT_LOG=str(home / EVENTS))
        scale.floe = _run([*floe, "build", "--days", str(DAYS)], build_env)
        _floe_figures(scale, home)
        print(f"  {factor} x: floe build {scale.floe.wall:.0f}s ({_load()})", flush=True)
        scale.bound = _run(
            [sys.executable, "-m", "bench.bench_pipeline", "--bound", str(home)], env
        )
        m = re.search(r"^BOUND (.*)$", scale.bound.output, re.M)
        figures = json.loads(m.group(1)) if m else {}
        scale.bound_work = float(figures.get("work", "nan"))
        scale.bound_rows = int(figures.get("rows", 0))
        scale.bound_by_reader = dict(figures.get("by_reader", {}))
        print(f"  {factor} x: bound {scale.bound.wall:.0f}s ({_load()})", flush=True)
    except BaseException:
        shutil.rmtree(home, ignore_errors=True)
        raise
    return scale


def alone(scale: Scale, node: str, runs: int = 2) -> float | None:
    """``node``'s time rebuilt alone in ``scale``'s lakehouse (best of ``runs``): its cost
    without the build's other nodes sharing the cores. None for a node a rebuild cannot
    repeat (incremental, snapshot: run again it does no work)."""
    if scale.home is None or scale.materialized.get(node) not in ("table", "view"):
        return None
    env = _env(scale.home)
    env["DBT_TARGET_PATH"] = str(scale.home / "target-alone")
    dbt = str(Path(sys.executable).with_name("dbt"))
    name = node.split(".")[-1]
    argv = [dbt, "run", "--profiles-dir", str(ROOT / "profiles"), "--select", name]
    best = None
    for _ in range(runs):
        _run(argv, env)
        results = json.loads((scale.home / "target-alone" / "run_results.json").read_text())
        took = float(results["results"][0]["execution_time"])
        best = took if best is None else min(best, took)
    return best


def report(scale: Scale) -> None:
    floe, bound = scale.floe, scale.bound
    assert floe is not None and bound is not None
    print(f"\n-- {scale.factor} x (--scale {BASE_SCALE * scale.factor}, {DAYS} days)  {_load()}")
    print(
        f"  floe  wall {floe.wall:7.1f}s  (Spark ready {scale.spark_ready:.1f}s, dbt build "
        f"{scale.dbt_seconds:.1f}s)  rows landed {scale.rows:,}  "
        f"{scale.rows / floe.wall:,.0f} rows/s"
    )
    print(f"        {floe.memory.line()}; {floe.cpu_line()}")
    print(f"        {floe.memory.cpu_line()}")
    print(f"        {floe.memory.threads_line()}")
    print(
        f"  bound wall {bound.wall:7.1f}s  (copy {scale.bound_work:.1f}s)  rows copied "
        f"{scale.bound_rows:,}  {scale.bound_rows / bound.wall:,.0f} rows/s"
    )
    print(f"        {bound.memory.line()}; {bound.cpu_line()}")
    print(f"        {bound.memory.cpu_line()}")
    print(f"        {bound.memory.threads_line()}")
    print(
        f"  ratio floe / bound: wall {floe.wall / bound.wall:.2f}, "
        f"work (dbt build / copy) {scale.dbt_seconds / scale.bound_work:.2f}"
        "  (target at 1000 x: <= 4)"
    )
    shares = sorted(scale.layers.items(), key=lambda kv: -kv[1])
    print("  floe's build wall by layer: " + ", ".join(f"{k} {v:.1f}s" for k, v in shares))
    copies = sorted(scale.bound_by_reader.items(), key=lambda kv: -kv[1])
    print("  bound's copy by reader:     " + ", ".join(f"{k} {v:.1f}s" for k, v in copies))
    slowest = sorted(scale.nodes.items(), key=lambda kv: -kv[1])[:5]
    print("  five slowest nodes: " + ", ".join(f"{n.split('.')[-1]} {t:.1f}s" for n, t in slowest))
    if scale.task_cpu:
        by_layer: dict[str, float] = {}
        for group, seconds in scale.task_cpu.items():
            # no group: after a node released its connection (floe build's own summary
            # queries); a group that is no node: dbt's own connections (``master``...)
            outside = "outside any node" if group == "(none)" else "dbt's own queries"
            layer = scale.node_layers.get(group, outside)
            by_layer[layer] = by_layer.get(layer, 0.0) + seconds
        layers = sorted(by_layer.items(), key=lambda kv: -kv[1])
        print(
            f"  floe's Spark task CPU {sum(by_layer.values()):.0f} core-s by layer: "
            + ", ".join(f"{k} {v:.1f}" for k, v in layers if v >= 0.05)
        )
        nodes = [(g, v) for g, v in scale.task_cpu.items() if g in scale.node_layers]
        costliest = sorted(nodes, key=lambda kv: -kv[1])[:5]
        print(
            "  five costliest nodes by task CPU: "
            + ", ".join(
                f"{g.split('.')[2] if g.count('.') >= 2 else g} {v:.1f}s" for g, v in costliest
            )
        )


def growth(scales: list[Scale]) -> None:
    """Nodes whose time grew faster than the rows landed between consecutive scales."""
    if len(scales) < 2:
        return
    print("\n-- growth: node time ratio vs rows-landed ratio between consecutive scales")
    named = False
    for a, b in itertools.pairwise(scales):
        rows = b.rows / max(1, a.rows)
        total = sum(b.nodes.values()) / max(1e-9, sum(a.nodes.values()))
        print(f"  {a.factor} x -> {b.factor} x: rows x{rows:.1f}, all nodes' time x{total:.2f}")
        for node, t in sorted(b.nodes.items(), key=lambda kv: -kv[1]):
            before = a.nodes.get(node)
            # below a second, the ratio measures noise, not growth
            if before and t >= 1.0 and t / before > rows:
                named = True
                print(
                    f"    GROWS FASTER THAN ITS INPUT in the build: {node} {before:.1f}s -> {t:.1f}s"
                )
                # In the build a node shares 2 cores with up to 3 others: re-time it alone
                # at both scales to tell its own growth from the neighbours'.
                try:
                    first, second = alone(a, node), alone(b, node)
                except (RuntimeError, OSError, KeyError, IndexError, ValueError) as exc:
                    print(f"      not re-timed alone: {type(exc).__name__}: {exc}")
                    continue
                if first is None or second is None:
                    print("      not re-timed alone (an incremental rebuild does no work)")
                else:
                    grew = second / max(first, 1e-9)
                    verdict = "grows faster" if grew > rows else "contention, not growth"
                    print(
                        f"      alone: {first:.1f}s -> {second:.1f}s "
                        f"(x{grew:.1f} for rows x{rows:.1f}: {verdict})"
                    )
    if not named:
        print("  no node grew faster than the rows landed")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench pipeline")
    parser.add_argument(
        "--scales",
        default=os.environ.get("FLOE_BENCH_PIPELINE_SCALES", "1,10,100,1000"),
        help="comma-separated multiples of the default demo (1 x = --scale 1000)",
    )
    parser.add_argument("--keep", action="store_true", help="keep each scale's lakehouse")
    parser.add_argument("--bound", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv or [])
    if args.bound is not None:
        bound_main(args.bound)
        return
    factors = [int(f) for f in args.scales.split(",") if f.strip()]
    print(f"scales {factors} (x {BASE_SCALE} customers, {DAYS} days), {_load()}", flush=True)
    scales: list[Scale] = []
    try:
        for factor in factors:  # each scale's report as soon as it is measured: runs are long
            scales.append(run_scale(factor))
            report(scales[-1])
            sys.stdout.flush()
        growth(scales)
    finally:
        for scale in scales:
            if scale.home is None:
                continue
            if args.keep:
                print(f"  kept {scale.home}")
            else:
                shutil.rmtree(scale.home, ignore_errors=True)
    print(f"\n{_load()}")


if __name__ == "__main__":
    main(sys.argv[1:])

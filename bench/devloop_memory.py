"""Memory of the warm session over many commands (a measurement, not a test).

`python -m bench.devloop_memory [COMMANDS]` (default 500): starts `floe dev` on a small
project in a scratch FLOE_HOME, sends it COMMANDS consecutive dbt commands through the
client protocol (alternately `dbt run -s one_view`, `dbt show -s one_table --limit 5`
and `dbt build -s one_table_with_2_tests`; no dbt client process, so only the server
is measured), and prints the resident memory of the server's Python process and of its
JVM after 0, 100, 200 ... commands. `FLOE_JVM_GC` and `FLOE_JVM_JIT` reach the server.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import jvm_knobs
from bench.bench_devloop import ROOT, _project

STEPS = [
    ["run", "-s", "one_view"],
    ["show", "-s", "one_table", "--limit", "5"],
    ["build", "-s", "one_table_with_2_tests"],
]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def jvm_of(pid: int) -> int | None:
    """The java process under ``pid`` (pyspark's gateway JVM)."""
    out = subprocess.run(["ps", "-eo", "pid,ppid,comm"], capture_output=True, text=True).stdout
    children: dict[int, list[tuple[int, str]]] = {}
    for line in out.splitlines()[1:]:
        child, parent, comm = line.split(None, 2)
        children.setdefault(int(parent), []).append((int(child), comm.strip()))
    stack = [pid]
    while stack:
        for child, comm in children.get(stack.pop(), []):
            if comm == "java":
                return child
            stack.append(child)
    return None


def main(commands: int = 500) -> None:
    from floe.dev.cli import start_detached
    from floe.dev.client import request, run_in_server
    from floe.dev.protocol import read_server_info
    from floe.runtime.settings import Settings

    work = Path(tempfile.mkdtemp(prefix="floe-devloop-memory-"))
    project = _project(work, "floe")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("FLOE_", "DBT_"))}
    env.update(
        FLOE_HOME=str(work / "home"),
        DBT_PROFILES_DIR=str(ROOT / "profiles"),
        DBT_PROJECT_DIR=str(project),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        FLOE_DRIVER_MEMORY=os.environ.get("FLOE_DRIVER_MEMORY", "2g"),
    )
    env.update(jvm_knobs())  # so their memory can be compared (ADR 0070)
    settings = Settings.from_env(env)
    saved = dict(os.environ)
    os.environ.update(env)
    try:
        pid, log = start_detached(settings)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    info = read_server_info(settings)
    assert info is not None
    try:
        sink = io.StringIO()
        if run_in_server(info, ["build"], cwd=str(project), env=env, out=sink) != 0:
            raise RuntimeError(f"the first build failed:\n{sink.getvalue()[-2000:]}")
        jvm = jvm_of(pid)
        started = time.perf_counter()
        print(f"server pid {pid}, JVM pid {jvm} ({settings.jvm_gc} collector); log {log}",
              flush=True)  # fmt: skip
        print(f"{'commands':>8s} {'python MiB':>11s} {'JVM MiB':>9s} {'elapsed s':>10s}")
        for done in range(commands + 1):
            if done % 100 == 0 or done in (1, 10):
                jvm_mb = rss_mb(jvm) if jvm else float("nan")
                print(f"{done:8d} {rss_mb(pid):11.0f} {jvm_mb:9.0f} "
                      f"{time.perf_counter() - started:10.0f}", flush=True)  # fmt: skip
            if done == commands:
                break
            sink = io.StringIO()
            code = run_in_server(info, STEPS[done % len(STEPS)], cwd=str(project), env=env,
                                 out=sink)  # fmt: skip
            if code != 0:
                raise RuntimeError(f"command {done} failed:\n{sink.getvalue()[-2000:]}")
        print(f"status: {request(info, 'status')}")
    finally:
        request(info, "stop")
        time.sleep(5)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)

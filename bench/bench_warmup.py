"""Where the first raw models' time goes: the driver JVM's CPU by thread kind.

`python -m bench warmup` runs `floe build` (the demo at scale 1) in a scratch home and reads
the JVM's per-thread CPU (`/proc/<pid>/task/*/stat`) when the first dbt node starts and
when the fourth node finishes. The first four raw models start together and finish
within a fraction of a second of each other. The difference between the two readings,
grouped by thread name, shows what the cores did in that window:
* the JIT compilers (C1, C2);
* the dbt threads' driver-side Spark work (py4j `Thread-N`: analysis, planning, the
  Iceberg catalog);
* the executor tasks;
* the garbage collector.

It prints the window's wall time and the JVM's share of the machine's cores.
"""

from __future__ import annotations

import collections
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.bench_decode import load

ROOT = Path(__file__).resolve().parents[1]
FIRST = "1 of "
FOURTH_DONE = re.compile(r"\b4 of \d+ OK ")
BUILD_LINE = re.compile(r"dbt build: [0-9.]+s, first node after [0-9.]+s")


def _jvm_pid(home: str) -> int | None:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"java") and any(home.encode() in a for a in argv):
            return int(pid)
    return None


def _threads(pid: int) -> collections.Counter[str]:
    """CPU seconds of the process's threads, by name without its number."""
    tick = os.sysconf("SC_CLK_TCK")
    out: collections.Counter[str] = collections.Counter()
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            name = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
            fields = Path(f"/proc/{pid}/task/{tid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # the thread ended between the listing and the read
        out[re.sub(r"[#\-]?\d+$", "", name).strip()] += (int(fields[11]) + int(fields[12])) / tick
    return out


def _wait(log: Path, proc: subprocess.Popen, found: object) -> None:
    while proc.poll() is None:
        text = log.read_text(errors="replace")
        if found(text):  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise RuntimeError(f"floe build ended before the window closed:\n{log.read_text()[-2000:]}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="floe-bench-warmup-") as tmp:
        home, log = os.path.join(tmp, "home"), Path(tmp) / "build.log"
        env = {**os.environ, "FLOE_HOME": home}
        for key in ("FLOE_WAREHOUSE", "FLOE_CATALOG_URI", "FLOE_LANDING"):
            env.pop(key, None)
        with log.open("w") as out:
            floe = str(Path(sys.executable).with_name("floe"))
            proc = subprocess.Popen(
                [floe, "build"], cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT
            )
            try:
                _wait(log, proc, lambda text: FIRST in text)
                pid = _jvm_pid(home)
                if pid is None:
                    raise RuntimeError("no driver JVM found for the build")
                before, started = _threads(pid), time.perf_counter()
                _wait(log, proc, lambda text: FOURTH_DONE.search(text) is not None)
                after, window = _threads(pid), time.perf_counter() - started
            finally:
                proc.wait()
        used = {name: after[name] - before.get(name, 0.0) for name in after}
        total = sum(used.values())
        cores = os.cpu_count() or 1
        print(
            f"first four raw models: {window:.1f}s wall; driver JVM {total:.1f} core-seconds "
            f"of {window * cores:.1f} ({cores} cores)  [{load()}]"
        )
        for name, seconds in sorted(used.items(), key=lambda kv: -kv[1])[:12]:
            print(f"  {seconds:6.2f}s  {seconds / total:5.1%}  {name}")
        jit = sum(s for n, s in used.items() if "CompilerThre" in n)
        print(f"  JIT compilers together: {jit:.1f}s ({jit / total:.0%} of the JVM's CPU)")
        whole = BUILD_LINE.search(log.read_text(errors="replace"))
        if whole:
            print(f"the whole build: {whole.group(0)}")

"""The bound a JVM decoder would have: Avro decode per CPU-second in the JVM vs fastavro.

ADR 0044 names a decoder in the JVM (ADR 0010) as the step that remains for stream
decode. Before building it, this measures what it would start from, on payloads made as
``bench_decode`` makes them (UnicornRideRequest, the demo's Avro stream):

* **fastavro**: a bare single-core loop, ``schemaless_reader`` over each payload (the bound
  ``bench_decode`` compares floe's Python decoder with);
* **JVM**: a bare single-thread loop, Avro's ``GenericDatumReader`` (the avro jar pyspark
  bundles) over the same bytes, compiled with ``javac`` at run time
  (``bench/jvm/AvroDecodeLoop.java``), timed in the JVM process's CPU time (its JIT and
  GC threads included, as ``process_time`` counts fastavro's whole process), the loop
  thread's own CPU time beside it; the first round (class loading, JIT) and the best warm
  round are both printed.

Prints records per CPU-second for each and the JVM / fastavro ratio, with the load
average. Skipped (with the reason) when no ``javac`` is on the PATH.

    python -m bench jvm_avro
"""

from __future__ import annotations

import io
import json
import os
import random
import shutil
import struct
import subprocess
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
POOL = 5_000  # distinct payloads, cycled (as bench_decode)
N = 300_000  # decodes per round
ROUNDS = 5


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}/{fifteen:.1f}"


def payloads(state: Path) -> list[bytes]:
    from floe.generator.demo.streams import _unicorn
    from floe.registry import codec
    from floe.registry.sync import schemas_dir, sync_local_registry

    registry = sync_local_registry(state, schemas_dir(ROOT))
    version = registry.versions("unicorn_ride_request", "floe")[-1]
    rng = random.Random(7)
    return [
        codec.encode_payload(_unicorn(rng, i, datetime(2022, 7, 1), 1), version)
        for i in range(POOL)
    ]


def fastavro_loop(pool: list[bytes], schema_text: str) -> float:
    import fastavro

    schema = fastavro.parse_schema(json.loads(schema_text))
    best = 0.0
    for _ in range(3):
        started = time.process_time()
        for k in range(N):
            fastavro.schemaless_reader(io.BytesIO(pool[k % POOL]), schema, None)
        best = max(best, N / (time.process_time() - started))
    return best


def jvm_loop(pool: list[bytes], schema_path: Path, work: Path) -> list[tuple[float, float]]:
    """Each round's records per CPU-second of the JVM loop: (process, loop thread)."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    wanted = (
        "avro-1",
        "jackson-core-2",
        "jackson-databind-2",
        "jackson-annotations-2",
        "slf4j-api-",
        "commons-compress-",
    )
    classpath = [str(j) for j in sorted(jars.glob("*.jar")) if j.name.startswith(wanted)]
    data = work / "payloads.bin"
    with data.open("wb") as out:
        for payload in pool:
            out.write(struct.pack(">i", len(payload)))
            out.write(payload)
    source = Path(__file__).parent / "jvm" / "AvroDecodeLoop.java"
    cp = os.pathsep.join(classpath)
    subprocess.run(["javac", "-cp", cp, "-d", str(work), str(source)], check=True)
    run = subprocess.run(
        [
            "java",
            "-cp",
            cp + os.pathsep + str(work),
            "AvroDecodeLoop",
            str(schema_path),
            str(data),
            str(N),
            str(ROUNDS),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    return [
        (float(line.split()[2]), float(line.split()[3]))
        for line in run.stdout.splitlines()
        if line.startswith("ROUND")
    ]


def main() -> None:
    if shutil.which("javac") is None or shutil.which("java") is None:
        print("skipped: no javac/java on the PATH (a JDK is needed to compile the loop)")
        return
    schema_path = ROOT / "schemas/floe/unicorn_ride_request/v1.avsc"
    with tempfile.TemporaryDirectory(prefix="floe-bench-jvm-avro-") as scratch:
        work = Path(scratch)
        pool = payloads(work / "state")
        py = fastavro_loop(pool, schema_path.read_text())
        print(f"fastavro loop: {py:,.0f} records per CPU-second  [{_load()}]")
        rounds = jvm_loop(pool, schema_path, work)
        (first, first_thread), (warm, warm_thread) = rounds[0], max(rounds[1:])
        print(
            f"JVM loop (GenericDatumReader), records per process CPU-second: first round "
            f"{first:,.0f}, best warm round {warm:,.0f} (loop thread alone: "
            f"{first_thread:,.0f}, {warm_thread:,.0f})  [{_load()}]"
        )
        print(f"ratio JVM / fastavro: first round {first / py:.2f}, warm {warm / py:.2f}")


if __name__ == "__main__":
    main()

"""Decode throughput: framed UnicornRideRequest records from landed files into Iceberg.

N records (FLOE_BENCH_DECODE_N, default 1,000,000;
1 % zlib-compressed) landed as Kinesis JSONL, decoded by floe (JVM envelope parse,
mapInArrow fastavro decode, Arrow conversion) and appended to an Iceberg table —
against the bound: a plain single-core fastavro loop decoding the same payload bytes
in memory. Each Spark run is its own process (FLOE_SPARK_CORES=1 and 2) so the
1-core vs 2-core scaling is measured with a fresh JVM each time.

Prints records/s, throughput per core / fastavro loop (target >= 0.8) and the
2-core / 1-core scaling.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

POOL = 5_000  # distinct records; the landed files cycle through them
FILES = 16


def _land(landing: Path, n: int, registry_state: Path) -> list[bytes]:
    """Write n framed records as JSONL files; return the payload bytes of the pool."""
    import random

    from floe.feeds import find_feed, load_feeds
    from floe.feeds.kinds.stream import schemas_dir, stream_path, sync_local_registry
    from floe.generator.demo.streams import _unicorn
    from floe.registry import codec, wire
    from floe.runtime import Settings

    feed = find_feed(load_feeds(Settings.from_env().dbt_project_dir()), "unicorn_rides")
    registry = sync_local_registry(
        registry_state, schemas_dir(Settings.from_env().dbt_project_dir())
    )
    version = registry.latest("unicorn_ride_request")
    rng = random.Random(7)
    from datetime import datetime

    payloads, lines = [], []
    for i in range(POOL):
        record = _unicorn(rng, i, datetime(2022, 7, 1), 1)
        payload = codec.encode_payload(record, version)
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
                out.write(lines[k % POOL])
                out.write("\n")
        written += count
    return payloads


def fastavro_loop(payloads: list[bytes], n: int) -> float:
    """Records/s of a bare single-core fastavro loop over the same payload bytes."""
    import fastavro

    from floe.runtime import Settings

    schema = fastavro.parse_schema(
        json.loads(
            (
                Settings.from_env().dbt_project_dir() / "schemas/floe/unicorn_ride_request/v1.avsc"
            ).read_text()
        )
    )
    compressed = {i: zlib.compress(p) for i, p in enumerate(payloads) if i % 100 == 0}
    reader = fastavro.schemaless_reader
    started = time.perf_counter()
    for k in range(n):
        i = k % len(payloads)
        data = zlib.decompress(compressed[i]) if i in compressed else payloads[i]
        reader(io.BytesIO(data), schema, None)
    return n / (time.perf_counter() - started)


def spark_run() -> None:
    """Child process: decode everything landed into raw.unicorn_rides; print JSON timing."""
    from floe.feeds import find_feed, load_feeds
    from floe.feeds.ingest import ingest
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    spark = get_spark(settings)
    feed = find_feed(load_feeds(Settings.from_env().dbt_project_dir()), "unicorn_rides")
    started = time.perf_counter()
    result = ingest(
        spark,
        feed,
        raw_exists=False,
        settings=settings,
        project_dir=Settings.from_env().dbt_project_dir(),
    )
    result.rows.writeTo("raw.unicorn_rides").using("iceberg").createOrReplace()
    elapsed = time.perf_counter() - started
    decoded = sum(c.loaded for c in result.counts.values())
    print(json.dumps({"seconds": elapsed, "decoded": decoded}))


def _child(cores: int, home: Path, landing: Path) -> dict:
    env = dict(os.environ)
    env.update(
        FLOE_SPARK_CORES=str(cores),
        FLOE_HOME=str(home),
        FLOE_LANDING=str(landing),
        FLOE_DRIVER_MEMORY=os.environ.get("FLOE_BENCH_DRIVER_MEMORY", "2g"),
        PYSPARK_PYTHON=sys.executable,
    )
    for key in ("FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        env.pop(key, None)
    (home / "state").mkdir(parents=True, exist_ok=True)
    out = subprocess.run(
        [sys.executable, "-c", "import bench.bench_decode as b; b.spark_run()"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    n = int(os.environ.get("FLOE_BENCH_DECODE_N", "1000000"))
    with tempfile.TemporaryDirectory(prefix="floe-bench-decode-") as tmp:
        root = Path(tmp)
        landing = root / "landing"
        t0 = time.perf_counter()
        payloads = _land(landing, n, root / "state")
        print(f"landed {n:,} framed UnicornRideRequest records in {time.perf_counter() - t0:.1f}s")
        loop_rps = fastavro_loop(payloads, min(n, 300_000))
        print(f"fastavro loop, 1 core, in memory: {loop_rps:,.0f} records/s")
        results = {}
        for cores in (1, 2):
            home = root / f"home{cores}"
            (home / "state").mkdir(parents=True)
            # Same registry file for the child (stable uuid5 UUIDs anyway).
            (home / "state" / "registry").mkdir()
            for f in (root / "state" / "registry").iterdir():
                (home / "state" / "registry" / f.name).write_bytes(f.read_bytes())
            res = _child(cores, home, landing)
            assert res["decoded"] == n, res
            rps = n / res["seconds"]
            results[cores] = rps
            print(
                f"floe decode -> Iceberg, {cores} core(s): {rps:,.0f} records/s "
                f"({res['seconds']:.1f}s), per core {rps / cores:,.0f}"
            )
        print(
            f"ratio per core vs fastavro loop (1 core): {results[1] / loop_rps:.2f} (target >= 0.8)"
        )
        print(f"ratio per core vs fastavro loop (2 cores): {results[2] / 2 / loop_rps:.2f}")
        print(f"scaling 2 cores / 1 core: {results[2] / results[1]:.2f}")
        # Scaling means nothing on a machine whose cores are busy with other jobs.
        print(f"load average (1/5/15 min) at the end: {os.getloadavg()}")


if __name__ == "__main__":
    main()

"""Codec throughput: frame/unframe of seed-shaped records (Avro vs JSON, zlib vs none).

Scale with FLOE_BENCH_CODEC_N (records per case, default 20000). Prints records/s per
case and the ratios that matter for ingestion: how much zlib and JSON validation cost,
and how much the per-definition schema cache saves over re-parsing per record.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

from floe.registry import codec
from floe.registry.backends import FileRegistry, SchemaDef
from floe.registry.samples import unicorn_ride_request

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas" / "floe"


def _weather(i: int) -> dict:
    return {
        "temperature": 60 + i % 50,
        "location": {"city": "Phoenix", "state": "Arizona"},
        "timestamp": 1627335205 + i,
    }


def _rate(n: int, fn) -> float:
    started = time.perf_counter()
    fn()
    return n / (time.perf_counter() - started)


def main() -> None:
    n = int(os.environ.get("FLOE_BENCH_CODEC_N", "20000"))
    with tempfile.TemporaryDirectory() as tmp:
        reg = FileRegistry(tmp)
        for name, fmt, file in [
            ("unicorn_ride_request", "AVRO", "v1.avsc"),
            ("weather_report", "JSON", "v1.json"),
        ]:
            definition = json.loads((SCHEMAS / name / file).read_text())
            reg.register_version(SchemaDef(name=name, data_format=fmt, definition=definition))
        rates: dict[str, float] = {}
        for label, version, make in [
            ("avro", reg.latest("unicorn_ride_request"), unicorn_ride_request),
            ("json", reg.latest("weather_report"), _weather),
        ]:
            records = [make(i) for i in range(n)]
            for compress in (False, True):
                key = f"{label}{'+zlib' if compress else ''}"
                framed: list[bytes] = []
                rates[f"frame {key}"] = _rate(
                    n,
                    lambda v=version, c=compress, f=framed, rs=records: f.extend(
                        codec.frame(r, v, compress=c) for r in rs
                    ),
                )
                rates[f"unframe {key}"] = _rate(
                    n, lambda f=framed: [codec.unframe(d, reg) for d in f]
                )
            if label == "json":
                rates["unframe json (no validation)"] = _rate(
                    n, lambda f=framed: [codec.unframe(d, reg, validate=False) for d in f]
                )
            # What the cache saves: clear it before every record.
            sample = framed[: max(1, n // 4)]

            def uncached(sample=sample) -> None:
                for d in sample:
                    codec._avro_schema.cache_clear()
                    codec._json_validator.cache_clear()
                    codec.unframe(d, reg)

            rates[f"unframe {label}+zlib uncached"] = _rate(len(sample), uncached)
    for key, rate in rates.items():
        print(f"{key:<34} {rate:>12,.0f} records/s")
    print(
        f"zlib cost on Avro unframe:        x{rates['unframe avro'] / rates['unframe avro+zlib']:.2f}"
    )
    print(
        f"JSON Schema validation cost:      x{rates['unframe json (no validation)'] / rates['unframe json+zlib']:.2f}"
    )
    print(
        f"schema cache speed-up (Avro):     x{rates['unframe avro+zlib'] / rates['unframe avro+zlib uncached']:.1f}"
    )
    print(
        f"schema cache speed-up (JSON):     x{rates['unframe json+zlib'] / rates['unframe json+zlib uncached']:.1f}"
    )


if __name__ == "__main__":
    main()

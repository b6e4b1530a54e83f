"""Streams and reference data of the landing zone (SPEC §3), framed by the registry.

Six Kinesis-style streams land as JSONL under
``streams/<stream>/ingest_year=YYYY/ingest_month=MM/ingest_day=DD/ingest_hour=HH/``,
one record a line: ``{"sequenceNumber", "partitionKey", "approximateArrivalTimestamp",
"data"}`` where ``data`` is base64 of a Glue-framed payload (codec.frame) whose schema
UUID comes from the local registry (synced from ``schemas/`` first). About 5 % of
records are zlib-compressed. ``weather`` switches from v1 to v2 and ``movies_cdc``
from v1 to v2 (adds ``COUNTRY``) half-way through the days.

A share ``bad_share`` of records is deliberately broken, cycling through every failure
class that applies to the stream (:data:`BAD_CLASSES`); when ``bad_share > 0`` the first
file of each stream carries one record of each applicable class, so small runs cover
them all.

``reference/product_priority/product_priority_<date>.csv`` (``item, price, priority,
updated_at``) is a full extract per day on which priorities changed, each one followed
by the ``_CHANGED`` flag (the seed's change file).
"""

from __future__ import annotations

import base64
import json
import random
import uuid
import zlib
from datetime import date, datetime, timedelta
from pathlib import Path

from floe.generator.base import GenerateOptions, WriteReport, write_landed
from floe.registry import codec, wire
from floe.registry.backends import SchemaVersion

HOURS = (0, 6, 12, 18)  # ingest hours with a file per stream per day
COMPRESSED_SHARE = 0.05
WIRE_CLASSES = ("bad_base64", "bad_header", "bad_zlib", "unknown_schema")
AVRO_CLASSES = ("avro_decode",)
JSON_CLASSES = ("json_parse", "schema_violation", "cast_failure")
# stream -> (registry schema, data format)
STREAM_SCHEMAS = {
    "ventilator": "ventilator",
    "unicorn_rides": "unicorn_ride_request",
    "weather": "weather_report",
    "movies_cdc": "movies",
    "customer_events": "customer_event",
    "orders": "orders",
}
AVRO_STREAMS = {"unicorn_rides", "movies_cdc"}
DISHES = ("pizza", "burger", "salad", "donut", "ice-cream")
PRICES = {"pizza": 120, "burger": 100, "salad": 60, "donut": 20, "ice-cream": 40}
PRIORITIES = ("low", "medium", "high")


def bad_classes(stream: str) -> tuple[str, ...]:
    """Failure classes a stream can exhibit (Avro vs JSON payload classes differ)."""
    payload = AVRO_CLASSES if stream in AVRO_STREAMS else JSON_CLASSES
    return WIRE_CLASSES + payload


BAD_CLASSES = {s: bad_classes(s) for s in STREAM_SCHEMAS}


def records_per_file(scale: int) -> int:
    """~scale/4 records per stream per day (hundreds at scale 1000), spread over HOURS."""
    return max(3, scale // (4 * len(HOURS)))


# --------------------------------------------------------------------------- records


def _ventilator(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "ventilatorid": rng.randint(0, 100),
        "eventtime": ts.strftime("%Y-%m-%d %H:%M:%S"),
        "serialnumber": str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "pressurecontrol": rng.randint(5, 30),
        "o2stats": rng.randint(92, 98),
        "minutevolume": rng.randint(5, 8),
        "manufacturer": rng.choice(["3M", "GE", "Vyaire", "Getinge"]),
    }


def _unicorn(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "request_id": i,
        "pickup_address": rng.choice(["Melbourne, Victoria, Australia", "Geelong, VIC"]),
        "destination_address": rng.choice(["Sydney, NSW, Aus", "Canberra, ACT"]),
        "ride_fare": round(rng.uniform(10, 1500), 2),
        "ride_duration": rng.randint(5, 240),
        "preferred_unicorn_color": rng.choice(["WHITE", "BLACK", "RED", "BLUE", "GREY"]),
        "recommended_unicorn": {
            "unicorn_id": i * 2,
            "color": rng.choice(["WHITE", "RED", "BLUE"]),
            "stars_rating": rng.choice([None, 3, 4, 5]),
        },
        "customer": {
            "customer_account_no": 1000 + rng.randint(0, 500),
            "first_name": rng.choice(["Dummy", "Ava", "Ben"]),
            "middle_name": rng.choice([None, "J"]),
            "last_name": rng.choice(["User", "Ng", "Tan"]),
            "email_addresses": rng.choice([None, [f"user{i}@example.com"]]),
            "customer_address": "Flinders Street Station",
            "mode_of_payment": rng.choice(["CARD", "CASH"]),
            "customer_rating": rng.choice([None, 4, 5]),
        },
    }


CITIES = (
    ("Phoenix", "Arizona", "USA"),
    ("Orlando", "Florida", "USA"),
    ("Toronto", "Ontario", "Canada"),
    ("Perth", "Western Australia", "Australia"),
)


def _weather(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    city, state, country = rng.choice(CITIES)
    location = {"city": city, "state": state}
    if version >= 2:
        location["country"] = country
    record = {
        "temperature": rng.randint(-10, 115),
        "location": location,
        "timestamp": int(ts.timestamp()),
    }
    if rng.random() < 0.2:
        record["windSpeed"] = rng.randint(0, 60)  # open root content model (seed sample)
    return record


class _Movies:
    """Debezium-flattened change events over a small movie table: c, then u / d."""

    TITLES = ("Dune", "Heat", "Up", "Alien", "Big", "Jaws", "Rocky", "Tron", "Coco", "Ran")

    def __init__(self) -> None:
        self.live: dict[int, dict] = {}
        self.next_id = 1

    def __call__(self, rng: random.Random, i: int, ts: datetime, version: int) -> dict:
        source_ts = int(ts.timestamp() * 1000)
        roll = rng.random()
        if not self.live or roll < 0.4:
            movie_id, self.next_id = self.next_id, self.next_id + 1
            row = {
                "movie_id": movie_id,
                "title": f"{rng.choice(self.TITLES)} {movie_id}",
                "release_year": rng.randint(1970, 2022),
            }
            op = "c"
        elif roll < 0.9:
            movie_id = rng.choice(sorted(self.live))
            row = dict(self.live[movie_id], release_year=rng.randint(1970, 2022))
            op = "u"
        else:
            movie_id = rng.choice(sorted(self.live))
            row = dict(self.live[movie_id])
            op = "d"
        if version >= 2:
            row["COUNTRY"] = rng.choice(["US", "FR", "JP", "IN"])
        else:
            row.pop("COUNTRY", None)
        if op == "d":
            self.live.pop(movie_id, None)
        else:
            self.live[movie_id] = row
        return {
            **row,
            "__op": op,
            "__source_ts_ms": source_ts,
            "__deleted": "true" if op == "d" else "false",
        }


FIRST = ("Ava", "Ben", "Chloe", "Dan", "Ema", "Finn")
LAST = ("Ng", "Ortiz", "Patel", "Quinn", "Rossi")


def _customer_event(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "year": str(ts.year),
        "month": str(ts.month),
        "day": str(ts.day),
        "hour": str(ts.hour),
        "minute": str(ts.minute),
        "customerid": rng.randint(5023, 5023 + 200),
        "firstname": rng.choice(FIRST),
        "lastname": rng.choice(LAST),
        "dateofbirth": f"{rng.randint(1950, 2004)}-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}",
        "city": rng.choice(["Seattle", "Austin", "Lyon"]),
        "buildingnumber": rng.randint(63, 947),
        "streetaddress": f"{rng.randint(1, 99)} Main St",
        "state": rng.choice(["WA", "TX", "ARA"]),
        "zipcode": f"{rng.randint(10000, 99999)}",
        "country": rng.choice(["USA", "France"]),
        "countrycode": rng.choice(["US", "FR"]),
        "phonenumber": f"+1-555-{rng.randint(1000, 9999)}",
        "productname": rng.choice(["Chair", "Lamp", "Desk"]),
        "transactionamount": rng.randint(10, 150),
    }


def _order(rng: random.Random, i: int, ts: datetime, version: int) -> dict:
    return {
        "dish": rng.choice(DISHES),
        "cost": rng.randint(10, 150),
        "customer_id": rng.randint(1, 500),
    }


# --------------------------------------------------------------------------- bad records


def _broken(
    kind: str, stream: str, record: dict, version: SchemaVersion, rng: random.Random
) -> str:
    """The landed ``data`` text of a record broken in the ``kind`` way."""
    good = codec.frame(record, version)
    if kind == "bad_base64":
        return base64.b64encode(good).decode()[:-3] + "!@#"
    if kind == "bad_header":
        return base64.b64encode(b"\x07" + good[1:]).decode()
    if kind == "bad_zlib":
        body = zlib.compress(codec.encode_payload(record, version))
        framed = bytes((wire.GLUE_HEADER_VERSION, wire.COMPRESSION_ZLIB)) + version.uuid.bytes
        return base64.b64encode(framed + body[: len(body) // 2]).decode()
    if kind == "unknown_schema":
        unknown = uuid.UUID(int=rng.getrandbits(128), version=4)
        return base64.b64encode(good[:2] + unknown.bytes + good[18:]).decode()
    if kind == "avro_decode":
        return base64.b64encode(good[: 18 + max(1, (len(good) - 18) // 3)]).decode()
    if kind == "json_parse":
        payload = codec.encode_payload(record, version)[:-5] + b"{,"
        return base64.b64encode(wire.encode_glue(payload, version.uuid)).decode()
    if kind == "schema_violation":
        field = {
            "ventilator": "ventilatorid",
            "weather": "temperature",
            "customer_events": "customerid",
            "orders": "cost",
        }[stream]
        payload = json.dumps({**record, field: "not-a-number"}).encode()
        return base64.b64encode(wire.encode_glue(payload, version.uuid)).decode()
    if kind == "cast_failure":
        # Valid under the JSON Schema, but no Spark type holds it: an integer beyond
        # bigint, or (ventilator) an eventtime that is not a timestamp.
        if stream == "ventilator":
            broken = {**record, "eventtime": "2022-13-45 99:00:00"}
        else:
            field = {"weather": "timestamp", "customer_events": "customerid", "orders": "cost"}
            broken = {**record, field[stream]: 2**70}
        return base64.b64encode(codec.frame(broken, version)).decode()
    raise ValueError(f"unknown failure class {kind!r}")


# --------------------------------------------------------------------------- writers

MAKERS = {
    "ventilator": lambda: _ventilator,
    "unicorn_rides": lambda: _unicorn,
    "weather": lambda: _weather,
    "movies_cdc": _Movies,
    "customer_events": lambda: _customer_event,
    "orders": lambda: _order,
}


def _versions(opts: GenerateOptions) -> dict[str, list[SchemaVersion]]:
    from floe.decode.specs import sync_local_registry
    from floe.runtime import Settings

    registry = sync_local_registry(Settings.from_env().state_dir)
    return {stream: registry.versions(schema) for stream, schema in STREAM_SCHEMAS.items()}


def _version_for(versions: list[SchemaVersion], day_index: int, days: int) -> SchemaVersion:
    """Multi-version streams switch to the latest version half-way through the days."""
    return versions[0] if day_index < max(1, days // 2) else versions[-1]


def stream_path(landing: Path, stream: str, hour_start: datetime, part: int = 0) -> Path:
    h = hour_start
    return (
        landing
        / "streams"
        / stream
        / f"ingest_year={h.year:04d}"
        / f"ingest_month={h.month:02d}"
        / f"ingest_day={h.day:02d}"
        / f"ingest_hour={h.hour:02d}"
        / f"{stream}-{h:%Y%m%d%H}-{part:04d}.jsonl"
    )


def generate_stream(
    opts: GenerateOptions, stream: str, versions: list[SchemaVersion], report: WriteReport
) -> None:
    rng = opts.rng(f"streams/{stream}")
    make = MAKERS[stream]()
    classes = BAD_CLASSES[stream]
    per_file = records_per_file(opts.scale)
    sequence = 49_000_000_000_000_000_000_000_000 + rng.randint(0, 10**6) * 10**12
    i = 0
    forced = list(classes) if opts.bad_share > 0 else []
    bad_cycle = 0
    for day_index, day in enumerate(opts.load_dates()):
        version = _version_for(versions, day_index, opts.days)
        for hour in HOURS:
            hour_start = datetime(day.year, day.month, day.day, hour)
            lines = []
            for n in range(per_file):
                i += 1
                sequence += rng.randint(1, 10**6)
                ts = hour_start + timedelta(seconds=int(n * 3600 / per_file) + rng.randint(0, 2))
                record = make(rng, i, ts, version.version_number)
                if forced:
                    kind = forced.pop(0)
                elif rng.random() < opts.bad_share:
                    kind, bad_cycle = classes[bad_cycle % len(classes)], bad_cycle + 1
                else:
                    kind = None
                if kind is None:
                    framed = codec.frame(record, version, compress=rng.random() < COMPRESSED_SHARE)
                    data = base64.b64encode(framed).decode()
                else:
                    data = _broken(kind, stream, record, version, rng)
                envelope = {
                    "sequenceNumber": str(sequence),
                    "partitionKey": f"key-{i % 16}",
                    "approximateArrivalTimestamp": ts.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
                    "data": data,
                }
                lines.append(json.dumps(envelope, separators=(",", ":")))
            body = ("\n".join(lines) + "\n").encode()
            write_landed(stream_path(opts.landing, stream, hour_start), body, report)


# --------------------------------------------------------------------------- reference


def priority_history(opts: GenerateOptions) -> list[tuple[date, dict[str, str]]]:
    """(load date, item -> priority) for every day on which the reference changed."""
    rng = opts.rng("reference/product_priority")
    current = {item: rng.choice(PRIORITIES[:2]) for item in DISHES}
    history = [(opts.start, dict(current))]
    for day in opts.load_dates()[1:]:
        item = rng.choice(DISHES)
        # burger goes medium -> high on day 2, as in the seed's update-item example
        if day == opts.start + timedelta(days=1):
            item, new = "burger", "high" if current["burger"] != "high" else "medium"
        else:
            new = rng.choice([p for p in PRIORITIES if p != current[item]])
        current[item] = new
        history.append((day, dict(current)))
    return history


def generate_reference(opts: GenerateOptions, report: WriteReport) -> None:
    folder = opts.landing / "reference" / "product_priority"
    for day, priorities in priority_history(opts):
        rows = ["item,price,priority,updated_at"]
        rows += [
            f"{item},{PRICES[item]},{priorities[item]},{day.isoformat()} 00:00:00"
            for item in DISHES
        ]
        write_landed(
            folder / f"product_priority_{day.isoformat()}.csv",
            ("\n".join(rows) + "\n").encode(),
            report,
        )
    if report.written and any(p.parent == folder for p in report.written):
        # The change flag: any new reference file means consumers must refresh.
        flag = folder / "_CHANGED"
        flag.write_bytes(b"")
        report.written.append(flag)


def generate(opts: GenerateOptions) -> WriteReport:
    report = WriteReport([], [])
    versions = _versions(opts)
    for stream in STREAM_SCHEMAS:
        generate_stream(opts, stream, versions[stream], report)
    generate_reference(opts, report)
    return report

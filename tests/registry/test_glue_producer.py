"""Records framed by an independent producer against Glue decode into raw.<stream>.

The producer is PyPI ``aws-glue-schema-registry`` (not floe's code): it registers the
schemas in Glue — a real ``moto_server`` on loopback — and frames each record with the
version UUID Glue assigned. floe, configured with ``FLOE_REGISTRY_BACKEND=glue``,
resolves those UUIDs in the same Glue from its Spark executors. Avro and JSON,
compressed and not; the raw rows are compared field by field.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import boto3
import pytest

from floe.registry.samples import unicorn_ride_request
from tests.decode import hostile
from tests.helpers import ROOT, feed

pytestmark = pytest.mark.integration

SCHEMAS = ROOT / "schemas" / "floe"
AWS_VARS = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION")
WEATHER = [
    {"temperature": 89, "location": {"city": "Orlando", "state": "Florida"}, "timestamp": 1},
    {
        "temperature": -4,
        "location": {"city": "Oslo", "state": "Oslo", "country": "NO"},
        "timestamp": 1627335205,
        "windSpeed": 50,
    },
]


def _folder(landing: Path, name: str) -> Path:
    folder = landing / "streams" / name / "ingest_year=2022/ingest_month=07"
    folder = folder / "ingest_day=01/ingest_hour=00"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _produce(client, schema_name: str, schema, records: list, compress_every: int) -> list[bytes]:
    """Frame ``records`` the way the library's producers do (its own serializer)."""
    from aws_schema_registry import DataAndSchema, KafkaSerializer
    from aws_schema_registry.codec import decode, encode

    serializer = KafkaSerializer(client, schema_naming_strategy=lambda *_: schema_name)
    framed = []
    for n, record in enumerate(records):
        data = serializer.serialize("topic", DataAndSchema(record, schema))
        if n % compress_every == 0:  # the library's zlib framing (its codec)
            payload, version_id = decode(data)
            data = encode(payload, version_id, compression=True)
        framed.append(data)
    return framed


@pytest.fixture
def glue_lakehouse(spark, moto_reset, tmp_path):
    """A lakehouse whose decode resolves UUIDs in moto's Glue; executors get the
    (fake) credentials through the environment Spark gives them."""
    from floe.runtime import Settings, use_settings

    settings = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path / "floe"),
            "FLOE_SETTLE_SECONDS": "0",
            "FLOE_REGISTRY_BACKEND": "glue",
            "FLOE_GLUE_ENDPOINT": moto_reset,
            "AWS_REGION": "us-east-1",
        }
    )
    use_settings(spark, settings)
    env = spark.sparkContext.environment
    saved = {k: env.get(k) for k in AWS_VARS}
    env.update({k: os.environ[k] for k in AWS_VARS})
    yield settings
    for k, v in saved.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v


def test_independent_glue_producer_records_decode_field_by_field(spark, glue_lakehouse):
    from aws_schema_registry import SchemaRegistryClient
    from aws_schema_registry.avro import AvroSchema
    from aws_schema_registry.jsonschema import JsonSchema

    from floe.feeds.ingest import ingest, reconcile_or_raise

    settings = glue_lakehouse
    glue = boto3.client("glue", endpoint_url=settings.glue_endpoint, region_name="us-east-1")
    glue.create_registry(RegistryName="floe")
    client = SchemaRegistryClient(glue, registry_name="floe")

    rides = [unicorn_ride_request(i) for i in range(6)]
    rides[1]["customer"]["middle_name"] = "J"
    rides[2]["customer"]["email_addresses"] = None
    rides[3]["recommended_unicorn"]["stars_rating"] = None
    avro = AvroSchema((SCHEMAS / "unicorn_ride_request" / "v1.avsc").read_text())
    ride_frames = _produce(client, "unicorn_ride_request", avro, rides, compress_every=2)
    weather_schema = JsonSchema((SCHEMAS / "weather_report" / "v2.json").read_text())
    weather_frames = _produce(client, "weather_report", weather_schema, WEATHER, compress_every=2)

    # The UUIDs in the frames are Glue's, not floe's derived ones.
    glue_id = glue.get_schema_by_definition(
        SchemaId={"RegistryName": "floe", "SchemaName": "unicorn_ride_request"},
        SchemaDefinition=str(avro),
    )["SchemaVersionId"]
    assert ride_frames[0][2:18].hex() == glue_id.replace("-", "")
    assert {f[1] for f in ride_frames} == {0, 5}  # compressed and not

    for name, frames in (("unicorn_rides", ride_frames), ("weather", weather_frames)):
        lines = [hostile.envelope(hostile.b64(f), n) for n, f in enumerate(frames)]
        (_folder(settings.landing, name) / f"{name}.jsonl").write_bytes(b"\n".join(lines) + b"\n")

    for name in ("unicorn_rides", "weather"):
        f = feed(name)
        result = ingest(spark, f, raw_exists=False, settings=settings, project_dir=ROOT)
        result.rows.writeTo(f.raw_table).using("iceberg").create()
        assert reconcile_or_raise(spark, f, always=True) == 0
    assert spark.table("raw.quarantine").count() == 0

    got = {
        r["request_id"]: r.asDict(recursive=True)
        for r in spark.table("raw.unicorn_rides").collect()
    }
    assert sorted(got) == [r["request_id"] for r in rides]
    for ride in rides:
        row = got[ride["request_id"]]
        for field, value in ride.items():
            if field == "ride_fare":
                assert row[field] == pytest.approx(value), field
            else:
                assert row[field] == value, (ride["request_id"], field)
        assert row["_schema_version"] == 1
        assert row["_sequence_number"] == str(10**20 + rides.index(ride))

    weather = {
        r["temperature"]: r.asDict(recursive=True) for r in spark.table("raw.weather").collect()
    }
    for record in WEATHER:
        row = weather[record["temperature"]]
        assert row["timestamp"] == record["timestamp"]
        assert row["location"] == {"country": None, **record["location"]}


def test_unreachable_registry_fails_naming_the_endpoint(spark, lakehouse, tmp_path):
    from floe.feeds.ingest import ingest
    from floe.registry.backends import RegistryUnavailableError
    from floe.runtime import Settings

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed once the block ends: nothing listens there
    endpoint = f"http://127.0.0.1:{port}"
    settings = Settings.from_env(
        {
            "FLOE_HOME": str(lakehouse.home),
            "FLOE_SETTLE_SECONDS": "0",
            "FLOE_REGISTRY_BACKEND": "glue",
            "FLOE_GLUE_ENDPOINT": endpoint,
        }
    )
    folder = _folder(settings.landing, "weather")
    (folder / "w.jsonl").write_text(json.dumps({"data": "AwAAAA=="}) + "\n")
    with pytest.raises(RegistryUnavailableError, match=f"Glue Schema Registry at {endpoint}"):
        ingest(spark, feed("weather"), raw_exists=False, settings=settings, project_dir=ROOT)
    # nothing was recorded: the file is not done
    assert spark.table("raw.landed_files").count() == 0


def test_executors_fail_too_when_the_registry_goes_away(tmp_path):
    """A registry lost mid-batch fails the task (and the build), it never quarantines."""
    from floe.decode.records import DecodeLimits, RecordDecoder, StreamSpec
    from floe.registry.backends import GlueRegistry, RegistryUnavailableError

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    registry = GlueRegistry(endpoint_url=f"http://127.0.0.1:{port}", region="us-east-1")
    decoder = RecordDecoder(StreamSpec("weather", "weather_report"), registry, DecodeLimits())
    framed = bytes((3, 0)) + bytes(16) + b"{}"
    with pytest.raises(RegistryUnavailableError, match=f"127.0.0.1:{port}"):
        decoder.decode(hostile.b64(framed))

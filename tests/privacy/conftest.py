"""A small built warehouse holding one marked data subject everywhere personal data lives.

`subject_warehouse` (module scope: each erasure module gets its own lakehouse) builds
the customer feeds (SCD2 history in marts.dim_customer) and the customer_events
stream (marts.fct_customer_purchases, merge-on-read), then lands extra stream records
for a customer of the master feed that has history: good purchase events (raw,
staging, mart, masked twin) and one record whose amount no raw column can hold
(raw.quarantine). Those records carry MARKER strings, so a scan can recognise the
subject's data by value wherever it ends up.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import ROOT, feed

MARKER = "Zebedee-Subject"
PHONE = "+1-555-9876543"
SELECT = ["+dim_customer_masked", "+fct_customer_purchases_masked"]
CUSTOMER_SELECT = ["+dim_customer_masked"]


@dataclass
class Warehouse:
    settings: Any
    manifest: Path
    subject_id: int
    other_id: int  # a second customer with history (rectify, crash tests)
    landed_subject_file: Path
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def subject(self) -> str:
        return f"customer_id={self.subject_id}"


def _customer_with_history(spark, skip: set[int]) -> int:
    rows = spark.sql(
        "select cast(customer_id as bigint) as id from marts.dim_customer "
        "group by customer_id having count(*) > 1 order by id"
    ).collect()
    ids = [int(r.id) for r in rows if int(r.id) not in skip]
    assert ids, "the generated customers have no SCD2 history"
    return ids[0]


def land_subject_events(settings, subject_id: int, hour: datetime, tag: str) -> Path:
    """A stream file of customer_events: 3 good records of ``subject_id`` (marked), 2 of
    other customers, and one of the subject that lands in raw.quarantine."""
    from floe.feeds.kinds import stream
    from floe.registry import codec
    from floe.registry.sync import schemas_dir, sync_local_registry

    events = feed("customer_events")
    s = stream.spec(events)
    registry = sync_local_registry(settings.state_dir, schemas_dir(ROOT))
    version = registry.versions(s.schema, s.registry)[-1]

    def record(cid: int, n: int, name: str) -> dict[str, Any]:
        return {
            "year": "2022", "month": "7", "day": str(hour.day), "hour": str(hour.hour),
            "minute": str(n), "customerid": cid, "firstname": name, "lastname": f"{tag}-{n}",
            "dateofbirth": "1970-01-01", "city": "Lyon", "buildingnumber": 100 + n,
            "streetaddress": f"{n} Subject St", "state": "ARA", "zipcode": "69001",
            "country": "France", "countrycode": "FR",
            "phonenumber": PHONE if cid == subject_id else f"+1-555-{1000 + n}",
            "productname": "Lamp", "transactionamount": 10 + n,
        }  # fmt: skip

    records = [
        record(subject_id, 1, MARKER),
        record(subject_id, 2, MARKER),
        record(5050, 3, "Other"),
        record(subject_id, 4, MARKER),
        record(5051, 5, "Other"),
    ]
    lines = []
    for i, rec in enumerate(records):
        data = base64.b64encode(codec.frame(rec, version)).decode()
        lines.append(_envelope(i, hour, data))
    broken = {**record(subject_id, 6, MARKER), "transactionamount": 2**70}
    lines.append(_envelope(9, hour, base64.b64encode(codec.frame(broken, version)).decode()))
    path = stream.stream_path(settings.landing, events, hour, part=7)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    os.utime(path, (hour.timestamp(), hour.timestamp()))
    return path


def _envelope(i: int, hour: datetime, data: str) -> str:
    return json.dumps(
        {
            "sequenceNumber": str(49_000_000_000_000_000_000_000_999_000 + i),
            "partitionKey": f"key-{i}",
            "approximateArrivalTimestamp": hour.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "data": data,
        },
        separators=(",", ":"),
    )


@pytest.fixture(scope="module")
def subject_warehouse(
    spark, tmp_path_factory: pytest.TempPathFactory, dbt_target_path: Path
) -> Iterator[Warehouse]:
    from floe.dbt_runner import run_dbt
    from floe.generator import GenerateOptions, generate
    from floe.runtime import Settings
    from tests.helpers import LOCATION_VARS, use_lakehouse

    previous = {k: os.environ.get(k) for k in LOCATION_VARS}
    # FLOE_PRIVACY_TEST_CACHE=<dir> (development only): build once, then start every
    # run from a copy of that build (same absolute paths: the catalog stores them).
    cache = os.environ.get("FLOE_PRIVACY_TEST_CACHE")
    home = Path(cache) / "work" if cache else tmp_path_factory.mktemp("privacy") / "floe"
    if cache and (Path(cache) / "built").is_dir():
        shutil.rmtree(home, ignore_errors=True)
        shutil.copytree(Path(cache) / "built", home)
        settings = Settings.from_env({"FLOE_HOME": str(home), "FLOE_SETTLE_SECONDS": "0"})
        use_lakehouse(spark, settings)
        info = json.loads((Path(cache) / "info.json").read_text())
        yield Warehouse(
            settings,
            Path(cache) / "manifest.json",
            info["subject"],
            info["other"],
            Path(info["file"]),
        )
        return
    settings = Settings.from_env({"FLOE_HOME": str(home), "FLOE_SETTLE_SECONDS": "0"})
    use_lakehouse(spark, settings)

    def build(select: list[str]) -> None:
        run = run_dbt(
            ["build", "-s", *select], project=ROOT, target_path=dbt_target_path, quiet=True
        )
        assert run.success, run.failures or run.exception

    generate(GenerateOptions(landing=settings.landing, days=3, scale=40), ["customers"])
    generate(
        GenerateOptions(landing=settings.landing, days=1, scale=40, bad_share=0.05),
        ["streams.customer_events"],
    )
    build(CUSTOMER_SELECT)
    subject_id = _customer_with_history(spark, set())
    other_id = _customer_with_history(spark, {subject_id})
    hour = datetime(2022, 7, 1, 23)
    path = land_subject_events(settings, subject_id, hour, "a")
    build(SELECT)
    if cache:
        shutil.copytree(home, Path(cache) / "built")
        shutil.copy(dbt_target_path / "manifest.json", Path(cache) / "manifest.json")
        info = {"subject": subject_id, "other": other_id, "file": str(path)}
        (Path(cache) / "info.json").write_text(json.dumps(info))
    yield Warehouse(settings, dbt_target_path / "manifest.json", subject_id, other_id, path)
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value

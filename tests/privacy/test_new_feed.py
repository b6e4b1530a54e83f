"""Privacy follows a new feed (docs/privacy.md, README "Adding a feed").

A copy of the project gets, from ``fixtures/new_feed``, a stream onboarded as the README
says — a registry schema with ``rider_id``, ``rider_email`` and ``support_phone``, a
sources YAML without privacy tags, its raw model — and an analytics engineer's staging
view and two marts that copy the rider (``cast(rider_id as string) as rider_ref``,
``rider_id as rider`` grouped). Then:

* ``floe privacy scan --static`` (what ``make lint`` runs) fails on the untagged feed,
  proposing a subject key for ``rider_id`` and a pii tag for ``rider_email``;
* with the proposed tags (and ``pii: false`` on the operator's support line) it passes;
* ``floe forget --subject rider_id=…`` reaches both marts through column lineage though
  neither repeats the tag: the dry run lists them, the erasure empties them of the
  rider and leaves every other rider's rows.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.helpers import ROOT, copy_project
from tests.openlineage.test_openlineage import _config, _validators, validate

FIXTURE = Path(__file__).parent / "fixtures" / "new_feed"
SOURCES = "python_models/raw/scooters/_scooters__sources.yml"
RIDER = 7
SELECT = ["raw_scooters__rides+"]


def _project(target: Path) -> Path:
    return copy_project(target, FIXTURE, skip=["tagged_columns.yml"])


def _tag_the_feed(project: Path) -> None:
    """The tags the scan proposed, added to the feed's YAML entry as a user would."""
    path = project / SOURCES
    document = yaml.safe_load(path.read_text())
    columns = yaml.safe_load((FIXTURE / "tagged_columns.yml").read_text())
    document["sources"][0]["tables"][0]["columns"] = columns
    path.write_text(yaml.safe_dump(document, sort_keys=False))


def _rides() -> str:
    return "\n".join(
        json.dumps(
            {
                "ride_id": i,
                "rider_id": RIDER if i % 3 == 0 else 100 + i,
                "rider_email": f"rider{i}@example.com",
                "support_phone": "+47 22 00 00 00",
                "city": "Oslo" if i % 2 else "Bergen",
                "minutes": 5 + i,
            }
        )
        for i in range(1, 13)
    )


@pytest.mark.integration
def test_a_new_feed_is_scanned_tagged_and_forgotten_through_lineage(
    spark, lakehouse, tmp_path, monkeypatch
):
    from floe.cli import main
    from floe.dbt_runner import run_dbt
    from floe.runtime import use_settings

    for var in ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "OPENLINEAGE_DISABLED"):
        monkeypatch.delenv(var, raising=False)
    project = _project(tmp_path / "project")
    monkeypatch.setenv("FLOE_PROJECT_DIR", str(project))
    use_settings(spark, dataclasses.replace(lakehouse, project_dir=project))
    target = project / "target"
    manifest = str(target / "manifest.json")
    runner = CliRunner()

    def build() -> None:
        run = run_dbt(
            ["build", "-s", *SELECT],
            project=project,
            profiles_dir=ROOT / "profiles",
            target_path=target,
            quiet=True,
        )
        assert run.success, run.failures or run.exception

    out = runner.invoke(main, ["produce", "scooter_rides"], input=_rides())
    assert out.exit_code == 0, out.output
    build()
    riders = [r[0] for r in spark.sql("select rider from marts.rider_minutes").collect()]
    assert RIDER in riders and len(riders) == 9

    # 1. the new feed, untagged: the static scan (make lint) fails and proposes tags
    scan = runner.invoke(main, ["privacy", "scan", "--static", "--manifest", manifest])
    assert scan.exit_code != 0, scan.output
    fails = {line.split(":")[0] for line in scan.output.splitlines() if line.startswith("FAIL")}
    assert fails == {
        "FAIL raw.scooter_rides.rider_id",
        "FAIL raw.scooter_rides.rider_email",
        "FAIL raw.scooter_rides.support_phone",
    }, scan.output
    assert (
        "add `- {name: rider_id, config: {meta: {classification: sensitive, "
        "subject_key: rider_id}}}` in " + SOURCES
    ) in scan.output
    assert "`- {name: rider_email, config: {meta: {pii: true, classification: private}}}`" in (
        scan.output
    )

    # 2. tagged as proposed (pii: false where a column is not personal): the scan passes
    _tag_the_feed(project)
    build()
    scan = runner.invoke(main, ["privacy", "scan", "--static", "--manifest", manifest])
    assert scan.exit_code == 0, scan.output
    assert "FAIL" not in scan.output and "rider" not in scan.output, scan.output

    # 3. forget reaches the marts through lineage; the dry run lists them. Each erasure
    # is an OpenLineage run naming the tables it changed (a dry run sends nothing).
    log = tmp_path / "events.jsonl"
    transport = {"type": "file", "log_file_path": str(log), "append": True}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "file", transport)))
    subject = f"rider_id={RIDER}"
    dry = runner.invoke(main, ["forget", "--subject", subject, "--dry-run", "--manifest", manifest])
    assert dry.exit_code == 0, dry.output
    assert "table raw.scooter_rides: 4 row(s)" in dry.output, dry.output
    assert (
        "table marts.scooter_rides: 4 row(s) (tagged through lineage from "
        "raw.scooter_rides.rider_id)"
    ) in dry.output
    assert "table marts.rider_minutes: 1 row(s) (tagged through lineage" in dry.output
    assert "view staging.stg_scooters__rides" in dry.output
    assert spark.table("marts.scooter_rides").where(f"rider_ref = '{RIDER}'").count() == 4
    assert not log.exists()

    done = runner.invoke(main, ["forget", "--subject", subject, "--manifest", manifest, "--json"])
    assert done.exit_code == 0, done.output
    outcome = json.loads(done.output[done.output.index("{") :])
    assert outcome["status"] == "complete"
    assert {t["table"] for t in outcome["tables"]} == {
        "raw.scooter_rides",
        "marts.scooter_rides",
        "marts.rider_minutes",
    }
    assert spark.sql(f"select * from raw.scooter_rides where rider_id = {RIDER}").count() == 0
    assert spark.table("marts.scooter_rides").where(f"rider_ref = '{RIDER}'").count() == 0
    assert spark.table("marts.rider_minutes").where(f"rider = {RIDER}").count() == 0
    # every other rider is untouched
    assert spark.table("marts.scooter_rides").count() == 8
    assert spark.table("marts.rider_minutes").count() == 8
    events = [json.loads(line) for line in log.read_text().splitlines()]
    validators = _validators()
    for event in events:
        validate(event, validators)
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("floe.forget", "START"),
        ("floe.forget", "COMPLETE"),
    ]
    outputs = {d["name"]: d for d in events[1]["outputs"]}
    assert {"raw.scooter_rides", "marts.scooter_rides", "marts.rider_minutes"} <= set(outputs)
    stats = outputs["marts.scooter_rides"]["outputFacets"]["outputStatistics"]
    assert stats["rowCount"] == 8

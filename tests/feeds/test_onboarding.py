"""Onboarding a feed is configuration plus schema files, never Python under src/.

A copy of the project gets, from ``fixtures/onboarding``: a new registry schema
(``parcel_scan``), a new stream source YAML with its two-line raw model, one more
table entry in the DMS sources YAML with its raw model, and the staging view and
cdc mart an analytics engineer writes. The generator lands demo files for the two
new feeds from their declarations alone; ``dbt build`` ingests, decodes, quarantines,
reconciles and merges them.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from floe.generator import GenerateOptions, generate
from tests.helpers import ROOT, copy_project

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "onboarding"


def _copy_project(target: Path) -> Path:
    copy_project(target, FIXTURE, skip=["dms_table.yml"])
    # the one DMS entry, appended to the existing declaration as a user would
    sources_yml = target / "python_models/raw/dms/_dms__sources.yml"
    document = yaml.safe_load(sources_yml.read_text())
    document["sources"][0]["tables"].append(yaml.safe_load((FIXTURE / "dms_table.yml").read_text()))
    sources_yml.write_text(yaml.safe_dump(document, sort_keys=False))
    return target


def test_a_new_stream_and_dms_table_need_no_python_edits(spark, lakehouse, tmp_path, monkeypatch):
    from floe.dbt_runner import run_dbt
    from floe.feeds import find_feed, load_feeds
    from floe.runtime import use_settings

    project = _copy_project(tmp_path / "project")
    monkeypatch.setenv("FLOE_PROJECT_DIR", str(project))
    feeds = load_feeds(project)
    scans, sales = find_feed(feeds, "parcel_scans"), find_feed(feeds, "ticket_sales")
    assert (scans.kind, sales.kind, sales.landing) == (
        "stream",
        "dms",
        "dms/dms_sample/ticket_sales",
    )

    # The edge names the project: the session's settings (the adapter's) and the generator.
    use_settings(spark, dataclasses.replace(lakehouse, project_dir=project))
    opts = GenerateOptions(
        landing=lakehouse.landing, days=3, scale=200, bad_share=0.05, project_dir=project
    )
    report = generate(opts, ["parcel_scans", "ticket_sales"])
    assert any("parcel_scans" in p.as_posix() for p in report.written)
    assert any(p.name.startswith("LOAD") for p in report.written)

    run = run_dbt(
        ["build", "-s", "+ticket_sales", "raw_logistics__parcel_scans+"],
        project=project,
        profiles_dir=ROOT / "profiles",
        target_path=tmp_path / "target",
        quiet=True,
    )
    assert run.success, run.failures or run.exception

    # the stream: decoded, bad records quarantined with their codes, files reconciled
    good = spark.table("raw.parcel_scans").count()
    bad = spark.sql("select error_code from raw.quarantine where feed = 'parcel_scans'").collect()
    lines = sum(
        1
        for p in (lakehouse.landing / scans.landing).rglob("*.jsonl")
        for line in p.read_text().splitlines()
        if line
    )
    assert good > 0 and bad and good + len(bad) == lines
    assert {r[0] for r in bad} >= {"bad_base64", "bad_header", "json_parse", "schema_violation"}
    assert spark.table("staging.stg_logistics__parcel_scans").columns == [
        "parcel_id",
        "depot",
        "weight_grams",
        "fragile",
        "arrival_ts",
    ]

    # the DMS table: replica equals a replay of the landed changes (latest per key wins)
    changes = spark.sql(
        "select Op, ticket_id, section, price, last_update_time, _source_file, _row_in_file "
        "from raw.ticket_sales"
    ).collect()
    live: dict = {}
    for row in sorted(changes, key=lambda r: (r[4], r[5], r[6])):
        if row["Op"] == "D":
            live.pop(row["ticket_id"], None)
        else:
            live[row["ticket_id"]] = (row["section"], row["price"])
    replica = {
        r[0]: (r[1], r[2])
        for r in spark.sql("select ticket_id, section, price from marts.ticket_sales").collect()
    }
    assert replica == live and replica
    partitions = spark.sql("select partition from marts.ticket_sales.partitions").collect()
    assert partitions and set(partitions[0][0].asDict()) == {"section"}
    assert not (ROOT / "schemas" / "floe" / "parcel_scan").exists()  # the repo is untouched

"""OpenLineage beyond dbt's artifacts (docs/lineage.md, "OpenLineage").

* Given the Iceberg catalog, a dbt build's events carry each output table's row count
  from its current snapshot (no ``catalog.json``: ``floe docs`` never ran) and every
  ``floe_checks`` check the invocation recorded in ``dq.check_results`` as an assertion
  of its own, with its column and severity.
* floe's own writing commands are runs too: ``floe maintain`` (the same hook wraps
  ``consume``, ``stream``, ``forget`` and ``rectify``) sends START and COMPLETE naming
  the tables it committed to; a failed run ends in FAIL with its error.

Every event is validated against the vendored OpenLineage schemas, as in
test_openlineage.py.
"""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from floe.dbt_runner import run_dbt
from floe.lineage.openlineage import after_dbt
from tests.openlineage.test_openlineage import (
    FIXTURE,
    ROOT,
    _config,
    _no_openlineage_env,
    _validators,
    validate,
)

pytestmark = pytest.mark.integration


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_row_counts_and_each_check_without_catalog_json_then_floe_runs(
    spark, lakehouse, tmp_path, monkeypatch
):
    from floe.cli import main
    from floe.runtime import open_catalog

    _no_openlineage_env(monkeypatch, tmp_path)
    log = tmp_path / "events.jsonl"
    transport = {"type": "file", "log_file_path": str(log), "append": True}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "file", transport)))
    warnings: list[str] = []
    target = tmp_path / "target"
    run = run_dbt(
        ["build"],
        project=FIXTURE,
        profiles_dir=ROOT / "profiles",
        target_path=target,
        quiet=True,
        finish=after_dbt(
            lakehouse.catalog_name,
            warnings.append,
            FIXTURE,
            catalog_loader=partial(open_catalog, lakehouse),
        ),
    )
    assert run.success, run.failures or run.exception
    assert warnings == []
    assert not (target / "catalog.json").exists()
    events = _events(log)
    validators = _validators()
    for event in events:
        validate(event, validators)
    complete = {
        e["outputs"][0]["name"]: e["outputs"][0]
        for e in events
        if e["eventType"] == "COMPLETE" and e.get("outputs")
    }
    stg, mart = complete["default.stg_orders"], complete["default.fct_customer_totals"]
    assert stg["outputFacets"]["outputStatistics"]["rowCount"] == 3
    assert mart["outputFacets"]["outputStatistics"]["rowCount"] == 2
    assert stg["outputFacets"]["outputStatistics"]["fileCount"] >= 1
    assertions = {
        (a["assertion"], a.get("column"), a["success"], a.get("severity"))
        for a in stg["facets"]["dataQualityAssertions"]["assertions"]
    }
    # the dbt tests, and each floe check in place of the floe_checks test as a whole
    assert assertions == {
        ("unique", "order_id", True, "error"),
        ("not_null", "order_id", True, "error"),
        ("size > 0", None, True, "error"),
        ("is_unique(order_id)", "order_id", True, "error"),
        ("completeness(status) >= 0.5", "status", True, "warn"),
    }
    invocation = events[0]["run"]["runId"]
    recorded = spark.sql(
        "select count(*) from dq.check_results where run_id = :r", args={"r": invocation}
    ).first()[0]
    assert recorded == 3

    # floe maintain: a run of its own whose outputs are the tables it committed to
    before = {
        t: spark.sql(f"select snapshot_id from {t}.snapshots order by committed_at desc").first()
        for t in ("default.stg_orders", "default.fct_customer_totals")
    }
    sent = len(events)
    result = CliRunner().invoke(main, ["maintain", "--schema", "default"])
    assert result.exit_code == 0, result.output
    runs = _events(log)[sent:]
    for event in runs:
        validate(event, validators)
    assert [(e["job"]["name"], e["eventType"]) for e in runs] == [
        ("floe.maintain", "START"),
        ("floe.maintain", "COMPLETE"),
    ]
    assert runs[0]["run"]["runId"] == runs[1]["run"]["runId"]
    after = {
        t: spark.sql(f"select snapshot_id from {t}.snapshots order by committed_at desc").first()
        for t in before
    }
    changed = {t for t in before if before[t] != after[t]}
    outputs = {d["name"]: d for d in runs[1]["outputs"]}
    assert set(outputs) == changed
    for name in changed:
        rows = spark.table(name).count()
        assert outputs[name]["outputFacets"]["outputStatistics"]["rowCount"] == rows

    # a failing run ends in FAIL with its error (maintenance of a table that is not there)
    sent = len(_events(log))
    result = CliRunner().invoke(main, ["maintain", "--table", "default.nothing_here"])
    assert result.exit_code != 0
    failed = _events(log)[sent:]
    for event in failed:
        validate(event, validators)
    assert [e["eventType"] for e in failed] == ["START", "FAIL"]
    assert "SystemExit" in failed[1]["run"]["facets"]["errorMessage"]["message"]
    assert failed[1].get("outputs", []) == []

    # nothing configured: the command runs, nothing is sent
    monkeypatch.delenv("OPENLINEAGE_CONFIG")
    sent = len(_events(log))
    result = CliRunner().invoke(main, ["maintain", "--schema", "default"])
    assert result.exit_code == 0, result.output
    assert len(_events(log)) == sent

"""OpenLineage events from a dbt build on floe (docs/lineage.md, "OpenLineage").

One real in-process ``dbt build`` of a two-model fixture project (a staging table and a
mart, with data tests) hands its target directory to floe's hook, which sends the events
to an HTTP receiver on loopback. Each received event is validated against the
OpenLineage JSON schemas (the RunEvent and every facet floe sends, vendored from the
OpenLineage spec under ``schemas/``). The same artifacts then go to a dead endpoint
(one warning, nothing raised), through ``floe lineage emit`` to the file transport, and
with nothing configured (nothing sent).
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft202012Validator, FormatChecker
from openlineage.client.serde import Serde
from referencing import Registry, Resource

from floe.dbt_runner import run_dbt
from floe.lineage.cli import lineage
from floe.lineage.openlineage import after_dbt, build_events, configured_client, emit_for_target

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "project"
SCHEMAS = Path(__file__).parent / "schemas"
MART_COLUMNS = {"customer_id", "order_count", "total_amount", "last_status"}
# facet key -> schema file; "tags" differ by where they sit (run, job, dataset)
FACET_SCHEMAS = {
    "columnLineage": "ColumnLineageDatasetFacet.json",
    "schema": "SchemaDatasetFacet.json",
    "dataQualityAssertions": "DataQualityAssertionsDatasetFacet.json",
    "outputStatistics": "OutputStatisticsOutputDatasetFacet.json",
    "parent": "ParentRunFacet.json",
    "jobType": "JobTypeJobFacet.json",
    "sql": "SQLJobFacet.json",
    "errorMessage": "ErrorMessageRunFacet.json",
    "processing_engine": "ProcessingEngineRunFacet.json",
}


def _validators() -> dict[str, Draft202012Validator]:
    docs = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.json")}
    registry: Registry = Registry().with_resources(
        (doc["$id"], Resource.from_contents(doc)) for doc in docs.values()
    )
    return {
        name: Draft202012Validator(doc, registry=registry, format_checker=FormatChecker())
        for name, doc in docs.items()
    }


def validate(event: dict[str, Any], validators: dict[str, Draft202012Validator]) -> None:
    """The RunEvent schema, then each facet against its own schema (as consumers do)."""
    validators["OpenLineage.json"].validate(event)
    facet_maps = [("Run", event["run"].get("facets", {})), ("Job", event["job"].get("facets", {}))]
    for dataset in event.get("inputs", []) + event.get("outputs", []):
        facet_maps += [("Dataset", dataset.get("facets", {}))]
        facet_maps += [("Dataset", dataset.get(k, {})) for k in ("inputFacets", "outputFacets")]
    for where, facets in facet_maps:
        for key, facet in facets.items():
            schema = f"Tags{where}Facet.json" if key == "tags" else FACET_SCHEMAS.get(key)
            assert schema is not None, f"no schema vendored for facet {key!r}"
            validators[schema].validate({key: facet})


class _Receiver(BaseHTTPRequestHandler):
    events: list[dict[str, Any]]

    def do_POST(self) -> None:  # http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.server.events.append((self.path, json.loads(body)))  # type: ignore[attr-defined]
        self.send_response(201)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    server.events = []  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _config(tmp_path: Path, name: str, transport: dict[str, Any]) -> Path:
    path = tmp_path / f"{name}.yml"
    path.write_text(json.dumps({"transport": transport}))  # JSON is YAML
    return path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _no_openlineage_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("OPENLINEAGE_URL", "OPENLINEAGE_CONFIG", "OPENLINEAGE_DISABLED"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.openlineage/openlineage.yml
    monkeypatch.chdir(tmp_path)  # no ./openlineage.yml


@pytest.mark.integration
def test_a_build_sends_valid_events_with_column_lineage_and_a_dead_endpoint_only_warns(
    lakehouse, tmp_path, receiver, monkeypatch
):
    _no_openlineage_env(monkeypatch, tmp_path)
    url = f"http://127.0.0.1:{receiver.server_address[1]}"
    monkeypatch.setenv(
        "OPENLINEAGE_CONFIG", str(_config(tmp_path, "http", {"type": "http", "url": url}))
    )
    warnings: list[str] = []
    target = tmp_path / "target"
    run = run_dbt(
        ["build"],
        project=FIXTURE,
        profiles_dir=ROOT / "profiles",
        target_path=target,
        quiet=True,
        finish=after_dbt(lakehouse.catalog_name, warnings.append, FIXTURE),
    )
    assert run.success, run.failures or run.exception
    assert warnings == []

    paths = {path for path, _ in receiver.events}
    assert paths == {"/api/v1/lineage"}
    events = [event for _, event in receiver.events]
    validators = _validators()
    for event in events:
        validate(event, validators)

    parent, *models, parent_end = events
    assert (parent["eventType"], parent_end["eventType"]) == ("START", "COMPLETE")
    assert parent["run"]["runId"] == parent_end["run"]["runId"]
    by_job: dict[str, list[dict[str, Any]]] = {}
    for event in models:
        by_job.setdefault(event["job"]["name"], []).append(event)
        facet = event["run"]["facets"]["parent"]
        assert facet["run"]["runId"] == parent["run"]["runId"]
        assert facet["job"]["name"] == parent["job"]["name"]
    assert set(by_job) == {
        "floe_openlineage_fixture.stg_orders",
        "floe_openlineage_fixture.fct_customer_totals",
    }
    for job_events in by_job.values():
        assert [e["eventType"] for e in job_events] == ["START", "COMPLETE"]
        assert job_events[0]["run"]["runId"] == job_events[1]["run"]["runId"]

    mart = by_job["floe_openlineage_fixture.fct_customer_totals"][1]
    assert [(d["namespace"], d["name"]) for d in mart["inputs"]] == [
        ("iceberg://lake", "default.stg_orders")
    ]
    (output,) = mart["outputs"]
    assert (output["namespace"], output["name"]) == (
        "iceberg://lake",
        "default.fct_customer_totals",
    )
    assert {f["name"] for f in output["facets"]["schema"]["fields"]} == MART_COLUMNS
    fields = output["facets"]["columnLineage"]["fields"]
    assert set(fields) == MART_COLUMNS, "column lineage for every output column of the mart"
    assert fields["order_count"]["inputFields"] == [], "count(*) reads no column"
    total = fields["total_amount"]["inputFields"]
    assert [(f["name"], f["field"]) for f in total] == [("default.stg_orders", "amount")]
    assert total[0]["transformations"][0]["subtype"] == "AGGREGATION"
    status_inputs = {(f["field"]) for f in fields["last_status"]["inputFields"]}
    assert status_inputs == {"status"}
    indirect = {
        (f["field"], f["transformations"][0]["subtype"])
        for f in output["facets"]["columnLineage"]["dataset"]
    }
    assert ("status", "FILTER") in indirect and ("customer_id", "GROUP_BY") in indirect
    assertions = output["facets"]["dataQualityAssertions"]["assertions"]
    assert {(a["assertion"], a["column"], a["success"]) for a in assertions} == {
        ("unique", "customer_id", True),
        ("not_null", "customer_id", True),
        ("accepted_values", "last_status", True),
    }

    # Re-emitting the same invocation names the same runs (a consumer upserts them).
    again = build_events(target, namespace="iceberg://lake")
    assert [e.run.runId for e in again] == [e["run"]["runId"] for e in events]

    # A dead endpoint: one warning line, nothing raised, nothing else printed.
    dead = {"type": "http", "url": f"http://127.0.0.1:{_free_port()}", "retry": {"total": 0}}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "dead", dead)))
    report = emit_for_target(target, namespace="iceberg://lake", warn=warnings.append)
    assert report.configured and report.sent == 0 and report.total == len(events)
    assert len(warnings) == 1
    assert warnings[0].startswith(f"OpenLineage: {len(events)} of {len(events)} events not sent")

    # `floe lineage emit` for a plain dbt run, to the file transport.
    log = tmp_path / "events.jsonl"
    file_transport = {"type": "file", "log_file_path": str(log), "append": True}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "file", file_transport)))
    result = CliRunner().invoke(lineage, ["emit", "--target-path", str(target)])
    assert result.exit_code == 0, result.output
    assert f"OpenLineage: {len(events)} events sent" in result.output
    written = [json.loads(line) for line in log.read_text().splitlines()]
    assert [e["run"]["runId"] for e in written] == [e["run"]["runId"] for e in events]
    for event in written:
        validate(event, validators)

    # Nothing configured: nothing sent, nothing printed but the notice.
    monkeypatch.delenv("OPENLINEAGE_CONFIG")
    assert configured_client() is None
    result = CliRunner().invoke(lineage, ["emit", "--target-path", str(target)])
    assert result.exit_code == 0 and "not configured" in result.output
    assert len(log.read_text().splitlines()) == len(events)


def test_a_failed_model_ends_in_fail_with_its_error_and_fails_the_parent(tmp_path):
    """Built from hand-written artifacts: a FAIL event carries the error message."""
    target = tmp_path / "target"
    target.mkdir()
    invocation = "6f1c0a52-3a38-4c5e-9d8e-2d2f0e4c9a11"
    node = {
        "resource_type": "model",
        "name": "broken",
        "schema": "marts",
        "alias": "broken",
        "config": {"materialized": "table"},
        "depends_on": {"nodes": []},
        "columns": {"id": {"name": "id", "data_type": "bigint", "description": "Key."}},
        "compiled_code": "select 1 / 0 as id",
        "language": "sql",
        "original_file_path": "models/marts/broken.sql",
        "path": "marts/broken.sql",
    }
    (target / "manifest.json").write_text(
        json.dumps(
            {
                "metadata": {"project_name": "p"},
                "nodes": {"model.p.broken": node},
                "sources": {},
            }
        )
    )
    (target / "run_results.json").write_text(
        json.dumps(
            {
                "metadata": {"invocation_id": invocation, "generated_at": "2026-11-27T06:00:00Z"},
                "args": {"which": "build"},
                "results": [
                    {
                        "unique_id": "model.p.broken",
                        "status": "error",
                        "message": "Division by zero",
                        "timing": [],
                    }
                ],
            }
        )
    )
    events = build_events(target, namespace="iceberg://lake")
    assert [(e.job.name, e.eventType and e.eventType.value) for e in events] == [
        ("p.dbt-build-" + invocation, "START"),
        ("p.broken", "START"),
        ("p.broken", "FAIL"),
        ("p.dbt-build-" + invocation, "FAIL"),
    ]
    error = json.loads(Serde.to_json(events[2]))["run"]["facets"]["errorMessage"]
    assert error["message"] == "Division by zero"
    validators = _validators()
    for event in events:
        validate(json.loads(Serde.to_json(event)), validators)


@pytest.mark.integration
def test_every_mart_column_of_the_project_has_column_lineage(lakehouse, tmp_path):
    """The demo project compiled (no build); its artifacts read as if they had built.

    Each mart model's event names, for every column, the upstream columns floe traced.
    """
    target = tmp_path / "target"
    run = run_dbt(["compile"], project=ROOT, target_path=target, quiet=True)
    assert run.success, run.failures or run.exception
    assert build_events(target, namespace="iceberg://lake") == [], "compile writes nothing"
    results = json.loads((target / "run_results.json").read_text())
    results["args"]["which"] = "build"
    (target / "run_results.json").write_text(json.dumps(results))

    events = build_events(target, namespace="iceberg://lake", project_dir=ROOT)
    validators = _validators()
    marts = [
        json.loads(Serde.to_json(e))
        for e in events
        if e.eventType is not None and e.eventType.value == "COMPLETE" and e.outputs
    ]
    marts = [e for e in marts if e["outputs"][0]["name"].startswith("marts.")]
    assert len(marts) >= 10
    columns = 0
    for event in marts:
        validate(event, validators)
        (output,) = event["outputs"]
        schema = {f["name"] for f in output["facets"]["schema"]["fields"]}
        fields = output["facets"]["columnLineage"]["fields"]
        assert set(fields) >= schema, output["name"]
        empty = [c for c, f in fields.items() if not f["inputFields"]]
        assert empty == [], f"{output['name']}: no input columns for {empty}"
        columns += len(fields)
    assert columns >= 177


@pytest.mark.integration
def test_floe_build_sends_events_and_a_dead_endpoint_does_not_fail_it(
    spark, lakehouse, tmp_path, monkeypatch
):
    from floe.cli import main

    _no_openlineage_env(monkeypatch, tmp_path)
    monkeypatch.chdir(ROOT)
    log = tmp_path / "events.jsonl"
    file_transport = {"type": "file", "log_file_path": str(log), "append": True}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "file", file_transport)))
    args = ["build", "--days", "1", "--scale", "5", "-s", "+stg_customers__master"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "OpenLineage" not in result.output
    events = [json.loads(line) for line in log.read_text().splitlines()]
    validators = _validators()
    for event in events:
        validate(event, validators)
    jobs = {(e["job"]["name"].split(".")[-1], e["eventType"]) for e in events}
    assert ("raw_customers__master", "COMPLETE") in jobs
    assert ("stg_customers__master", "START") in jobs
    (raw,) = [
        e
        for e in events
        if e["eventType"] == "COMPLETE"
        and e["outputs"][0:1]
        and e["outputs"][0]["name"] == "raw.customer_master"
    ]
    assert raw["outputs"][0]["namespace"] == "iceberg://lake"

    dead = {"type": "http", "url": f"http://127.0.0.1:{_free_port()}", "retry": {"total": 0}}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "dead", dead)))
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.output.splitlines() if line.startswith("OpenLineage")]
    assert len(warnings) == 1 and "events not sent" in warnings[0]

"""`command_run`: a floe command as an OpenLineage run, on a real pyiceberg SQLite catalog
(no Spark): outputs are exactly the tables committed to inside the run, with their row
counts; a stopped command ends in ABORT, a failed one in FAIL (re-raised); a dead
endpoint is one warning and the command's own outcome stands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from floe.lineage.openlineage import command_run, configured_client
from tests.openlineage.test_openlineage import (
    _config,
    _free_port,
    _no_openlineage_env,
    _validators,
    validate,
)


def _catalog(tmp_path: Path) -> Any:
    from pyiceberg.catalog.sql import SqlCatalog

    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    catalog = SqlCatalog(
        "lake", uri=f"sqlite:///{tmp_path / 'catalog.db'}", warehouse=f"file://{warehouse}"
    )
    catalog.create_namespace("raw")
    for name in ("a", "b"):
        table = catalog.create_table(("raw", name), schema=pa.schema([("id", pa.int64())]))
        table.append(pa.table({"id": pa.array([1, 2], pa.int64())}))
    return catalog


def _file_transport(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _no_openlineage_env(monkeypatch, tmp_path)
    log = tmp_path / "events.jsonl"
    transport = {"type": "file", "log_file_path": str(log), "append": True}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "file", transport)))
    return log


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_outputs_are_the_tables_committed_to_during_the_run(tmp_path, monkeypatch):
    catalog = _catalog(tmp_path)
    log = _file_transport(tmp_path, monkeypatch)
    warnings: list[str] = []
    with command_run(
        "consume", catalog_name="lake", catalog_loader=lambda: catalog, warn=warnings.append
    ) as run:
        catalog.load_table(("raw", "b")).append(pa.table({"id": pa.array([3], pa.int64())}))
    assert warnings == []
    events = _events(log)
    validators = _validators()
    for event in events:
        validate(event, validators)
    start, end = events
    assert (start["eventType"], end["eventType"]) == ("START", "COMPLETE")
    assert start["run"]["runId"] == end["run"]["runId"] == run.run_id
    assert end["job"] == {
        "namespace": "floe",
        "name": "floe.consume",
        "facets": end["job"]["facets"],
    }
    assert end["job"]["facets"]["jobType"]["processingType"] == "STREAMING"
    (output,) = end["outputs"]
    assert (output["namespace"], output["name"]) == ("iceberg://lake", "raw.b")
    assert output["outputFacets"]["outputStatistics"]["rowCount"] == 3
    assert run.outputs == ["raw.b"]


def test_a_stopped_run_aborts_a_failed_one_fails_and_the_error_stands(tmp_path, monkeypatch):
    catalog = _catalog(tmp_path)
    log = _file_transport(tmp_path, monkeypatch)
    with (
        pytest.raises(KeyboardInterrupt),
        command_run("stream", catalog_name="lake", catalog_loader=lambda: catalog, warn=print),
    ):
        raise KeyboardInterrupt
    with (
        pytest.raises(RuntimeError, match="disk full"),
        command_run("maintain", catalog_name="lake", catalog_loader=lambda: catalog, warn=print),
    ):
        catalog.load_table(("raw", "a")).append(pa.table({"id": pa.array([9], pa.int64())}))
        raise RuntimeError("disk full")
    events = _events(log)
    validators = _validators()
    for event in events:
        validate(event, validators)
    assert [(e["job"]["name"], e["eventType"]) for e in events] == [
        ("floe.stream", "START"),
        ("floe.stream", "ABORT"),
        ("floe.maintain", "START"),
        ("floe.maintain", "FAIL"),
    ]
    failed = events[3]
    assert failed["run"]["facets"]["errorMessage"]["message"] == "RuntimeError: disk full"
    assert [d["name"] for d in failed["outputs"]] == ["raw.a"]  # it did commit before failing


def test_a_dead_endpoint_is_one_warning_and_unconfigured_reads_nothing(tmp_path, monkeypatch):
    catalog = _catalog(tmp_path)
    _no_openlineage_env(monkeypatch, tmp_path)
    dead = {"type": "http", "url": f"http://127.0.0.1:{_free_port()}", "retry": {"total": 0}}
    monkeypatch.setenv("OPENLINEAGE_CONFIG", str(_config(tmp_path, "dead", dead)))
    warnings: list[str] = []
    with command_run(
        "forget", catalog_name="lake", catalog_loader=lambda: catalog, warn=warnings.append
    ) as run:
        pass
    assert len(warnings) == 1 and "2 of 2 events not sent" in warnings[0]
    assert run.report is not None and run.report.sent == 0

    monkeypatch.delenv("OPENLINEAGE_CONFIG")
    assert configured_client() is None

    def never() -> Any:
        raise AssertionError("the catalog is not opened when nothing is configured")

    with command_run("forget", catalog_name="lake", catalog_loader=never, warn=warnings.append):
        pass
    assert len(warnings) == 1

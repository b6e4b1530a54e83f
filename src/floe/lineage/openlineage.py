"""OpenLineage run events from a finished dbt invocation (docs/lineage.md, "OpenLineage").

:func:`build_events` turns a target directory (``run_results.json`` + ``manifest.json``,
``catalog.json`` when there is one) and floe's column lineage into RunEvents: one parent
START/COMPLETE (or FAIL) for the dbt invocation and, per executed model, snapshot or seed,
a START and a COMPLETE (or FAIL) whose ``parent`` facet points at the invocation's run.
Datasets are named as a catalog names them: namespace ``iceberg://<catalog>``, name
``schema.table``. The output dataset carries ``schema``, ``columnLineage`` (floe's edges,
one hop), ``dataQualityAssertions`` (the dbt tests attached to it, with their status) and
``outputStatistics`` (row count, files, bytes) when known. Given the Iceberg catalog, the
row counts come from each output table's current snapshot (no ``catalog.json`` needed),
and every floe check and DQDL rule the invocation recorded in ``dq.check_results`` becomes
an assertion of its own (:func:`warehouse_facts`).

:func:`command_run` wraps a floe command that writes tables (``floe consume``, ``stream``,
``maintain``, ``forget``, ``rectify``) in a START and COMPLETE (or FAIL) run whose outputs
are the tables that got a new snapshot while it ran.

:func:`emit` sends them with the ``openlineage-python`` client configured the OpenLineage
way (``OPENLINEAGE_URL``, ``OPENLINEAGE_CONFIG``, ``openlineage.yml``, ``OPENLINEAGE__*``);
with nothing configured it sends nothing, and a transport error is returned as one warning
line: lineage never fails a build.
"""

from __future__ import annotations

import json
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from openlineage.client import OpenLineageClient
from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
from openlineage.client.facet_v2 import (
    JobFacet,
    RunFacet,
    column_lineage_dataset,
    data_quality_assertions_dataset,
    error_message_run,
    job_type_job,
    output_statistics_output_dataset,
    parent_run,
    schema_dataset,
    sql_job,
)

from floe.lineage.graph import ANY_COLUMN, UNKNOWN, LineageGraph, build_graph

PRODUCER = "https://github.com/floe-lakehouse/floe/tree/main/src/floe/lineage/openlineage.py"
DEFAULT_JOB_NAMESPACE = "floe"
EXECUTED_TYPES = ("model", "snapshot", "seed")
# dbt commands that write tables; others (compile, docs, test, ...) send no events.
WRITING_COMMANDS = ("build", "run", "seed", "snapshot")
# floe edge kinds -> OpenLineage transformation (type, subtype); see docs/lineage.md.
_TRANSFORMATIONS = {
    "identity": ("DIRECT", "IDENTITY"),
    "rename": ("DIRECT", "IDENTITY"),
    "field": ("DIRECT", "IDENTITY"),
    "cast": ("DIRECT", "TRANSFORMATION"),
    "expression": ("DIRECT", "TRANSFORMATION"),
    "explode": ("DIRECT", "TRANSFORMATION"),
    "window": ("DIRECT", "TRANSFORMATION"),
    "provenance": ("DIRECT", "TRANSFORMATION"),
    "aggregate": ("DIRECT", "AGGREGATION"),
    "filter": ("INDIRECT", "FILTER"),
    "join": ("INDIRECT", "JOIN"),
    "group_by": ("INDIRECT", "GROUP_BY"),
}
_FAILED = ("error", "fail", "runtime error")
# dbt tests whose checks are recorded one by one in dq.check_results (as assertions)
CHECK_TESTS = ("floe_checks", "floe_dqdl")
CHECK_RESULTS = ("dq", "check_results")
_CHECK_COLUMN = re.compile(r"\b[a-z_]+\(\s*`?([A-Za-z_][A-Za-z0-9_]*)`?\s*[,)]")
_DQDL_COLUMN = re.compile(r'^[A-Za-z]+\s+"([^"]+)"')


class OpenLineageArtifactsError(ValueError):
    """The target directory lacks the dbt artifacts events are built from."""


def dataset_namespace(catalog_name: str) -> str:
    """The namespace of every table of a floe catalog: ``iceberg://<catalog>``."""
    return f"iceberg://{catalog_name}"


@dataclass(frozen=True)
class EmitReport:
    sent: int
    total: int
    configured: bool
    warning: str | None = None


def _read(target: Path, name: str, required: bool) -> dict[str, Any] | None:
    path = target / name
    if not path.exists():
        if required:
            raise OpenLineageArtifactsError(
                f"{path} does not exist: run dbt (build, run, seed or snapshot) with this "
                "target path first"
            )
        return None
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _relation(node: Mapping[str, Any]) -> str:
    return f"{node.get('schema')}.{node.get('alias') or node.get('name')}"


def _parse_time(text: str | None, fallback: datetime) -> datetime:
    if not text:
        return fallback
    return datetime.fromisoformat(text.replace("Z", "+00:00")).astimezone(UTC)


def _timing(result: Mapping[str, Any], fallback: datetime) -> tuple[datetime, datetime]:
    steps = {t.get("name"): t for t in result.get("timing") or []}
    execute = steps.get("execute") or steps.get("compile") or {}
    started = _parse_time(execute.get("started_at"), fallback)
    return started, _parse_time(execute.get("completed_at"), started)


def _run_id(invocation_id: str, unique_id: str) -> str:
    # Deterministic: re-emitting the same invocation yields the same runs (idempotent
    # for a consumer), and a UUID as the spec requires.
    return str(uuid.uuid5(uuid.UUID(invocation_id), unique_id))


def _tests_by_model(
    manifest: Mapping[str, Any], statuses: Mapping[str, str]
) -> dict[str, list[data_quality_assertions_dataset.Assertion]]:
    out: dict[str, list[data_quality_assertions_dataset.Assertion]] = {}
    for uid, node in manifest.get("nodes", {}).items():
        if node.get("resource_type") != "test" or uid not in statuses:
            continue
        attached = node.get("attached_node") or next(
            iter((node.get("depends_on") or {}).get("nodes") or []), None
        )
        if not attached:
            continue
        meta = node.get("test_metadata") or {}
        config = node.get("config") or {}
        out.setdefault(attached, []).append(
            data_quality_assertions_dataset.Assertion(
                assertion=meta.get("name") or node.get("name", uid),
                success=statuses[uid] == "pass",
                column=node.get("column_name") or None,
                severity=str(config.get("severity", "")).lower() or None,
                name=node.get("name"),
            )
        )
    return out


def _combined(kinds: list[str]) -> str:
    """One kind for a chain of edges through ephemeral models (the strongest step)."""
    if "aggregate" in kinds:
        return "aggregate"
    if all(k in ("identity", "rename", "field") for k in kinds):
        return "identity"
    return next((k for k in kinds if k not in ("identity", "rename", "field")), "expression")


def _table_inputs(
    graph: LineageGraph, key: tuple[str, str], relations: Mapping[str, str]
) -> dict[tuple[str, str], str]:
    """The table columns ``key`` reads directly, looking through ephemeral models.

    Ephemeral models are inlined CTEs, not tables: their own inputs stand in for them.
    Landed files and ``unknown`` edges are not columns of a catalog table: left out.
    """
    out: dict[tuple[str, str], str] = {}
    stack: list[tuple[tuple[str, str], list[str]]] = [(key, [])]
    seen: set[tuple[str, str]] = set()
    while stack:
        current, kinds = stack.pop()
        for edge in graph.upstream_edges(current):
            if edge.kind == UNKNOWN or edge.src in seen:
                continue
            seen.add(edge.src)
            chain = [*kinds, edge.kind]
            if edge.src[0] in relations:
                out.setdefault(edge.src, _combined(chain))
            elif (
                graph.nodes.get(edge.src[0]) is not None
                and graph.nodes[edge.src[0]].type == "model"
            ):
                stack.append((edge.src, chain))
    return out


def _column_lineage(
    graph: LineageGraph, uid: str, namespace: str, relations: Mapping[str, str]
) -> column_lineage_dataset.ColumnLineageDatasetFacet | None:
    node = graph.nodes.get(uid)
    if node is None:
        return None
    fields: dict[str, list[column_lineage_dataset.InputField]] = {c: [] for c in node.columns}
    for column in fields:
        for (src_uid, src_column), kind in _table_inputs(graph, (uid, column), relations).items():
            if src_column == ANY_COLUMN:  # a table-level read (count(*)): no input column;
                continue  # the table is among the run's input datasets
            ol_kind, subtype = _TRANSFORMATIONS.get(kind, ("DIRECT", "TRANSFORMATION"))
            fields[column].append(
                column_lineage_dataset.InputField(
                    namespace=namespace,
                    name=relations[src_uid],
                    field=src_column,
                    transformations=[
                        column_lineage_dataset.Transformation(
                            type=ol_kind, subtype=subtype, description=kind
                        )
                    ],
                )
            )
    dataset = []
    for src_uid, column, kind in node.indirect:
        source = relations.get(src_uid)
        if source is None:
            continue
        ol_kind, subtype = _TRANSFORMATIONS.get(kind, ("INDIRECT", "FILTER"))
        dataset.append(
            column_lineage_dataset.InputField(
                namespace=namespace,
                name=source,
                field=column,
                transformations=[
                    column_lineage_dataset.Transformation(type=ol_kind, subtype=subtype)
                ],
            )
        )
    # Every column gets an entry: an empty list says it reads no column (``count(*)``,
    # a literal); what decides its rows is in ``dataset``.
    return column_lineage_dataset.ColumnLineageDatasetFacet(
        fields={
            column: column_lineage_dataset.Fields(inputFields=inputs)
            for column, inputs in fields.items()
        },
        dataset=dataset,
    )


def _schema(
    node: Mapping[str, Any], catalog_node: Mapping[str, Any] | None
) -> schema_dataset.SchemaDatasetFacet | None:
    columns = (catalog_node or {}).get("columns") or node.get("columns") or {}
    fields = [
        schema_dataset.SchemaDatasetFacetFields(
            name=name,
            type=column.get("type") or column.get("data_type") or None,
            description=column.get("comment") or column.get("description") or None,
        )
        for name, column in columns.items()
    ]
    return schema_dataset.SchemaDatasetFacet(fields=fields) if fields else None


def _statistics(
    catalog_node: Mapping[str, Any] | None,
) -> output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet | None:
    stats = (catalog_node or {}).get("stats") or {}

    def value(key: str) -> int | None:
        raw = (stats.get(key) or {}).get("value")
        return int(raw) if isinstance(raw, int | float) else None

    rows = value("row_count")
    if rows is None:
        return None
    return output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet(
        rowCount=rows, size=value("bytes"), fileCount=value("num_files")
    )


Statistics = output_statistics_output_dataset.OutputStatisticsOutputDatasetFacet
Assertion = data_quality_assertions_dataset.Assertion


@dataclass
class WarehouseFacts:
    """What the Iceberg catalog says about an invocation's outputs."""

    statistics: dict[str, Statistics] = field(default_factory=dict)  # schema.table ->
    assertions: dict[str, list[Assertion]] = field(default_factory=dict)  # schema.table ->


def snapshot_statistics(table: Any) -> Statistics | None:
    """Row count, data files and bytes of a pyiceberg table's current snapshot (its
    summary's running totals: no data file is read)."""
    snapshot = table.current_snapshot()
    if snapshot is None or snapshot.summary is None:
        return None
    summary = snapshot.summary

    def value(key: str) -> int | None:
        raw = summary.get(key)
        return int(raw) if raw is not None and str(raw).isdigit() else None

    rows = value("total-records")
    if rows is None:
        return None
    return Statistics(
        rowCount=rows, size=value("total-files-size"), fileCount=value("total-data-files")
    )


def _check_column(check: str) -> str | None:
    """The column a check names first (``is_unique(id)``, DQDL ``IsComplete "id"``)."""
    match = _DQDL_COLUMN.match(check.strip()) or _CHECK_COLUMN.search(check.strip())
    return match.group(1).lower() if match else None


def warehouse_facts(catalog: Any, relations: Iterable[str], run_id: str | None) -> WarehouseFacts:
    """Statistics of ``relations`` (``schema.table``; views and missing tables skipped)
    and the checks recorded under ``run_id`` (dbt's invocation id) in dq.check_results,
    one assertion per check: its text, pass/fail, the column it names, its severity."""
    facts = WarehouseFacts()
    for relation in sorted(set(relations)):
        identifier = tuple(relation.split("."))
        try:
            if not catalog.table_exists(identifier):
                continue
            stats = snapshot_statistics(catalog.load_table(identifier))
        except Exception:  # a view, or a table another writer is replacing
            continue
        if stats is not None:
            facts.statistics[relation] = stats
    if run_id and catalog.table_exists(CHECK_RESULTS):
        from pyiceberg.expressions import EqualTo

        rows = (
            catalog.load_table(CHECK_RESULTS)
            .scan(
                # bound, not pasted; pyiceberg's signature is beyond mypy's plugin
                row_filter=EqualTo("run_id", run_id),  # type: ignore[misc, call-arg, arg-type]
                selected_fields=("table_name", "check", "severity", "status", "model"),
            )
            .to_arrow()
            .to_pylist()
        )
        for row in rows:
            status = str(row["status"] or "")
            facts.assertions.setdefault(str(row["table_name"]).lower(), []).append(
                Assertion(
                    assertion=str(row["check"]),
                    success=status in ("pass", "skip"),
                    column=_check_column(str(row["check"])),
                    severity=str(row["severity"] or "").lower() or None,
                    name=f"{row['model']}: {status}",
                )
            )
    return facts


def build_events(
    target: Path,
    *,
    namespace: str,
    job_namespace: str = DEFAULT_JOB_NAMESPACE,
    graph: LineageGraph | None = None,
    project_dir: Path | None = None,
    catalog: Any | None = None,
) -> list[RunEvent]:
    """The RunEvents of the dbt invocation whose artifacts are in ``target``, in order.

    ``graph`` defaults to ``target/lineage.json`` when it is at least as new as the
    manifest, else the lineage is computed from the manifest (and ``catalog.json``).
    ``catalog`` (pyiceberg) gives the outputs' row counts and the invocation's checks
    (:func:`warehouse_facts`); without it they come from ``catalog.json`` and the dbt
    tests alone.
    """
    results = _read(target, "run_results.json", required=True) or {}
    command = (results.get("args") or {}).get("which") or "dbt"
    if command not in WRITING_COMMANDS:
        return []
    manifest = _read(target, "manifest.json", required=True) or {}
    catalog_json = _read(target, "catalog.json", required=False)
    if graph is None:
        lineage_json = target / "lineage.json"
        fresh = (
            lineage_json.exists()
            and lineage_json.stat().st_mtime >= (target / "manifest.json").stat().st_mtime
        )
        graph = (
            LineageGraph.read(lineage_json)
            if fresh
            else build_graph(manifest, catalog_json, project_dir)
        )
    metadata = results.get("metadata") or {}
    invocation_id = metadata.get("invocation_id") or str(uuid.uuid4())
    generated = _parse_time(metadata.get("generated_at"), datetime.now(UTC))
    project = (manifest.get("metadata") or {}).get("project_name") or "dbt"
    nodes: dict[str, Any] = {**manifest.get("sources", {}), **manifest.get("nodes", {})}
    relations = {
        uid: _relation(n)
        for uid, n in nodes.items()
        if n.get("resource_type") in (*EXECUTED_TYPES, "source")
        and (n.get("config") or {}).get("materialized") != "ephemeral"
    }
    catalog_nodes = {
        **(catalog_json or {}).get("sources", {}),
        **(catalog_json or {}).get("nodes", {}),
    }
    statuses = {r["unique_id"]: str(r.get("status")) for r in results.get("results", [])}
    assertions = _tests_by_model(manifest, statuses)
    facts = WarehouseFacts()
    if catalog is not None:
        written = [
            relations[r["unique_id"]]
            for r in results.get("results", [])
            if r["unique_id"] in relations
        ]
        facts = warehouse_facts(catalog, written, metadata.get("invocation_id"))

    parent_job_name = f"{project}.dbt-{command}-{invocation_id}"
    parent_job = Job(
        namespace=job_namespace,
        name=parent_job_name,
        facets={"jobType": _job_type("JOB")},
    )
    parent_run_id = str(uuid.UUID(invocation_id))
    parent_facet = parent_run.ParentRunFacet(
        run=parent_run.Run(runId=parent_run_id),
        job=parent_run.Job(namespace=job_namespace, name=parent_job_name),
        root=parent_run.Root(
            run=parent_run.RootRun(runId=parent_run_id),
            job=parent_run.RootJob(namespace=job_namespace, name=parent_job_name),
        ),
    )
    executed = [
        r for r in results.get("results", []) if r["unique_id"].split(".")[0] in EXECUTED_TYPES
    ]
    first = min((_timing(r, generated)[0] for r in executed), default=generated)
    events = [
        RunEvent(
            eventType=RunState.START,
            eventTime=first.isoformat(),
            run=Run(runId=parent_run_id),
            job=parent_job,
            producer=PRODUCER,
        )
    ]
    any_failed = False
    for result in executed:
        uid = result["unique_id"]
        node = nodes.get(uid)
        if node is None:
            continue
        status = str(result.get("status"))
        if status == "skipped":
            continue
        failed = status in _FAILED
        any_failed |= failed
        started, completed = _timing(result, generated)
        run_id = _run_id(invocation_id, uid)
        job_facets: dict[str, JobFacet] = {"jobType": _job_type(node["resource_type"].upper())}
        if node.get("compiled_code"):
            job_facets["sql"] = sql_job.SQLJobFacet(query=node["compiled_code"], dialect="spark")
        job = Job(namespace=job_namespace, name=f"{project}.{node['name']}", facets=job_facets)
        inputs = [
            InputDataset(namespace=namespace, name=relations[p])
            for p in (node.get("depends_on") or {}).get("nodes") or []
            if p in relations
        ]
        out_facets: dict[str, Any] = {}
        schema = _schema(node, catalog_nodes.get(uid))
        if schema is not None:
            out_facets["schema"] = schema
        lineage = _column_lineage(graph, uid, namespace, relations)
        if lineage is not None and lineage.fields:
            out_facets["columnLineage"] = lineage
        relation = relations.get(uid, _relation(node))
        checks = facts.assertions.get(relation.lower(), [])
        tests = assertions.get(uid, [])
        if checks:  # each recorded check stands for itself, not its dbt test as a whole
            tests = [a for a in tests if a.assertion not in CHECK_TESTS]
        if tests or checks:
            out_facets["dataQualityAssertions"] = (
                data_quality_assertions_dataset.DataQualityAssertionsDatasetFacet(
                    assertions=[*tests, *checks]
                )
            )
        stats = facts.statistics.get(relation.lower()) or _statistics(catalog_nodes.get(uid))
        output = OutputDataset(
            namespace=namespace,
            name=relation,
            facets=out_facets,
            outputFacets={"outputStatistics": stats} if stats is not None else {},
        )
        run_facets: dict[str, RunFacet] = {"parent": parent_facet}
        events.append(
            RunEvent(
                eventType=RunState.START,
                eventTime=started.isoformat(),
                run=Run(runId=run_id, facets=run_facets),
                job=job,
                inputs=inputs,
                outputs=[output],
                producer=PRODUCER,
            )
        )
        end_facets = dict(run_facets)
        if failed:
            end_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=str(result.get("message") or status), programmingLanguage="SQL"
            )
        events.append(
            RunEvent(
                eventType=RunState.FAIL if failed else RunState.COMPLETE,
                eventTime=completed.isoformat(),
                run=Run(runId=run_id, facets=end_facets),
                job=job,
                inputs=inputs,
                outputs=[output],
                producer=PRODUCER,
            )
        )
    any_failed |= any(s in _FAILED for s in statuses.values())
    last = max((_timing(r, generated)[1] for r in executed), default=generated)
    events.append(
        RunEvent(
            eventType=RunState.FAIL if any_failed else RunState.COMPLETE,
            eventTime=max(last, generated).isoformat(),
            run=Run(runId=parent_run_id),
            job=parent_job,
            producer=PRODUCER,
        )
    )
    return events


def _job_type(job_type: str) -> job_type_job.JobTypeJobFacet:
    return job_type_job.JobTypeJobFacet(processingType="BATCH", integration="DBT", jobType=job_type)


def configured_client() -> OpenLineageClient | None:
    """The client as OpenLineage configures it, or None when nothing is configured.

    The client falls back to printing events on the console when it finds no
    configuration; floe sends nothing then (an explicit ``type: console`` still prints).
    """
    logger = logging.getLogger("openlineage.client.client")
    level = logger.level
    logger.setLevel(logging.ERROR)  # its "no configuration found" warning is our default
    try:
        client = OpenLineageClient()
    finally:
        logger.setLevel(level)
    explicit = bool((client.config.transport or {}).get("type"))
    if client.transport.kind == "noop" or (client.transport.kind == "console" and not explicit):
        return None
    return client


def emit(events: list[RunEvent], client: OpenLineageClient | None = None) -> EmitReport:
    """Send ``events`` in order; the first transport error stops and becomes a warning."""
    client = client if client is not None else configured_client()
    if client is None:
        return EmitReport(sent=0, total=len(events), configured=False)
    sent = 0
    try:
        for event in events:
            client.emit(event)
            sent += 1
        client.close(timeout=10)
    except Exception as exc:  # lineage must never fail the build
        reason = " ".join(str(exc).split())[:300]
        return EmitReport(
            sent=sent,
            total=len(events),
            configured=True,
            warning=(
                f"OpenLineage: {len(events) - sent} of {len(events)} events not sent "
                f"({type(exc).__name__}: {reason}); the build is unaffected. Check "
                "OPENLINEAGE_URL / openlineage.yml."
            ),
        )
    return EmitReport(sent=sent, total=len(events), configured=True)


def emit_for_target(
    target: Path,
    *,
    namespace: str,
    warn: Callable[[str], None],
    job_namespace: str = DEFAULT_JOB_NAMESPACE,
    project_dir: Path | None = None,
    client: OpenLineageClient | None = None,
    catalog_loader: Callable[[], Any] | None = None,
) -> EmitReport:
    """Build and send the events of ``target``'s last invocation; never raises.

    Any problem (no configuration: silence; missing artifacts, a transport error) ends
    as at most one ``warn`` line. ``catalog_loader`` opens the Iceberg catalog (pyiceberg)
    for row counts and per-check assertions; called only when events are sent.
    """
    client = client if client is not None else configured_client()
    if client is None:
        return EmitReport(sent=0, total=0, configured=False)
    try:
        catalog = catalog_loader() if catalog_loader is not None else None
        events = build_events(
            target,
            namespace=namespace,
            job_namespace=job_namespace,
            project_dir=project_dir,
            catalog=catalog,
        )
    except Exception as exc:  # lineage must never fail the build
        message = f"OpenLineage: no events built ({type(exc).__name__}: {exc})"
        warn(message)
        return EmitReport(sent=0, total=0, configured=True, warning=message)
    report = emit(events, client)
    if report.warning:
        warn(report.warning)
    return report


def after_dbt(
    catalog_name: str,
    warn: Callable[[str], None],
    project_dir: Path | None = None,
    catalog_loader: Callable[[], Any] | None = None,
) -> Callable[[Path], EmitReport]:
    """A ``finish`` hook for :func:`floe.dbt_runner.run_dbt`: emit the finished invocation."""

    def hook(target: Path) -> EmitReport:
        return emit_for_target(
            target,
            namespace=dataset_namespace(catalog_name),
            warn=warn,
            project_dir=project_dir,
            catalog_loader=catalog_loader,
        )

    return hook


# ---------------------------------------------------------------- floe's own commands


def table_snapshots(catalog: Any) -> dict[str, int | None]:
    """schema.table -> current snapshot id, for every table of the catalog."""
    out: dict[str, int | None] = {}
    for namespace in catalog.list_namespaces():
        for identifier in catalog.list_tables(namespace):
            name = ".".join(identifier[-2:]).lower()
            try:
                snapshot = catalog.load_table(identifier).current_snapshot()
            except Exception:  # dropped meanwhile
                continue
            out[name] = snapshot.snapshot_id if snapshot is not None else None
    return out


@dataclass
class CommandRun:
    """One floe command as an OpenLineage run (see :func:`command_run`)."""

    command: str
    run_id: str
    events: list[RunEvent] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    report: EmitReport | None = None


def command_events(
    command: str,
    run_id: str,
    *,
    namespace: str,
    started: datetime,
    ended: datetime,
    outputs: Mapping[str, Statistics | None],
    error: str | None = None,
    job_namespace: str = DEFAULT_JOB_NAMESPACE,
    aborted: bool = False,
) -> list[RunEvent]:
    """START and COMPLETE (FAIL with ``error``, ABORT when stopped by the user) of job
    ``floe.<command>``; outputs are the tables the command committed to, each with its
    row count when known."""
    job = Job(
        namespace=job_namespace,
        name=f"floe.{command}",
        facets={
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="STREAMING" if command in ("consume", "stream") else "BATCH",
                integration="FLOE",
                jobType="COMMAND",
            )
        },
    )
    datasets = [
        OutputDataset(
            namespace=namespace,
            name=name,
            outputFacets={"outputStatistics": stats} if stats is not None else {},
        )
        for name, stats in sorted(outputs.items())
    ]
    end_facets: dict[str, RunFacet] = {}
    if error is not None:
        end_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
            message=error, programmingLanguage="PYTHON"
        )
    return [
        RunEvent(
            eventType=RunState.START,
            eventTime=started.isoformat(),
            run=Run(runId=run_id),
            job=job,
            producer=PRODUCER,
        ),
        RunEvent(
            eventType=RunState.ABORT
            if aborted
            else RunState.FAIL
            if error is not None
            else RunState.COMPLETE,
            eventTime=ended.isoformat(),
            run=Run(runId=run_id, facets=end_facets),
            job=job,
            outputs=datasets,
            producer=PRODUCER,
        ),
    ]


@contextmanager
def command_run(
    command: str,
    *,
    catalog_name: str,
    catalog_loader: Callable[[], Any],
    warn: Callable[[str], None],
    client: OpenLineageClient | None = None,
) -> Iterator[CommandRun]:
    """Run the ``with`` body as OpenLineage run ``floe.<command>``: a START, then a
    COMPLETE (or FAIL, the exception re-raised) naming every table that got a new
    snapshot meanwhile (floe's writers take turns under the writer lock, so those are
    the command's). Nothing configured: nothing is read or sent. Lineage never fails
    the command: any problem is one ``warn`` line."""
    run = CommandRun(command, str(uuid.uuid4()))
    client = client if client is not None else configured_client()
    if client is None:
        yield run
        return
    started = datetime.now(UTC)
    clock = time.perf_counter()
    catalog: Any = None
    before: dict[str, int | None] = {}
    try:
        catalog = catalog_loader()
        before = table_snapshots(catalog)
    except Exception as exc:
        warn(f"OpenLineage: floe {command}: catalog not read ({type(exc).__name__}: {exc})")
    error: str | None = None
    aborted = False
    try:
        yield run
    except KeyboardInterrupt:  # a stream stopped by its user: ABORT, not a failure
        aborted = True
        raise
    except BaseException as exc:
        code = getattr(exc, "code", getattr(exc, "exit_code", 1))
        if not (isinstance(exc, SystemExit | _click_exit()) and code in (0, None)):
            error = f"{type(exc).__name__}: {exc}"[:2000]
        raise
    finally:
        outputs: dict[str, Statistics | None] = {}
        try:
            if catalog is not None:
                after = table_snapshots(catalog)
                for name, snap in after.items():
                    if snap is not None and before.get(name) != snap:
                        identifier = tuple(name.split("."))
                        outputs[name] = snapshot_statistics(catalog.load_table(identifier))
        except Exception as exc:
            warn(f"OpenLineage: floe {command}: outputs not read ({type(exc).__name__})")
        ended = started + _elapsed(clock)
        run.outputs = sorted(outputs)
        run.events = command_events(
            command,
            run.run_id,
            namespace=dataset_namespace(catalog_name),
            started=started,
            ended=ended,
            outputs=outputs,
            error=error,
            aborted=aborted,
        )
        run.report = emit(run.events, client)
        if run.report.warning:
            warn(run.report.warning)


def _elapsed(clock: float) -> Any:
    from datetime import timedelta

    return timedelta(seconds=time.perf_counter() - clock)


def _click_exit() -> type[BaseException]:
    try:
        from click.exceptions import Exit

        return Exit
    except ImportError:  # pragma: no cover - click is a dependency
        return SystemExit


__all__ = [
    "DEFAULT_JOB_NAMESPACE",
    "CommandRun",
    "EmitReport",
    "OpenLineageArtifactsError",
    "WarehouseFacts",
    "after_dbt",
    "build_events",
    "command_events",
    "command_run",
    "configured_client",
    "dataset_namespace",
    "emit",
    "emit_for_target",
    "snapshot_statistics",
    "warehouse_facts",
]

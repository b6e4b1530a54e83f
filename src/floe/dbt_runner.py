"""Run dbt in this process, sharing its SparkSession (one JVM for many builds)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from floe.runtime.settings import Settings, find_dbt_project


@dataclass
class DbtRun:
    success: bool
    result: Any
    exception: BaseException | None
    seconds: float
    first_node_seconds: float | None
    failures: list[str] = field(default_factory=list)


def run_dbt(
    args: Sequence[str],
    *,
    vars: dict[str, Any] | None = None,
    project: Path | None = None,
    profiles_dir: Path | None = None,
    target_path: Path | None = None,
    quiet: bool = False,
    settings: Settings | None = None,
    finish: Callable[[Path], object] | None = None,
) -> DbtRun:
    """`dbt <args>` in-process against ``project`` (default: the floe project).

    Profiles come from ``profiles_dir``, else the floe project's ``profiles/`` (fixture
    projects in tests share it). ``settings`` (default: the project found above the
    working directory) locate the floe project when ``project`` or ``profiles_dir`` is not given. ``finish`` is
    called with the target directory once dbt is done (floe's OpenLineage emission).
    """
    from dbt.cli.main import dbtRunner

    if project is None or profiles_dir is None:
        floe_project = settings.dbt_project_dir() if settings else find_dbt_project()
        root = project or floe_project
        profiles = profiles_dir or floe_project / "profiles"
    else:
        root, profiles = project, profiles_dir
    argv = [*args, "--project-dir", str(root), "--profiles-dir", str(profiles)]
    if vars:
        argv += ["--vars", yaml.safe_dump(vars, default_flow_style=True).strip()]
    if target_path is not None:
        argv += ["--target-path", str(target_path)]
    if quiet:
        argv += ["--quiet"]
    started = time.perf_counter()
    first_node: list[float] = []

    def on_event(event: Any) -> None:
        if not first_node and event.info.name == "NodeStart":
            first_node.append(time.perf_counter() - started)

    res = dbtRunner(callbacks=[on_event]).invoke(argv)
    if finish is not None and res.result is not None:  # else run_results.json is stale
        finish(target_path or root / "target")
    failures = []
    for node_result in getattr(res.result, "results", None) or []:
        status = str(getattr(node_result, "status", ""))
        if status in ("error", "fail", "runtime error"):
            node = getattr(node_result, "node", None)  # None for run-operation results
            name = node.unique_id if node is not None else "operation"
            failures.append(f"{name}: {node_result.message}")
    return DbtRun(
        success=bool(res.success),
        result=res.result,
        exception=res.exception,
        seconds=time.perf_counter() - started,
        first_node_seconds=first_node[0] if first_node else None,
        failures=failures,
    )

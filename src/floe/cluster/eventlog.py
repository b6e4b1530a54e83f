"""Where an application's tasks ran, read from its Spark event log.

The ``cluster`` target writes an event log (``FLOE_SPARK_EVENT_LOG``; the loopback
cluster's is ``$FLOE_HOME/cluster/events``). Each line is a JSON listener event; three
kinds say where work ran:

- ``SparkListenerExecutorAdded``: executor id -> host (the worker's executors);
- ``SparkListenerTaskEnd``: the executor of every task (``driver`` in a local session);
- ``SparkListenerSQLExecutionStart`` + ``SparkListenerJobStart``: which tasks belong
  to a query whose physical plan runs Python (``PythonMapInArrow`` and friends), i.e.
  the Python models' decode running in the executors' Python workers.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

PYTHON_OPERATORS = re.compile(
    r"MapInArrow|MapInPandas|ArrowEvalPython|BatchEvalPython|FlatMapGroupsInPandas"
)


@dataclass
class TaskPlacement:
    """One application's executors and the executor of each of its tasks."""

    app_id: str | None = None
    master: str | None = None
    executors: dict[str, str] = field(default_factory=dict)  # executor id -> host
    tasks: Counter[str] = field(default_factory=Counter)  # executor id -> tasks
    python_tasks: Counter[str] = field(default_factory=Counter)

    @property
    def tasks_on_driver(self) -> int:
        return self.tasks.get("driver", 0)


def read_placement(event_log: Path) -> TaskPlacement:
    """The :class:`TaskPlacement` of the application that wrote ``event_log``."""
    placement = TaskPlacement()
    python_executions: set[str] = set()
    stage_execution: dict[int, str] = {}
    task_stages: list[tuple[int, str]] = []
    with event_log.open(encoding="utf-8") as lines:
        for line in lines:
            event = json.loads(line)
            kind = event.get("Event", "")
            if kind == "SparkListenerApplicationStart":
                placement.app_id = event.get("App ID")
            elif kind == "SparkListenerEnvironmentUpdate":
                placement.master = (event.get("Spark Properties") or {}).get("spark.master")
            elif kind == "SparkListenerExecutorAdded":
                info = event.get("Executor Info") or {}
                placement.executors[str(event["Executor ID"])] = str(info.get("Host"))
            elif kind.endswith("SparkListenerSQLExecutionStart"):
                if PYTHON_OPERATORS.search(event.get("physicalPlanDescription") or ""):
                    python_executions.add(str(event.get("executionId")))
            elif kind == "SparkListenerJobStart":
                execution = (event.get("Properties") or {}).get("spark.sql.execution.id")
                for stage in event.get("Stage IDs") or []:
                    if execution is not None:
                        stage_execution[int(stage)] = str(execution)
            elif kind == "SparkListenerTaskEnd":
                executor = str((event.get("Task Info") or {}).get("Executor ID"))
                placement.tasks[executor] += 1
                task_stages.append((int(event.get("Stage ID", -1)), executor))
    for stage, executor in task_stages:
        if stage_execution.get(stage) in python_executions:
            placement.python_tasks[executor] += 1
    return placement


def event_logs(directory: Path) -> list[Path]:
    """Finished applications' event logs in ``directory``, oldest first."""
    logs = [p for p in directory.iterdir() if p.is_file() and not p.name.endswith(".inprogress")]
    return sorted(logs, key=lambda p: p.stat().st_mtime)

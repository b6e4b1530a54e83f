"""Task placement from a Spark event log (the format Spark 3.5 writes, one JSON event a line)."""

from __future__ import annotations

import json

from floe.cluster.eventlog import event_logs, read_placement


def _log(tmp_path, events, name="app-1"):
    path = tmp_path / name
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


def _task(stage, executor):
    return {
        "Event": "SparkListenerTaskEnd",
        "Stage ID": stage,
        "Task Info": {"Executor ID": executor, "Host": "127.0.0.1"},
    }


EVENTS = [
    {"Event": "SparkListenerApplicationStart", "App ID": "app-1"},
    {
        "Event": "SparkListenerEnvironmentUpdate",
        "Spark Properties": {"spark.master": "spark://m:7077"},
    },
    {"Event": "SparkListenerExecutorAdded", "Executor ID": "0", "Executor Info": {"Host": "w1"}},
    {"Event": "SparkListenerExecutorAdded", "Executor ID": "1", "Executor Info": {"Host": "w2"}},
    {
        "Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
        "executionId": 7,
        "physicalPlanDescription": "== Physical Plan ==\nPythonMapInArrow decode(...)",
    },
    {
        "Event": "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
        "executionId": 8,
        "physicalPlanDescription": "== Physical Plan ==\nAppendData IcebergWrite",
    },
    {
        "Event": "SparkListenerJobStart",
        "Stage IDs": [3],
        "Properties": {"spark.sql.execution.id": "7"},
    },
    {
        "Event": "SparkListenerJobStart",
        "Stage IDs": [4, 5],
        "Properties": {"spark.sql.execution.id": "8"},
    },
    {"Event": "SparkListenerJobStart", "Stage IDs": [6], "Properties": {}},
    _task(3, "0"),
    _task(3, "1"),
    _task(4, "1"),
    _task(5, "1"),
    _task(6, "driver"),
]


def test_tasks_by_executor_and_python_tasks(tmp_path):
    placement = read_placement(_log(tmp_path, EVENTS))
    assert placement.app_id == "app-1" and placement.master == "spark://m:7077"
    assert placement.executors == {"0": "w1", "1": "w2"}
    assert placement.tasks == {"0": 1, "1": 3, "driver": 1}
    assert placement.tasks_on_driver == 1
    assert placement.python_tasks == {"0": 1, "1": 1}, "only the stage of the Python query"


def test_finished_logs_only_oldest_first(tmp_path):
    import os

    first = _log(tmp_path, EVENTS, "app-1")
    second = _log(tmp_path, EVENTS, "app-2")
    _log(tmp_path, EVENTS, "app-3.inprogress")
    os.utime(first, (1, 1))
    assert event_logs(tmp_path) == [first, second]

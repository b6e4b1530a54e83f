"""Lookups over py4j done once per JVM: the running session (get_spark), Spark's SQL
functions (memoize_function_lookups, which floe's session start installs) and floe's
classes (jvm_class). A check run builds a few hundred columns and the dbt adapter asks
for the session once per statement; every lookup was a round trip to the JVM
(docs/decisions/0073-fewer-py4j-round-trips-per-check-run.md)."""

from types import SimpleNamespace

import pytest
from py4j import clientserver
from pyspark.sql import functions as F

from floe.runtime import jars
from floe.runtime.session import memoize_function_lookups


@pytest.fixture
def round_trips(monkeypatch):
    """The commands this thread sends to the JVM, as their first three lines (the kind,
    and the target and member, or the name looked up)."""
    sent: list[str] = []
    send = clientserver.ClientServerConnection.send_command

    def counted(self, command):
        sent.append(":".join(command.split("\n")[:3]))
        return send(self, command)

    monkeypatch.setattr(clientserver.ClientServerConnection, "send_command", counted)
    return sent


def test_a_function_is_looked_up_once_then_only_called(spark, round_trips):
    assert getattr(F._get_jvm_function, "_floe_memo", False), "get_spark installs the memo"
    F.lit(1)  # looked up (now or by an earlier test)
    round_trips.clear()
    columns = [F.lit(i) for i in range(10)]
    assert len(round_trips) == 10, round_trips  # one call each, no reflection
    assert not [c for c in round_trips if c.startswith("r:")]
    df = spark.range(3).select(*[c.alias(f"c{i}") for i, c in enumerate(columns)])
    assert df.collect()[2] == tuple(range(10))


def test_installing_twice_keeps_one_memo(spark):
    installed = F._get_jvm_function
    memoize_function_lookups()
    assert F._get_jvm_function is installed


def test_another_gateway_looks_up_again(spark):
    """The memo is per gateway view: a function found through one JVM is never handed to
    another (a context started again in a new JVM)."""
    F.lit(1)
    real = spark.sparkContext
    other = SimpleNamespace(_jvm=SimpleNamespace(functions=SimpleNamespace(lit="elsewhere")))
    assert F._get_jvm_function("lit", other) == "elsewhere"
    assert F._get_jvm_function("lit", real) != "elsewhere"
    assert F._get_jvm_function("lit", real) is F._get_jvm_function("lit", real)


def test_floe_classes_are_found_once_per_jvm(spark, round_trips):
    found = jars.jvm_class(spark, "floe.jvm.Calls")
    missing = jars.jvm_class(spark, "floe.jvm.NoSuchClass")
    assert found is not None and missing is None
    round_trips.clear()
    assert jars.jvm_class(spark, "floe.jvm.Calls") is found
    assert jars.jvm_class(spark, "floe.jvm.NoSuchClass") is None
    assert round_trips == []


def test_the_running_session_is_handed_out_without_asking_the_jvm(spark, round_trips):
    """The dbt adapter asks for the session once per statement: the process's session,
    started, comes back as it is (asking the JVM for the thread's active one was eight
    round trips and a new wrapper object each time)."""
    from floe.runtime import get_spark

    assert get_spark() is get_spark()
    round_trips.clear()
    for _ in range(5):
        assert get_spark() is spark
    assert round_trips == []


def test_a_check_runs_aggregation_is_built_without_lookups(spark, round_trips):
    """The aggregation of checks without a `where` (contained_in's values, data_type's
    kinds, counts and bounds) is built with no reflection for a function, no column
    resolved against the table on the spot, and no `when(true, ...)`: each was a round
    trip of its own, on every check run
    (docs/decisions/0074-check-columns-built-in-fewer-round-trips.md). The values are
    the same as with a `where` that every row passes."""
    from floe.quality.analyzers import compute_metrics, scan_frame
    from floe.quality.checks import parse_checks

    df = spark.createDataFrame(
        [(i, ["US", "DE", "XX"][i % 3], str(i) if i % 4 else "x", float(i)) for i in range(12)],
        "id int, country string, code string, amount double",
    )
    checks = [
        "size > 0",
        "completeness(code) >= 0",
        "is_contained_in(country, ['US', 'DE'])",
        "has_data_type(code, integral)",
        "maximum(amount) <= 100",
        "compliance('amount >= 0') == 1",
    ]
    analyzers = [c.analyzer for c in parse_checks(checks)]
    scan_frame(df, analyzers)  # every lookup once, now or by an earlier test
    round_trips.clear()
    scan_frame(df, analyzers)
    # (PySpark's own `_to_seq` still finds PythonUtils by name for a list argument.)
    assert not [c for c in round_trips if c.startswith("r:") and "PythonUtils" not in c]
    assert not [c for c in round_trips if c.startswith("c:") and c.endswith(":apply")]
    built = str(scan_frame(df, analyzers)[0]._jdf.queryExecution().logical())
    assert "CASE WHEN TRUE" not in built.upper(), built
    everywhere = [
        c.analyzer for c in parse_checks([{"check": c, "where": "id >= 0"} for c in checks])
    ]
    plain = [m.value for m in compute_metrics(df, analyzers)]
    assert plain == [m.value for m in compute_metrics(df, everywhere)]
    assert plain == [12.0, 1.0, 8 / 12, 9 / 12, 11.0, 1.0]

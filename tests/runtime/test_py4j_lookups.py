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
    """The commands this thread sends to the JVM, as their first two lines."""
    sent: list[str] = []
    send = clientserver.ClientServerConnection.send_command

    def counted(self, command):
        sent.append(":".join(command.split("\n")[:2]))
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

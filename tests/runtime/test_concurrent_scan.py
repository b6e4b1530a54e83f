"""A row-level statement refused because another writer committed is run again.

docs/runtime.md, "Concurrent writers".
"""

from __future__ import annotations

import threading
import uuid

import pytest

from floe.runtime.statements import CONCURRENT_SCAN, retry_concurrent_scan, sql_retrying

REFUSAL = (
    "java.lang.IllegalStateException: Runtime file filtering is not possible: "
    f"{CONCURRENT_SCAN}. Row-level operation scan snapshot ID: 1, current table snapshot ID: 2."
)


class Flaky:
    """Fails with `error` the first `failures` calls, then returns the call count."""

    def __init__(self, failures: int, error: str = REFUSAL) -> None:
        self.failures = failures
        self.error = error
        self.calls = 0

    def __call__(self) -> int:
        self.calls += 1
        if self.calls <= self.failures:
            raise RuntimeError(self.error)
        return self.calls


def test_a_refused_statement_runs_again_on_the_newer_snapshot():
    run = Flaky(failures=2)
    assert retry_concurrent_scan(run, what="delete", wait=0) == 3


def test_any_other_error_is_raised_at_once():
    run = Flaky(failures=1, error="[TABLE_OR_VIEW_NOT_FOUND] raw.nope")
    with pytest.raises(RuntimeError, match="TABLE_OR_VIEW_NOT_FOUND"):
        retry_concurrent_scan(run, what="delete", wait=0)
    assert run.calls == 1


def test_refusals_stop_after_the_last_attempt():
    run = Flaky(failures=10)
    with pytest.raises(RuntimeError, match="concurrently modified"):
        retry_concurrent_scan(run, what="delete", attempts=3, wait=0)
    assert run.calls == 3


def test_the_dbt_connection_runs_a_refused_statement_again():
    from floe.adapter import _literal_binding_wrapper

    class Cursor:
        def __init__(self) -> None:
            self.run = Flaky(failures=1)
            self.sql: list[str] = []

        def execute(self, sql: str, *bindings: object) -> None:
            self.sql.append(sql)
            self.run()

    class Handle:
        def __init__(self) -> None:
            self.cur = Cursor()

        def cursor(self) -> Cursor:
            return self.cur

    handle = Handle()
    wrapper = _literal_binding_wrapper()(handle).cursor()
    wrapper.execute("delete from audit.ledger where model = 'm'")
    assert handle.cur.sql == ["delete from audit.ledger where model = 'm'"] * 2


def test_deletes_beside_a_concurrent_appender_lose_nothing(spark):
    """Copy-on-write deletes in one thread, appends in another: every count reconciles."""
    table = f"audit.concurrent_scan_{uuid.uuid4().hex[:8]}"
    spark.sql(
        f"create table {table} (feed string, k int) using iceberg "
        "tblproperties ('format-version' = '2', 'write.delete.mode' = 'copy-on-write')"
    )
    try:
        spark.createDataFrame([("gone", i) for i in range(40)], "feed string, k int").writeTo(
            table
        ).append()
        stop = threading.Event()
        appended: list[int] = []
        failed: list[BaseException] = []

        def append() -> None:
            try:
                while not stop.is_set():
                    n = len(appended)
                    spark.createDataFrame([("kept", n)], "feed string, k int").writeTo(
                        table
                    ).append()
                    appended.append(n)
            except BaseException as exc:  # reported below, not lost in the thread
                failed.append(exc)

        writer = threading.Thread(target=append)
        writer.start()
        try:
            for start in range(0, 40, 5):
                spark.createDataFrame(
                    [(k,) for k in range(start, start + 5)], "k int"
                ).createOrReplaceTempView("floe_test_gone")
                sql_retrying(
                    spark,
                    f"delete from {table} where feed = :feed "
                    "and k in (select k from floe_test_gone)",
                    args={"feed": "gone"},
                )
        finally:
            stop.set()
            writer.join()
            spark.catalog.dropTempView("floe_test_gone")
        assert not failed, failed
        rows = spark.sql(f"select feed, count(*), count(distinct k) from {table} group by feed")
        assert {r[0]: (r[1], r[2]) for r in rows.collect()} == {
            "kept": (len(appended), len(appended))
        }
    finally:
        spark.sql(f"drop table if exists {table} purge")

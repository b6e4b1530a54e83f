"""The Great Expectations peer of bench_dq: the same 20 checks as GX Core expectations.

Run by ``bench/bench_dq.py`` with the python of a scratch venv holding GX Core (never
imported by floe, nor in floe's venv): ``python gx_peer.py CONF_JSON TABLE REPEAT``.
It starts its own SparkSession with the Spark settings the bench passes (the same
Iceberg catalog, jars and cores), reads the same table, validates the suite REPEAT
times after one warm-up run and prints one JSON line: the best seconds, the load
average and the expectations that failed (none expected on the bench's table).

GX's Spark data source persists a DataFrame by default; ``persist=False`` makes each
validation read the table, as floe's one pass does.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable


def suite_expectations(gx: object) -> list:
    """The bench's 20 checks (bench_dq.CHECKS, in order) as GX expectations.

    Where GX has no identical metric the nearest one is used and named here:
    approx_count_distinct -> the exact unique count; approx_quantile(0.5) -> the median;
    has_data_type(integral) -> the integral regular expression floe's kinds use;
    compliance(predicate) -> UnexpectedRowsExpectation over the same predicate.
    """
    e = gx.expectations  # type: ignore[attr-defined]
    return [
        e.ExpectTableRowCountToBeBetween(min_value=1),
        e.ExpectColumnValuesToNotBeNull(column="id"),
        e.ExpectColumnValuesToNotBeNull(column="email", mostly=0.95),
        e.ExpectColumnValuesToNotBeNull(column="country"),
        e.ExpectColumnValuesToBeInSet(column="country", value_set=["US", "DE", "FR", "NL", "PL"]),
        e.ExpectColumnValuesToBeInSet(column="status", value_set=["new", "paid", "shipped"]),
        e.ExpectColumnValuesToBeBetween(column="amount", min_value=0),
        e.ExpectColumnMaxToBeBetween(column="amount", max_value=1000),
        e.ExpectColumnMeanToBeBetween(column="amount", min_value=0, max_value=1000),
        e.ExpectColumnStdevToBeBetween(column="amount", max_value=1000),
        e.ExpectColumnSumToBeBetween(column="quantity", min_value=1),
        e.ExpectColumnMinToBeBetween(column="quantity", min_value=0),
        e.ExpectColumnMaxToBeBetween(column="quantity", max_value=49),
        e.ExpectColumnValuesToMatchRegex(column="email", regex=r"^u[0-9]+@x[.]io$"),
        e.ExpectColumnValueLengthsToBeBetween(column="email", max_value=64),
        e.ExpectColumnUniqueValueCountToBeBetween(column="customer_id", min_value=90000),
        e.ExpectColumnMedianToBeBetween(column="amount", min_value=0, max_value=1000),
        e.ExpectColumnValuesToMatchRegex(column="code", regex=r"^\s*[+-]?\d+\s*$"),
        e.UnexpectedRowsExpectation(
            unexpected_rows_query="select * from {batch} where not (quantity * amount >= 0)"
        ),
        e.ExpectColumnValuesToNotBeNull(
            column="status", mostly=0.99, row_condition="country = 'US'", condition_parser="spark"
        ),
    ]


def validate(frame: Callable[[], object], repeat: int) -> dict:
    """Best seconds of validating ``frame()`` (a Spark DataFrame) with the suite."""
    import great_expectations as gx

    context = gx.get_context(mode="ephemeral")
    source = context.data_sources.add_spark(name="bench", persist=False)
    asset = source.add_dataframe_asset(name="orders")
    whole = asset.add_batch_definition_whole_dataframe("whole")
    suite = context.suites.add(gx.ExpectationSuite(name="bench_dq"))
    for expectation in suite_expectations(gx):
        suite.add_expectation(expectation)

    def run() -> object:
        batch = whole.get_batch(batch_parameters={"dataframe": frame()})
        return batch.validate(suite)

    result = run()  # warm-up: JIT, Iceberg metadata, GX's own imports
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - started)
    failed = [
        f"{r.expectation_config.type} {r.expectation_config.kwargs.get('column', '')}"
        f"{' (error)' if r.exception_info.get('raised_exception') else ''}"
        for r in result.results  # type: ignore[attr-defined]
        if not r.success
    ]
    one, five, fifteen = os.getloadavg()
    return {
        "seconds": min(times),
        "checks": len(suite.expectations),
        "failed": failed,
        "gx": gx.__version__,
        "load": f"{one:.1f} {five:.1f} {fifteen:.1f}",
    }


def main(conf_json: str, table: str, repeat: int) -> dict:
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in json.loads(conf_json).items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    try:
        return validate(lambda: spark.table(table), repeat)
    finally:
        spark.stop()


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1], sys.argv[2], int(sys.argv[3]))))

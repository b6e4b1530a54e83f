"""local_frame: driver-side rows that the JVM reads alone, with createDataFrame's values."""

from __future__ import annotations

import datetime as dt

from floe.runtime.frames import local_frame

PLAIN = "name string, size bigint, n int, ok boolean, x double"
ROWS = [
    ("a", 1, None, True, 1.5),
    ("é€ b", None, 3, None, None),
    (None, -(2**62), -7, False, -0.0),
    ("", 2**62, 2**31 - 1, True, float("inf")),
]


def _analyzed(df) -> str:
    return df._jdf.queryExecution().analyzed().toString()


def _optimized(df) -> str:
    return df._jdf.queryExecution().optimizedPlan().getClass().getSimpleName()


def test_plain_rows_are_a_local_relation_with_the_same_values(spark):
    df = local_frame(spark, ROWS, PLAIN)
    # A LocalRelation: no Python RDD, so no Python worker reads it.
    assert "LocalRelation" in _analyzed(df)
    assert "RDD" not in _analyzed(df)
    # one partition: appended to Iceberg, one data file
    assert df.rdd.getNumPartitions() == 1
    reference = spark.createDataFrame(ROWS, PLAIN)
    assert df.schema == reference.schema
    assert df.collect() == reference.collect()
    assert [tuple(r) for r in df.collect()] == ROWS


def test_no_rows_give_an_empty_local_relation_of_the_schema(spark):
    df = local_frame(spark, [], PLAIN)
    assert df.collect() == []
    assert df.schema == spark.createDataFrame([], PLAIN).schema
    assert _optimized(df) == "LocalRelation"


def test_timestamps_and_dates_keep_create_dataframes_values(spark):
    ddl = "k string, at timestamp, on date"
    rows = [
        ("naive", dt.datetime(2024, 3, 31, 1, 30, 5, 123456), dt.date(2024, 2, 29)),
        ("aware", dt.datetime(2024, 10, 27, 0, 59, tzinfo=dt.UTC), dt.date(1969, 12, 31)),
        ("offset", dt.datetime(2024, 1, 1, 9, tzinfo=dt.timezone(dt.timedelta(hours=5))), None),
        ("none", None, dt.date(1, 1, 1)),
    ]
    df = local_frame(spark, rows, ddl)
    assert "LocalRelation" in _analyzed(df)
    assert "RDD" not in _analyzed(df)
    reference = spark.createDataFrame(rows, ddl)
    assert df.schema == reference.schema
    assert df.collect() == reference.collect()
    assert local_frame(spark, [], ddl).schema == reference.schema


def test_other_types_keep_the_python_path(spark):
    ddl = "k string, tags array<string>"
    rows = [("a", ["x", "y"]), ("b", None)]
    df = local_frame(spark, rows, ddl)
    assert "LocalRelation" not in _analyzed(df)
    assert df.rdd.getNumPartitions() == 1
    assert df.collect() == spark.createDataFrame(rows, ddl).collect()


def test_an_append_writes_one_data_file(spark, lakehouse):
    spark.sql("create table staging.frames_files (name string, size bigint) using iceberg")
    rows = [(f"f{i}", i) for i in range(16)]
    local_frame(spark, rows, "name string, size bigint").writeTo("staging.frames_files").append()
    assert spark.sql("select count(*) from staging.frames_files.files").first()[0] == 1
    assert sorted(spark.table("staging.frames_files").collect()) == sorted(rows)


def test_a_key_view_serves_a_delete(spark, lakehouse):
    spark.sql("create table staging.frames_t (k string, v bigint) using iceberg")
    spark.sql("insert into staging.frames_t values ('a', 1), ('b', 2), ('c', 3)")
    local_frame(spark, [("a",), ("c",)], "k string").createOrReplaceTempView("frames_keys")
    try:
        spark.sql("delete from staging.frames_t where k in (select k from frames_keys)")
    finally:
        spark.catalog.dropTempView("frames_keys")
    assert spark.table("staging.frames_t").collect() == [("b", 2)]

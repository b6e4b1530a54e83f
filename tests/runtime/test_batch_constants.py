"""Per-batch constants (a load sequence, an ingest time) stay out of Spark's generated code:
two batches of one feed then run one compiled copy stage (floe.runtime.jars.batch_constant)."""

from datetime import datetime

import pytest
from pyspark.sql import functions as F

from floe.runtime.jars import batch_constant, batch_timestamp, jvm_class


def _stamped(spark, seq, at, *, plain: bool = False):
    """Rows stamped as an ingest batch stamps its raw rows."""
    if plain:
        return spark.range(4).select(
            "id",
            F.lit(at).cast("timestamp").alias("_ingested_at"),
            F.lit(seq).cast("bigint").alias("_load_seq"),
        )
    return spark.range(4).select(
        "id",
        batch_timestamp(spark, at).alias("_ingested_at"),
        batch_constant(spark, seq).alias("_load_seq"),
    )


def _generated_code(df) -> str:
    """The Java source of the DataFrame's whole-stage-codegen subtrees."""
    found = df._jdf.queryExecution().debug().codegenToSeq()
    return "\n".join(found.apply(i)._2() for i in range(found.size()))


@pytest.fixture
def jar(spark):
    if jvm_class(spark, "floe.jvm.Constant") is None:
        pytest.fail("floe's jar is not in the session (make setup builds it)")


def test_values_are_the_literals_values(spark, jar) -> None:
    at = "2026-11-29 10:11:12.345678"
    rows = _stamped(spark, 41, at).collect()
    assert [r["_load_seq"] for r in rows] == [41] * 4
    assert {r["_ingested_at"] for r in rows} == {datetime(2026, 11, 29, 10, 11, 12, 345678)}
    assert rows == _stamped(spark, 41, at, plain=True).collect()
    # a whole-second time, and the epoch's own
    assert _stamped(spark, 0, "1970-01-01 00:00:00").first()["_ingested_at"] == datetime(1970, 1, 1)
    # text with its own offset is that instant, as the cast reads it
    offset = "2026-11-29T12:00:00+02:00"
    assert _stamped(spark, 1, offset).collect() == _stamped(spark, 1, offset, plain=True).collect()


def test_two_batches_generate_the_same_code(spark, jar) -> None:
    one = _generated_code(_stamped(spark, 7, "2026-11-29 10:00:00.000001"))
    two = _generated_code(_stamped(spark, 8, "2026-11-29 11:30:00.5"))
    assert one == two
    # the plain literals are written into the source: what this avoids
    assert _generated_code(_stamped(spark, 7, "2026-11-29 10:00:00.000001", plain=True)) != (
        _generated_code(_stamped(spark, 8, "2026-11-29 11:30:00.5", plain=True))
    )


def test_null_and_other_zones_keep_the_literal(spark, jar) -> None:
    assert spark.range(1).select(batch_constant(spark, None).alias("s")).first()["s"] is None
    assert spark.range(1).select(batch_timestamp(spark, None).alias("t")).first()["t"] is None
    before = spark.conf.get("spark.sql.session.timeZone")
    spark.conf.set("spark.sql.session.timeZone", "Europe/Paris")
    try:
        # read in the session's zone, as the cast reads it; shown back in it as well
        row = spark.range(1).select(batch_timestamp(spark, "2026-07-01 12:00:00").alias("t"))
        assert row.select(F.date_format("t", "yyyy-MM-dd HH:mm:ss")).first()[0] == (
            "2026-07-01 12:00:00"
        )
    finally:
        spark.conf.set("spark.sql.session.timeZone", before)

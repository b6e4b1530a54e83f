"""Frozen and pinned temporary views.

A frozen view is computed once, independent of the tables it read; a pinned view is
analyzed once. The scd2 materialization uses both, through ``adapter.floe_freeze_view``
and ``adapter.floe_pin_view`` (docs/scd2.md, "One statement" and "Catch-up cost").
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from floe.runtime.jars import jvm_class
from floe.runtime.statements import statement_settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

# Temporary views frozen by freeze_view, by name: their DataFrames, to free the blocks.
_FROZEN: dict[str, object] = {}
_FROZEN_LOCK = threading.Lock()


def _view_name(name: str) -> str:
    """`name` if it is a plain temporary view name (letters, digits, _), else ValueError."""
    if not name or name[0].isdigit() or not all(c.isalnum() or c == "_" for c in name):
        raise ValueError(f"not a temporary view name: {name!r}")
    return name


def freeze_view(spark: SparkSession, view: str, name: str) -> None:
    """Compute temporary view ``view`` once; register its rows as temporary view ``name``.

    The rows are kept on the executors (a local checkpoint, memory then disk) and no
    longer depend on the tables ``view`` reads, so a MERGE into one of those tables reads
    them as they were. ``CACHE TABLE`` is not enough there: Spark does not substitute a
    cached plan that reads the MERGE's own target, and the MERGE recomputes it
    (docs/scd2.md, "One statement"). Free with
    :func:`release_view`; freezing ``name`` again frees the rows it held.
    """
    with statement_settings(spark, ["static_plan"]):
        frame = _measured(spark, spark.table(_view_name(view)).localCheckpoint(eager=True))
    release_view(spark, name)
    with _FROZEN_LOCK:
        _FROZEN[name] = frame
    frame.createOrReplaceTempView(name)


def _measured(spark: SparkSession, frame: DataFrame) -> DataFrame:
    """``frame`` (a local checkpoint) with the size its rows take as its statistics.

    A checkpoint keeps the estimate of the plan it computed, and Spark's estimate of an
    inner join is the product of its sides' sizes: a few joins put it beyond any
    threshold, and the MERGE that reads the rows then gets no runtime filter
    (docs/decisions/0020-runtime-filtered-merges.md). The rows are computed, so their
    size is known: the blocks the checkpoint holds, in memory and on disk. A frame that
    is not a bare checkpoint, whose blocks are not listed, or a session without floe's
    jar (``floe.jvm.Frames``) keeps its estimate.
    """
    frames = jvm_class(spark, "floe.jvm.Frames")
    plan = frame._jdf.logicalPlan()
    if frames is None or plan.getClass().getSimpleName() != "LogicalRDD":
        return frame
    rdd_id = plan.rdd().id()
    sizes = [
        info.memSize() + info.diskSize()
        for info in spark.sparkContext._jsc.sc().getRDDStorageInfo()
        if info.id() == rdd_id
    ]
    if not sizes:
        return frame
    from pyspark.sql import DataFrame

    return DataFrame(frames.sized(frame._jdf, sizes[0]), spark)


def pin_view(spark: SparkSession, sql: str, name: str) -> None:
    """Temporary view ``name`` over query ``sql``, analyzed once, now.

    A view created by ``CREATE TEMPORARY VIEW ... AS`` keeps its text, and every
    statement that reads it parses and analyzes it again, loading each table it names
    from the catalog again. A stacked scd2 source is a long query: that analysis took
    seconds at every reading. A pinned view keeps the analyzed plan, so its readers
    plan only themselves. It is not a cache: each reading computes the rows, from the
    tables' current snapshots (Spark refreshes the tables of a stored plan). Drop it
    like any temporary view.
    """
    spark.sql(sql).createOrReplaceTempView(_view_name(name))


def release_view(spark: SparkSession, name: str) -> None:
    """Drop temporary view ``name`` frozen by :func:`freeze_view` and free its rows."""
    with _FROZEN_LOCK:
        frame = _FROZEN.pop(_view_name(name), None)
    spark.catalog.dropTempView(name)
    if frame is not None:
        # The checkpointed rows are the RDD under the frame's LogicalRDD.
        frame._jdf.queryExecution().analyzed().rdd().unpersist(False)  # type: ignore[attr-defined]

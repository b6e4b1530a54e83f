"""The `cdc` incremental strategy on real Iceberg tables, one rule at a time.

Models live in tests/materializations/fixtures/cdc_project and read small source tables
(`raw.src_*`) the tests write batch by batch; `var('batch')` selects a batch.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt
from tests.helpers import executed_plans, last_execution_id

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).parent / "fixtures" / "cdc_project"
T = datetime(2022, 7, 2, 1, 0, 0)


def at(seconds: int) -> datetime:
    return T.replace(second=seconds % 60, minute=seconds // 60)


@pytest.fixture
def fx(lakehouse, dbt_target_path):
    def run(select: str, batch: int = 0, *, ok: bool = True, extra: tuple[str, ...] = ()):
        result = run_dbt(
            ["run", "-s", select, *extra],
            vars={"batch": batch},
            project=FIXTURE,
            target_path=dbt_target_path / "cdcfixture",
            quiet=True,
        )
        if ok:
            assert result.success, result.failures or result.exception
        else:
            assert not result.success, f"dbt run -s {select} should have failed"
        return result

    return run


def _append(spark, table: str, schema: str, rows: list[tuple]) -> None:
    df = spark.createDataFrame(rows, schema)
    if spark.catalog.tableExists(table):
        df.writeTo(table).append()
    else:
        df.writeTo(table).using("iceberg").create()


def _snapshots(spark, table: str) -> list[int]:
    return [r[0] for r in spark.sql(f"select snapshot_id from {table}.snapshots").collect()]


MATRIX = (
    "Op string, id int, name string, last_update_time timestamp, "
    "_source_file string, _row_in_file bigint, _batch int"
)


def test_op_matrix_ties_and_rerun(spark, fx):
    full = [(None, i, n, at(0), "LOAD1", i, 0) for i, n in [(1, "a"), (2, "b"), (3, "c"), (4, "d")]]
    _append(spark, "raw.src_matrix", MATRIX, full)
    fx("cdc_matrix", 0)
    assert spark.table("marts.cdc_matrix").columns == ["id", "name", "last_update_time"]

    f1, f2 = "cdc/20220702-010000000.parquet", "cdc/20220702-020000000.parquet"
    changes = [
        # several changes of key 1; the last two tie on time: the later row wins
        ("U", 1, "a1", at(10), f1, 0, 1),
        ("U", 1, "a2", at(20), f1, 1, 1),
        ("U", 1, "a3", at(20), f1, 2, 1),
        ("D", 2, "b", at(10), f1, 3, 1),  # matched delete
        ("D", 99, "zz", at(10), f1, 4, 1),  # delete of a key never seen: nothing
        ("U", 50, "x", at(10), f1, 5, 1),  # update of a key never inserted: upsert
        ("I", 5, "e", at(10), f1, 6, 1),  # inserted and deleted in one batch
        ("D", 5, "e", at(30), f1, 7, 1),
        ("D", 3, "c", at(6), f1, 8, 1),  # deleted, then back
        ("I", 3, "c2", at(7), f1, 9, 1),
        ("U", 4, "d1", at(40), f1, 10, 1),  # later time wins over later row
        ("D", 4, "d", at(30), f1, 11, 1),
        ("I", 6, "f-early", at(10), f1, 12, 1),  # same time in two files: later file
        ("U", 6, "f-late", at(10), f2, 0, 1),
    ]
    _append(spark, "raw.src_matrix", MATRIX, changes)
    before = _snapshots(spark, "marts.cdc_matrix")
    since = last_execution_id(spark)
    fx("cdc_matrix", 1)
    # copy-on-write: no runtime filter (its full outer join keeps every row of the
    # files it rewrites), and the file filter keeps its broadcast join
    merges = [p for p in executed_plans(spark, since).values() if "MergeRows" in p]
    assert len(merges) == 1 and "might_contain" not in merges[0], merges
    assert "BroadcastHashJoin" in merges[0], merges
    rows = {r.id: r.name for r in spark.table("marts.cdc_matrix").collect()}
    assert rows == {1: "a3", 3: "c2", 4: "d1", 50: "x", 6: "f-late"}
    after = _snapshots(spark, "marts.cdc_matrix")
    assert len(after) == len(before) + 1, "one MERGE, one snapshot per load"

    # A crash after the MERGE's commit and before the watermark's: the next build
    # applies the same batch again, which leaves the same rows.
    fx("cdc_matrix", 1)
    assert {r.id: r.name for r in spark.table("marts.cdc_matrix").collect()} == rows
    after = _snapshots(spark, "marts.cdc_matrix")

    fx("cdc_matrix", 2)  # no rows in batch 2
    assert _snapshots(spark, "marts.cdc_matrix") == after, "an empty load commits nothing"

    # Without a tie-breaker in order_by, two changes of key 1 at one time fail loudly.
    run = fx("cdc_ties", 1, ok=False)
    assert "tie on every order column" in " ".join(run.failures)


def test_split_merge_bounded_by_the_batch_keys_keeps_every_other_row(spark, fx):
    """Split (MATCHED-only MERGE, then an append of new keys), the target restricted to
    the batch's key range and list: copy-on-write rewrites whole files, so rows outside
    the batch's keys in a rewritten file must survive; deletes, upserts of unknown keys
    and deletes of missing keys behave as in the one MERGE."""
    full = [(None, i, f"n{i}", at(0), "LOAD1", i, 0) for i in range(1, 21)]
    _append(spark, "raw.src_matrix", MATRIX, full)
    fx("cdc_split", 0)
    spec = spark.sql("select partition from marts.cdc_split.files").schema.simpleString()
    assert "id_bucket" in spec, spec
    changes = [
        ("U", 5, "five", at(10), "cdc/1", 0, 1),
        ("D", 6, "x", at(10), "cdc/1", 1, 1),
        ("I", 21, "new", at(10), "cdc/1", 2, 1),
        ("U", 30, "upsert", at(10), "cdc/1", 3, 1),  # update of a key never inserted
        ("D", 99, "x", at(10), "cdc/1", 4, 1),  # delete of a missing key: nothing
        ("I", 7, "gone", at(10), "cdc/1", 5, 1),  # inserted over a held key, then deleted
        ("D", 7, "gone", at(20), "cdc/1", 6, 1),
    ]
    _append(spark, "raw.src_matrix", MATRIX, changes)
    before = _snapshots(spark, "marts.cdc_split")
    fx("cdc_split", 1)
    rows = {r.id: r.name for r in spark.table("marts.cdc_split").collect()}
    expected = {i: f"n{i}" for i in range(1, 21) if i not in (6, 7)}
    assert rows == {**expected, 5: "five", 21: "new", 30: "upsert"}
    assert len(_snapshots(spark, "marts.cdc_split")) == len(before) + 2, "MERGE, then append"
    # The batch was staged as a bucketed scratch table for a storage-partitioned join:
    # dropped afterwards, and the session's join settings are back to Spark's defaults.
    assert not spark.catalog.tableExists("marts.cdc_split__cdc_batch")
    assert spark.conf.get("spark.sql.iceberg.planning.preserve-data-grouping", "unset") == "unset"
    fx("cdc_split", 2)  # an empty batch still commits nothing
    assert len(_snapshots(spark, "marts.cdc_split")) == len(before) + 2


def test_composite_key_merge_on_read(spark, fx):
    schema = (
        "Op string, team string, season int, wins int, last_update_time timestamp, "
        "_source_file string, _row_in_file bigint, _batch int"
    )
    _append(
        spark,
        "raw.src_composite",
        schema,
        [
            (None, "A", 2020, 1, at(0), "L", 0, 0),
            (None, "A", 2021, 2, at(0), "L", 1, 0),
            (None, "B", 2020, 3, at(0), "L", 2, 0),
        ],
    )
    fx("cdc_composite", 0)
    _append(
        spark,
        "raw.src_composite",
        schema,
        [
            ("U", "A", 2020, 10, at(5), "C", 0, 1),
            ("D", "B", 2020, 3, at(5), "C", 1, 1),
            ("I", "B", 2021, 30, at(5), "C", 2, 1),
            ("D", "A", 2022, 0, at(5), "C", 3, 1),
        ],
    )
    since = last_execution_id(spark)
    fx("cdc_composite", 1)
    # merge-on-read: the MERGE pruned the table's rows by a Bloom filter of the batch's
    # keys before the join (docs/decisions/0020-runtime-filtered-merges.md)
    merges = [p for p in executed_plans(spark, since).values() if "MergeRows" in p]
    assert len(merges) == 1 and "might_contain" in merges[0], merges
    rows = {(r.team, r.season): r.wins for r in spark.table("marts.cdc_composite").collect()}
    assert rows == {("A", 2020): 10, ("A", 2021): 2, ("B", 2021): 30}
    props = dict(spark.sql("show tblproperties marts.cdc_composite").collect())
    assert props["write.merge.mode"] == "merge-on-read"
    assert props["format-version"] == "2"
    # merge-on-read: the update and the delete were written as delete files
    deletes = spark.sql("select count(*) from marts.cdc_composite.delete_files").first()[0]
    assert deletes >= 1


def test_debezium_preset(spark, fx):
    schema = (
        "__op string, movie_id int, title string, __deleted string, __source_ts_ms bigint, "
        "_source_file string, _row_in_file bigint, _batch int"
    )
    _append(
        spark,
        "raw.src_movies",
        schema,
        [
            ("r", 1, "Heat", "false", 100, "s", 0, 0),  # snapshot read
            ("c", 2, "Alien", "false", 100, "s", 1, 0),
            ("c", 3, "Up", "false", 100, "s", 2, 0),
            ("c", 4, "Jaws", "false", 100, "s", 3, 0),
        ],
    )
    fx("cdc_movies", 0)
    _append(
        spark,
        "raw.src_movies",
        schema,
        [
            ("u", 1, "Heat (1995)", "false", 200, "t", 0, 1),
            ("d", 2, "Alien", "true", 200, "t", 1, 1),
            ("u", 3, "Up", "true", 200, "t", 2, 1),  # rewrite-mode delete: __deleted wins
            ("u", 4, "Jaws", "false", 300, "t", 3, 1),
            ("u", 4, "Jaws 2", "false", 250, "t", 4, 1),  # older change, later row: loses
            ("c", 5, "Big", "false", 200, "t", 5, 1),
        ],
    )
    fx("cdc_movies", 1)
    table = spark.table("marts.cdc_movies")
    assert table.columns == ["movie_id", "title"]
    assert {r.movie_id: r.title for r in table.collect()} == {1: "Heat (1995)", 4: "Jaws", 5: "Big"}

    _append(spark, "raw.src_movies", schema, [("x", 1, "?", "false", 400, "v", 0, 2)])
    run = fx("cdc_movies", 2, ok=False)
    assert "unknown op x" in " ".join(run.failures)


def _replace(spark, table: str, schema: str, rows: list[tuple]) -> None:
    spark.createDataFrame(rows, schema).writeTo(table).using("iceberg").createOrReplace()


def test_schema_evolution_and_type_rules(spark, fx):
    meta = "last_update_time timestamp, _source_file string, _row_in_file bigint"
    _replace(
        spark,
        "raw.src_evolve",
        f"Op string, id int, name string, score float, {meta}",
        [(None, 1, "one", 1.5, at(0), "L", 0), (None, 2, "two", 2.5, at(0), "L", 1)],
    )
    fx("cdc_evolve")
    # the source drops `name`, adds `city`, widens id int->bigint and score float->double
    _replace(
        spark,
        "raw.src_evolve",
        f"Op string, id bigint, score double, city string, {meta}",
        [("U", 1, 9.25, "Oslo", at(5), "C", 0), ("I", 3, 3.0, "Rome", at(5), "C", 1)],
    )
    fx("cdc_evolve")
    table = spark.table("marts.cdc_evolve")
    types = dict(table.dtypes)
    assert types["id"] == "bigint" and types["score"] == "double"
    assert set(table.columns) == {"id", "name", "score", "city", "last_update_time"}
    rows = {r.id: (r.name, r.score, r.city) for r in table.collect()}
    assert rows == {1: (None, 9.25, "Oslo"), 2: ("two", 2.5, None), 3: (None, 3.0, "Rome")}

    # a narrowing/family change is refused, naming table, column and both types
    _replace(
        spark,
        "raw.src_evolve",
        f"Op string, id bigint, score string, {meta}",
        [("U", 1, "high", at(9), "D", 0)],
    )
    run = fx("cdc_evolve", ok=False)
    message = " ".join(run.failures)
    assert "marts.cdc_evolve" in message and "score" in message
    assert "from double to string" in message


def test_insert_overwrite_without_partition_by_is_refused(fx):
    run = fx("overwrite_unpartitioned", ok=False)
    message = " ".join(run.failures) or str(run)
    assert "insert_overwrite" in message and "partition_by" in message


def test_first_build_on_an_empty_batch_creates_the_table(spark, fx):
    """A replica whose first build sees no changes still exists (empty, with the
    model's columns), so its tests and readers find it; the next batch merges."""
    _append(spark, "raw.src_matrix", MATRIX, [("I", 1, "a", at(0), "LOAD1", 0, 1)])
    fx("cdc_matrix", 0)  # batch 0 has no rows
    assert spark.table("marts.cdc_matrix").columns == ["id", "name", "last_update_time"]
    assert spark.table("marts.cdc_matrix").count() == 0
    fx("cdc_matrix", 1)
    assert {r.id: r.name for r in spark.table("marts.cdc_matrix").collect()} == {1: "a"}


@pytest.mark.parametrize(
    ("rows", "latest"),
    [
        # one change with NULL order columns: nothing follows it, no tie
        ([("U", 1, "a", None, None, None)], {1: "a"}),
        # older changes tie with each other, the latest does not: it wins
        (
            [
                ("U", 1, "old1", at(1), "f", 0),
                ("U", 1, "old2", at(1), "f", 0),
                ("U", 1, "new", at(2), "f", 0),
            ],
            {1: "new"},
        ),
        # NULLs last: a change with a time beats one without, with no tie
        ([("U", 1, "timed", at(1), "f", 0), ("U", 1, "untimed", None, "f", 0)], {1: "timed"}),
        # the latest two tie on every column, NULL included (NULL equals NULL, as in
        # the key's partition): refused
        ([("U", 1, "x", at(1), None, 0), ("U", 1, "y", at(1), None, 0)], None),
        ([("U", 1, "x", at(1), "f", 0), ("U", 1, "y", at(1), "f", 0)], None),
    ],
)
def test_latest_change_and_ties_on_spark(spark, rows, latest):
    """floe_cdc_latest_changes as Spark runs it: the tie check in the rank's window order."""
    from py4j.protocol import Py4JJavaError

    from tests.unit.macros.jinja_harness import Column, Renderer

    render = Renderer()
    render.configure(unique_key="id", meta={"cdc": {}})
    cfg = render.call("floe_cdc_config")
    payload = [Column("id", "int"), Column("name")]
    spark.createDataFrame(
        rows,
        "Op string, id int, name string, last_update_time timestamp, "
        "_source_file string, _row_in_file bigint",
    ).createOrReplaceTempView("floe_test_batch")
    changes = spark.sql(render.sql("floe_cdc_latest_changes", "floe_test_batch", payload, cfg))
    if latest is None:
        with pytest.raises(Py4JJavaError, match="tie on every order column"):
            changes.collect()
    else:
        assert {r.id: r.name for r in changes.collect()} == latest

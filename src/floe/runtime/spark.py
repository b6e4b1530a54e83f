"""The one place that says how floe's Spark is configured (``docs/runtime.md``).

Used by the dbt profile (through the floe adapter), the CLI and the tests. Every knob
comes from a :class:`~floe.runtime.settings.Settings`; nothing here reads the
environment (it only writes the variables child processes need).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from floe.runtime.jars import resolve_jars
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

log = logging.getLogger(__name__)

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
SCHEMAS = ("raw", "staging", "intermediate", "marts", "snapshots", "dq", "audit")

# dbt opens a connection per thread, and a new thread has no active session: they
# all reach get_spark at once. One creates the session and its schemas; the others
# get the same session (creating a namespace twice at once fails in the catalog).
_START = threading.Lock()
_READY: weakref.WeakSet[SparkSession] = weakref.WeakSet()
_SESSION: SparkSession | None = None


def spark_conf(settings: Settings | None = None) -> dict[str, str]:
    """Spark configuration of floe's session on `settings`.

    Embedded (``local[*]``) by default; with a cluster master (``spark://``, ``yarn``,
    ``k8s://``) this process is the driver in client mode and the same catalog and
    jars are used, plus executor memory and, when set, the event log
    (``docs/cluster.md``).
    """
    s = settings or Settings.from_env()
    jar_names = ("iceberg", "sqlite") if s.is_sqlite else ("iceberg", "postgresql")
    jars = resolve_jars(jar_names, s)
    cat = f"spark.sql.catalog.{s.catalog_name}"
    conf = {
        "spark.master": s.spark_master_url,
        "spark.app.name": "floe",
        "spark.driver.memory": s.driver_memory,
        # Loopback by default; a driver on a real cluster's node sets FLOE_DRIVER_HOST.
        "spark.driver.host": s.driver_host,
        "spark.driver.bindAddress": s.driver_host,
        "spark.ui.enabled": str(s.spark_ui).lower(),
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        # Small local machine: few shuffle partitions, AQE to coalesce further.
        "spark.sql.shuffle.partitions": str(s.shuffle_partitions),
        "spark.default.parallelism": "4",
        "spark.sql.adaptive.enabled": "true",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        "spark.sql.sources.partitionOverwriteMode": "dynamic",
        # No Hive metastore (no Derby, no metastore_db/): Iceberg's catalog is the catalog.
        "spark.sql.catalogImplementation": "in-memory",
        "spark.sql.warehouse.dir": str(s.home / "spark-warehouse"),
        "spark.driver.extraJavaOptions": (
            f"-Dderby.system.home={s.home} -Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()}"
        ),
        "spark.sql.extensions": (
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions"
        ),
        cat: "org.apache.iceberg.spark.SparkCatalog",
        f"{cat}.type": "jdbc",
        f"{cat}.uri": s.catalog_uri,
        f"{cat}.warehouse": s.warehouse,
        f"{cat}.jdbc.schema-version": "V1",
        # pyiceberg and other processes write the same catalog: never serve stale metadata.
        f"{cat}.cache-enabled": "false",
        "spark.sql.defaultCatalog": s.catalog_name,
    }
    if s.is_sqlite:
        # One JDBC connection per process: dbt's threads then queue for the catalog
        # instead of meeting SQLite's single writer as SQLITE_BUSY(_SNAPSHOT), which
        # Iceberg's view commits do not retry (measured: concurrent view replaces
        # failed with threads 4 and the default two clients, passed with one).
        conf[f"{cat}.clients"] = "1"
    if s.catalog_user:
        conf[f"{cat}.jdbc.user"] = s.catalog_user
    if s.catalog_password:
        conf[f"{cat}.jdbc.password"] = s.catalog_password
    if jars.paths:
        conf["spark.jars"] = ",".join(jars.paths)
        # JDBC drivers must be on the driver's system class path (DriverManager).
        conf["spark.driver.extraClassPath"] = os.pathsep.join(jars.paths)
    if jars.maven:
        conf["spark.jars.packages"] = ",".join(jars.maven)
    if not s.is_local_master:
        # Executors fetch spark.jars from the driver (Iceberg writes data files there);
        # the catalog (JDBC) is only ever opened by the driver.
        conf["spark.executor.memory"] = s.executor_memory
    if s.event_log_dir:
        conf["spark.eventLog.enabled"] = "true"
        conf["spark.eventLog.dir"] = s.event_log_dir
    return conf


def get_spark(settings: Settings | None = None) -> SparkSession:
    """The process's SparkSession on floe's catalog, created on first use.

    Creates the fixed schemas (Iceberg namespaces) so two-part names resolve.
    """
    from pyspark.sql import SparkSession

    global _SESSION
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    # A dbt thread has no active session of its own: hand it the process's session
    # without the builder, which re-reads the settings, resolves the jars and re-applies
    # every option over py4j under _START (0.1 s per dbt node, measured, and serialized).
    known = _SESSION
    if settings is None and known is not None and known.sparkContext._jsc is not None:
        return known
    s = settings or Settings.from_env()
    with _START:
        s.ensure_dirs()
        os.environ.setdefault("PYSPARK_PYTHON", _python())
        os.environ.setdefault("SPARK_LOCAL_IP", s.driver_host)
        builder = SparkSession.builder
        for key, value in spark_conf(s).items():
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
        if spark not in _READY:
            spark.sparkContext.setLogLevel(s.spark_log_level)
            ensure_schemas(spark)
            register_functions(spark, s)
            _READY.add(spark)
        _SESSION = spark
    return spark


def ensure_schemas(spark: SparkSession) -> None:
    existing = {row[0] for row in spark.sql("show namespaces").collect()}
    for schema in (*SCHEMAS, "default"):
        if schema not in existing:
            try:
                spark.sql(f"create namespace if not exists {schema}")
            except Exception:
                # Another process created it meanwhile (see create_table_if_missing).
                if not spark.catalog.databaseExists(schema):
                    raise


# Iceberg 1.10's JDBC catalog reports PostgreSQL's unique violation on its own tables
# as a failure, not as "already exists" (apache/iceberg#13924, fixed after 1.10), so two
# builders running `create table if not exists` for one table at once (dbt threads,
# or two processes) fail on PostgreSQL where SQLite only loses the race quietly.
_DDL = threading.Lock()


def create_table_if_missing(spark: SparkSession, table: str, ddl: str) -> None:
    """Run ``ddl`` (a ``create table if not exists table ...``), safe against a racing creator.

    Serialized within this process; a failure is only raised if ``table`` still does not
    exist afterwards (another process may have created it first).
    """
    with _DDL:
        try:
            spark.sql(ddl)
        except Exception:
            if not spark.catalog.tableExists(table):
                raise


# Iceberg's refusal of a copy-on-write DELETE/UPDATE/MERGE whose table another writer
# committed to while Spark planned the statement (docs/runtime.md, "Concurrent writers").
CONCURRENT_SCAN = "the table has been concurrently modified"
CONCURRENT_ATTEMPTS = 5

T = TypeVar("T")


def retry_concurrent_scan(
    run: Callable[[], T], what: str, attempts: int = CONCURRENT_ATTEMPTS, wait: float = 0.2
) -> T:
    """``run()``, run again when Iceberg refused its scan as concurrently modified.

    With catalog caching off, Spark refreshes the table between planning the statement's
    scan and its runtime file filter; a commit by another thread in between makes Iceberg
    refuse the statement before it writes anything, so running it again is safe and reads
    the newer snapshot. Any other error, and the last refusal, are raised.
    """
    for attempt in range(1, attempts):
        try:
            return run()
        except Exception as exc:
            if CONCURRENT_SCAN not in str(exc):
                raise
            log.info("%s: table changed while planned (attempt %d), running again", what, attempt)
            time.sleep(wait * attempt)
    return run()  # the last attempt: whatever it raises is raised


def sql_retrying(spark: SparkSession, text: str, args: dict | None = None) -> DataFrame:
    """``spark.sql(text, args)`` for a row-level statement, with :func:`retry_concurrent_scan`."""
    return retry_concurrent_scan(lambda: spark.sql(text, args=args), what=text.split("\n")[0][:80])


# Spark SQL settings that one statement asks for with a `/* floe:<name> */` comment
# (docs/runtime.md, "Statement settings"). The session's settings are shared by every
# dbt thread, so they are set for the statement's run only and counted: the first of
# overlapping statements sets a value, the last one puts the previous value back.
STATEMENT_SETTINGS: dict[str, dict[str, str]] = {
    # A MERGE of a batch into a larger table: Spark's runtime filter (a Bloom filter of
    # the batch's keys, built by a subquery over the batch) drops the table's rows
    # whose key is not in the batch before they are shuffled for the join. Spark adds
    # it only to a join it expects to shuffle (no side under the broadcast threshold:
    # a MERGE's batch is the preserved side of an outer join, which is never
    # broadcast anyway), over a table scan of at least the application threshold
    # (10 GB by default, sized for clusters; below 32 MB the shuffle costs less than
    # the filter's subquery), from a batch below the creation threshold, here
    # unbounded: a frozen or staged batch has no size estimate Spark trusts, and the
    # filter's bits are capped anyway (docs/decisions/0020-runtime-filtered-merges.md).
    "runtime_filter": {
        "spark.sql.optimizer.runtime.bloomFilter.enabled": "true",
        "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold": "32MB",
        "spark.sql.optimizer.runtime.bloomFilter.creationSideThreshold": "1PB",
        "spark.sql.autoBroadcastJoinThreshold": "-1",
    },
    # A plan whose shuffles its windows fix (the scd2 versions): adaptive execution
    # can change nothing in it but submits each shuffle stage as a job of its own and
    # plans again after it (0.85 -> 0.64 s for the bench's versions; docs/scd2.md).
    "static_plan": {"spark.sql.adaptive.enabled": "false"},
    # A join of two Iceberg tables partitioned alike (bucket(N, key)) reads bucket
    # against bucket with no shuffle. Scoped to the statements that join a bucketed
    # CDC batch with its table: `preserve-data-grouping` groups an Iceberg scan's
    # files by partition, which costs parallelism elsewhere (docs/cdc.md).
    "storage_partitioned_join": {
        "spark.sql.sources.v2.bucketing.enabled": "true",
        "spark.sql.sources.v2.bucketing.pushPartValues.enabled": "true",
        "spark.sql.sources.v2.bucketing.partiallyClusteredDistribution.enabled": "true",
        "spark.sql.requireAllClusterKeysForCoPartition": "false",
        "spark.sql.iceberg.planning.preserve-data-grouping": "true",
    },
}
_STATEMENT_MARK = re.compile(r"/\*\s*floe:\s*([a-z_]+)\s*\*/")
# key -> [value set, holders, value before]
_HELD: dict[str, list] = {}
_HELD_LOCK = threading.Lock()


def statement_marks(sql: str) -> list[str]:
    """The statement settings `sql` asks for (its `/* floe:<name> */` comments).

    ValueError names an unknown one: a typo would otherwise cost only speed, silently.
    """
    names = _STATEMENT_MARK.findall(sql)
    unknown = [n for n in names if n not in STATEMENT_SETTINGS]
    if unknown:
        raise ValueError(
            f"unknown floe statement setting(s) {', '.join(unknown)}; "
            f"known: {', '.join(sorted(STATEMENT_SETTINGS))}"
        )
    return names


@contextlib.contextmanager
def statement_settings(spark: SparkSession, names: Sequence[str]) -> Iterator[None]:
    """Spark settings `STATEMENT_SETTINGS[name]` for the duration of the block.

    Other threads' statements planned meanwhile see them too; the settings here only
    steer plans (never results), so the cost of that is at most a slower plan. A key
    another holder set to a different value is left as it is.
    """
    wanted: dict[str, str] = {}
    for name in names:
        wanted.update(STATEMENT_SETTINGS[name])
    taken: list[str] = []
    with _HELD_LOCK:
        for key, value in wanted.items():
            held = _HELD.get(key)
            if held is None:
                _HELD[key] = [value, 1, spark.conf.get(key, None)]
                spark.conf.set(key, value)
                taken.append(key)
            elif held[0] == value:
                held[1] += 1
                taken.append(key)
    try:
        yield
    finally:
        with _HELD_LOCK:
            for key in taken:
                held = _HELD[key]
                held[1] -= 1
                if held[1] == 0:
                    del _HELD[key]
                    if held[2] is None:
                        spark.conf.unset(key)
                    else:
                        spark.conf.set(key, held[2])


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
        frame = spark.table(_view_name(view)).localCheckpoint(eager=True)
    release_view(spark, name)
    with _FROZEN_LOCK:
        _FROZEN[name] = frame
    frame.createOrReplaceTempView(name)


def release_view(spark: SparkSession, name: str) -> None:
    """Drop temporary view ``name`` frozen by :func:`freeze_view` and free its rows."""
    with _FROZEN_LOCK:
        frame = _FROZEN.pop(_view_name(name), None)
    spark.catalog.dropTempView(name)
    if frame is not None:
        # The checkpointed rows are the RDD under the frame's LogicalRDD.
        frame._jdf.queryExecution().analyzed().rdd().unpersist(False)  # type: ignore[attr-defined]


def _python() -> str:
    import sys

    return sys.executable


def use_settings(spark: SparkSession, settings: Settings) -> None:
    """Point this running session (and this process's FLOE_* variables) at another lakehouse.

    Tests use it to give each scenario a fresh catalog without a new JVM: the
    catalog's options are runtime settings, and Spark's catalog manager is reset
    so the next statement loads the catalog with them. The variables are written so
    that code building its own ``Settings.from_env()`` later (dbt Python models, child
    processes) sees the same lakehouse.
    """
    settings.ensure_dirs()
    os.environ["FLOE_HOME"] = str(settings.home)
    os.environ["FLOE_LANDING"] = str(settings.landing)
    os.environ["FLOE_WAREHOUSE"] = settings.warehouse
    os.environ["FLOE_CATALOG_URI"] = settings.catalog_uri
    cat = f"spark.sql.catalog.{settings.catalog_name}"
    spark.conf.set(f"{cat}.uri", settings.catalog_uri)
    spark.conf.set(f"{cat}.warehouse", settings.warehouse)
    spark.catalog.clearCache()
    spark._jsparkSession.sessionState().catalogManager().reset()
    ensure_schemas(spark)
    register_functions(spark, settings)


def register_functions(spark: SparkSession, settings: Settings) -> None:
    """floe's SQL functions (the masking functions of docs/privacy.md) in ``spark``."""
    from floe.privacy.functions import register_functions as register_privacy

    register_privacy(spark, settings)

"""floe's SparkSession: its configuration, start, schemas and session hooks (``docs/runtime.md``).

Used by the dbt profile (through the floe adapter), the CLI and the tests. Every knob
comes from a :class:`~floe.runtime.settings.Settings` that the caller (an edge: CLI
command, adapter connection, test fixture) built; nothing here reads the environment
(it only writes the variables the Spark child processes need).

Rooms above the runtime add their own SQL functions to every session through
:func:`add_session_hook` (the edges register them: the runtime knows no room above it).
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import threading
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.runtime.jars import PerJvm, decode_jar, resolve_jars
from floe.runtime.launcher import launch_overlay
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

log = logging.getLogger(__name__)

LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
SCHEMAS = ("raw", "staging", "intermediate", "marts", "snapshots", "dq", "audit")

# dbt opens a connection per thread, and a new thread has no active session: they
# all reach get_spark at once. One creates the session and its schemas; the others
# get the same session (creating a namespace twice at once fails in the catalog).
_START = threading.Lock()
_READY: weakref.WeakSet[SparkSession] = weakref.WeakSet()
_SESSION: SparkSession | None = None
# The settings the process's session was started with or last re-pointed to.
_SESSION_SETTINGS: Settings | None = None

# A session being started ahead of its first use (prestart), and how that went.
_PRESTART: threading.Thread | None = None
_PRESTARTED: list[SparkSession] = []
_PRESTART_ERROR: list[BaseException] = []

SessionHook = Callable[["SparkSession", Settings], None]
# Run on every session floe starts or re-points (use_settings), in registration order.
_HOOKS: list[SessionHook] = []


class NoSessionError(RuntimeError):
    """floe's SparkSession was asked for before an entry point started it."""


def add_session_hook(hook: SessionHook) -> None:
    """Run ``hook(spark, settings)`` on every session floe starts or re-points.

    Registered by the edges (the adapter, the CLI, test fixtures) for the rooms above
    the runtime, e.g. the privacy SQL functions. Adding a hook twice adds it once; a
    session already running gets it now.
    """
    if hook in _HOOKS:
        return
    _HOOKS.append(hook)
    with _START:
        if _SESSION is not None and _SESSION_SETTINGS is not None and _SESSION in _READY:
            hook(_SESSION, _SESSION_SETTINGS)


def session_settings() -> Settings | None:
    """The settings of this process's running floe session (None before one started)."""
    return _SESSION_SETTINGS


# The driver's JVM options for a class-data-sharing archive (floe.runtime.cds writes
# it): silent whether the archive maps or not (another class path, a corrupt file).
_CDS = "-XX:SharedArchiveFile={path} -Xshare:auto -Xlog:cds=off -Xlog:cds+dynamic=off"


# HotSpot's tier-4 (C2) thresholds, raised tenfold (docs/decisions/0060-late-c2-jit.md).
JIT_OPTIONS = {
    "late-c2": (
        "-XX:Tier4InvocationThreshold=50000 -XX:Tier4MinInvocationThreshold=6000 "
        "-XX:Tier4CompileThreshold=150000 -XX:Tier4BackEdgeThreshold=400000"
    ),
    "hotspot": "",
}

# The driver JVM's collector (docs/decisions/0070-parallel-collector.md).
GC_OPTIONS = {"parallel": "-XX:+UseParallelGC", "g1": "-XX:+UseG1GC"}


def java_options(archive: Path | None) -> str:
    """The driver's JVM options for ``archive`` ("" if there is none to use)."""
    if archive is None or not archive.is_file():
        return ""
    return _CDS.format(path=archive)


def spark_conf(settings: Settings) -> dict[str, str]:
    """Spark configuration of floe's session on `settings`.

    Embedded (``local[*]``) by default; with a cluster master (``spark://``, ``yarn``,
    ``k8s://``) this process is the driver in client mode and the same catalog and
    jars are used, plus executor memory and, when set, the event log
    (``docs/cluster.md``).
    """
    s = settings
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
            f"-Dderby.system.home={s.home} -Dlog4j2.configurationFile={LOG4J_CONFIG.as_uri()} "
            + java_options(s.spark_cds)
            + " "
            + JIT_OPTIONS[s.jvm_jit]
            + " "
            + GC_OPTIONS[s.jvm_gc]
        ).strip(),
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
        # JDBC drivers must be on the driver's system class path (DriverManager).
        conf["spark.driver.extraClassPath"] = os.pathsep.join(jars.paths)
    # floe's decoder jar only through spark.jars: the driver's class path (and with it
    # the class-data-sharing archive built at setup) stays what it was.
    shipped = [*jars.paths, *([decoder] if (decoder := decode_jar()) else [])]
    if shipped:
        conf["spark.jars"] = ",".join(shipped)
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

    Creates the fixed schemas (Iceberg namespaces) so two-part names resolve and runs
    the session hooks. Without ``settings`` it returns the running session;
    :class:`NoSessionError` if none was started (an entry point starts it with its
    settings).
    """
    # Function-local: pyspark is heavy, and `floe --help` / `floe registry` never need it.
    from pyspark.sql import SparkSession

    global _SESSION, _SESSION_SETTINGS
    # The process's session, once started, is handed out without asking the JVM: the
    # thread's active session costs eight py4j round trips and a new Python wrapper
    # (2.3 ms), and the dbt adapter asks once per statement; the builder re-reads the
    # settings, resolves the jars and re-applies every option under _START (0.1 s).
    known = _SESSION
    if settings is None and known is not None and known.sparkContext._jsc is not None:
        return known
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if settings is None:
        raise NoSessionError(
            "floe's SparkSession is not started: the entry point (CLI command, dbt adapter "
            "connection, test fixture) starts it with get_spark(settings) (docs/runtime.md)"
        )
    s = settings
    with _START:
        spark = _take_prestarted()
        if spark is None:
            _child_environment(s)
            spark = session_builder(s).getOrCreate()
        if spark not in _READY:
            memoize_function_lookups()
            spark.sparkContext.setLogLevel(s.spark_log_level)
            ensure_schemas(spark)
            _run_hooks(spark, s)
            _READY.add(spark)
        _SESSION = spark
        _SESSION_SETTINGS = s
    return spark


def memoize_function_lookups() -> None:
    """Make PySpark find each of Spark's SQL functions over py4j once per process.

    Every ``pyspark.sql.functions`` call looks its JVM method up by name before calling
    it: two round trips to the JVM (the ``functions`` class, then the method) for the one
    that does the work. A check run builds a few hundred columns, so the lookups were
    60 ms of its 150 ms of column building, on every run whatever the table's size
    (docs/decisions/0073-fewer-py4j-round-trips-per-check-run.md). The method handle
    (a py4j ``JavaMember`` of a static method: a name and a gateway, no state) is kept
    per gateway view and name; a new gateway (another JVM) looks up again. Idempotent."""
    from pyspark.sql import functions

    looked_up = getattr(functions, "_get_jvm_function", None)
    if looked_up is None or getattr(looked_up, "_floe_memo", False):
        return  # another PySpark's layout: its own lookups stay
    members = PerJvm()

    def lookup(name: str, sc: Any) -> Any:
        return members.get(sc._jvm, name, lambda: looked_up(name, sc))

    lookup._floe_memo = True  # type: ignore[attr-defined]
    functions._get_jvm_function = lookup


def prestart(settings: Settings) -> bool:
    """Start the JVM and the SparkSession of ``settings`` in a background thread.

    A cold ``dbt`` command calls it from the adapter plug-in, so the JVM starts while
    dbt imports its adapter, parses the project and plans the run (ADR 0043, "Cold
    start"); the first :func:`get_spark` waits for it and then does the rest as always
    (schemas, hooks). The thread touches no catalog (Spark loads a catalog on its first
    statement), so it needs no writer lock. Returns False, doing nothing, when a
    session is already running or being started. A failed prestart is forgotten:
    ``get_spark`` then starts the session itself and reports the error as always.
    """
    global _PRESTART
    with _START:
        if _PRESTART is not None or (_SESSION is not None and _SESSION in _READY):
            return False
        _child_environment(settings)
        thread = threading.Thread(
            target=_prestart_run, args=(settings,), name="floe-spark-prestart", daemon=True
        )
        _PRESTART = thread
        thread.start()
    return True


def _prestart_run(settings: Settings) -> None:
    # The Python side of the first connection's work (pandas and Arrow for the session
    # hooks' SQL functions) is imported meanwhile on a thread of its own. The catalog is
    # not touched: a read here would hold a SQLite snapshot that a later write of this
    # process loses to another writer (SQLITE_BUSY_SNAPSHOT), before the writer lock.
    threading.Thread(target=_warm_imports, name="floe-warm-imports", daemon=True).start()
    try:
        # The driver's command line as Spark's launcher printed it last time, if the
        # same (floe.runtime.launcher): one JVM fewer on the critical path.
        with launch_overlay(settings.spark_launch_cache):
            _PRESTARTED.append(session_builder(settings).getOrCreate())
    except BaseException as exc:  # kept for get_spark, which starts anew
        _PRESTART_ERROR.append(exc)


def _warm_imports() -> None:
    try:
        import pyspark.sql.pandas.functions  # noqa: F401  (pandas, pyarrow)
    except Exception as exc:  # the hook that needs them reports it
        log.debug("prestart: warm imports failed: %r", exc)


def _take_prestarted() -> SparkSession | None:
    """The prestarted session, once its thread is done (None: none, or it failed)."""
    if _PRESTART is None:
        return None
    _PRESTART.join()
    if _PRESTART_ERROR:
        log.debug("prestarting Spark failed, starting it again: %r", _PRESTART_ERROR[0])
        _PRESTART_ERROR.clear()
        return None
    if not _PRESTARTED:
        return None
    spark = _PRESTARTED.pop()
    if spark.sparkContext._jsc is None:  # stopped meanwhile
        return None
    # As if started here: the session is this thread's active one, and Ctrl-C in the
    # main thread cancels Spark's jobs (pyspark installs that only from the main thread).
    jvm = spark._jvm
    assert jvm is not None  # a running session has its gateway
    jvm.SparkSession.setActiveSession(spark._jsparkSession)
    if threading.current_thread() is threading.main_thread():
        context = spark.sparkContext

        def cancel_jobs(signum: int, frame: object) -> None:
            context.cancelAllJobs()
            raise KeyboardInterrupt()

        signal.signal(signal.SIGINT, cancel_jobs)
    return spark


def _child_environment(settings: Settings) -> None:
    settings.ensure_dirs()
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", settings.driver_host)


def session_builder(settings: Settings, java_options: str = "") -> SparkSession.Builder:
    """A builder with floe's conf (:func:`spark_conf`); ``java_options`` are added to the
    driver's (the class-data-sharing writer's dump option, a test's class-load log)."""
    from pyspark.sql import SparkSession

    builder = SparkSession.builder
    for key, value in spark_conf(settings).items():
        if key == "spark.driver.extraJavaOptions" and java_options:
            value = f"{value} {java_options}"
        builder = builder.config(key, value)
    return builder


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


def use_settings(spark: SparkSession, settings: Settings) -> None:
    """Point this running session at another lakehouse.

    Tests use it to give each scenario a fresh catalog without a new JVM: the
    catalog's options are runtime settings, and Spark's catalog manager is reset
    so the next statement loads the catalog with them. The settings become the
    session's (:func:`session_settings`): the dbt adapter opens its connections with
    them. Nothing is written to the process environment: a child process gets its
    variables from its caller (``Settings.env()``-style dicts), never from here.
    """
    global _SESSION_SETTINGS
    settings.ensure_dirs()
    cat = f"spark.sql.catalog.{settings.catalog_name}"
    spark.conf.set(f"{cat}.uri", settings.catalog_uri)
    spark.conf.set(f"{cat}.warehouse", settings.warehouse)
    spark.catalog.clearCache()
    spark._jsparkSession.sessionState().catalogManager().reset()
    ensure_schemas(spark)
    _run_hooks(spark, settings)
    _SESSION_SETTINGS = settings


def _run_hooks(spark: SparkSession, settings: Settings) -> None:
    for hook in list(_HOOKS):
        hook(spark, settings)

"""floe's dbt adapter plug-in: dbt-spark plus in-process Python models.

dbt-spark runs Python models only on Databricks. This adapter (type `floe`)
inherits everything from dbt-spark (`dependencies=["spark"]`) and adds:

- a `session` Python submission method that executes the compiled model in the
  dbt process's own SparkSession (the one floe's runtime configured);
- connection opening that creates that SparkSession from `floe.runtime`, so the
  profile holds no Spark configuration of its own, and binds query parameters
  (seed rows) as SQL literals: NULL for a missing value, quotes and backslashes
  escaped (dbt-spark's session method writes 'None' and pastes strings as is);
- relation listing with two cheap queries per schema (`show tables`, `show
  views`) instead of dbt-spark's fallback of one DESCRIBE per relation, which
  Iceberg v2 tables force (SHOW TABLE EXTENDED is unsupported there); a schema
  that does not exist lists nothing, as in dbt-spark, although Iceberg's
  catalogs raise their own NoSuchNamespaceException for it;
- `floe_relations_in_schema` for macros (drop schema drops the relations
  first: Iceberg's catalogs refuse to drop a non-empty namespace even with
  CASCADE);
- `get_catalog` (dbt docs generate) in one pass over the Iceberg catalog's
  database and metadata files instead of one DESCRIBE per relation, with
  table statistics and the feed sources' columns (floe.docsite.catalog);
  dbt-spark's path when the catalog cannot be read that way;
- the warehouse's writer lock (floe.runtime.locking) for the commands that write
  (WRITER_COMMANDS), taken when the first connection opens and released when dbt
  cleans its connections up at the end of the invocation; readers never take it;
- environments (floe.envs, docs/envs.md): with FLOE_ENV=<name> the run reads and
  writes the Iceberg branches env_<name> (spark.wap.branch), unset again at cleanup.
- dbt's contract where dbt-spark bends it: SQL errors are DbtDatabaseError (dbt-spark
  raises DbtRuntimeError), relations match their names case-insensitively unless
  quoted (Iceberg keeps a model file's capitals: `MODEL`), and `Column.is_string`,
  `is_integer`, `is_numeric`, `is_float` know Spark's type names (`string`, `int`,
  `decimal(10,2)`, `double`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import decimal
import functools
import math
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, fields
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.capability import Capability, CapabilityDict, CapabilitySupport, Support
from dbt.adapters.contracts.connection import Connection
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark import SparkAdapter, SparkColumn, SparkCredentials, SparkRelation
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionMethod
from dbt.adapters.spark.impl import SCHEMA_NOT_FOUND_MESSAGES
from dbt_common.exceptions import (
    CompilationError,
    DbtConfigError,
    DbtDatabaseError,
    DbtRuntimeError,
)

from floe import privacy
from floe.cluster.guard import ClusterTargetError, require_cluster_session
from floe.docsite.catalog import (
    CatalogUnavailable,
    catalog_table,
    feed_rows,
    iceberg_rows,
    landing_sources,
)
from floe.envs import EnvError, branch_of, require_env, table_for_build
from floe.feeds import FeedError
from floe.feeds.cdc import model_cdc_config
from floe.feeds.raw_models import reconcile_nodes
from floe.feeds.sources import feed_node
from floe.materialize.clone import (
    CloneError,
    drop_clone,
    iceberg_table,
    is_clone,
    live_clones,
    prepare_clone,
    table_name,
)
from floe.materialize.configs import (
    IncrementalConfig,
    ModelConfigError,
    Scd2Config,
    TableProperties,
    check_unique_key,
)
from floe.materialize.graph import upstream_tables
from floe.privacy.run_operations import run_operation
from floe.quality.model_checks import run_checks_for, run_dqdl_for
from floe.runtime import NoSessionError, Settings, add_session_hook, get_spark, session_settings
from floe.runtime.catalog import list_namespace, list_namespaces
from floe.runtime.locking import (
    WriterLockTimeout,
    acquire,
    catalog_busy,
    is_catalog_contention,
    release,
)
from floe.runtime.session import create_table_if_missing
from floe.runtime.settled import RowsOf, TableAt, is_settled, remember
from floe.runtime.statements import retry_concurrent_scan, statement_marks, statement_settings
from floe.runtime.views import freeze_view, pin_view, release_view

ADAPTER_TYPE = "floe"
logger = AdapterLogger("floe")
# Spark's own messages for a missing schema, and Iceberg's (its catalogs raise
# org.apache.iceberg.exceptions.NoSuchNamespaceException through SHOW TABLES).
MISSING_SCHEMA_MESSAGES = (*SCHEMA_NOT_FOUND_MESSAGES, "NAMESPACE_NOT_FOUND")
# dbt commands that write the warehouse (`test` appends to dq.metrics); the others
# (parse, compile, show, ls, docs, debug, run-operation...) read and never wait. The
# privacy run-operations take the lock themselves (floe.privacy.erasure).
WRITER_COMMANDS = frozenset({"build", "run", "seed", "snapshot", "test", "retry", "clone"})
# The writer lock's owner name for dbt invocations of this process (floe.runtime.locking).
DBT_LOCK_OWNER = "dbt"


@dataclass
class FloeCredentials(SparkCredentials):
    # A target that must run every model on a cluster (the `cluster` target): a local
    # session, a SQLite catalog or a cluster granting no executor fails the build
    # (floe.cluster.guard; docs/decisions/0011-cluster-target-dbt-as-spark-driver.md).
    require_cluster: bool = False

    @property
    def type(self) -> str:
        return ADAPTER_TYPE


def sql_literal(value: Any) -> str:
    """A Python value (a seed cell, a query parameter) as a Spark SQL literal."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) or (isinstance(value, decimal.Decimal) and value.is_finite()):
        return str(value)
    if isinstance(value, float) and math.isfinite(value):
        return repr(value)
    if isinstance(value, dt.datetime):
        text = value.isoformat(sep=" ", timespec="microseconds")
    elif isinstance(value, dt.date):
        text = value.isoformat()
    else:
        text = str(value)
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True, eq=False, repr=False)
class FloeRelation(SparkRelation):
    """dbt-spark's relation, matching names case-insensitively where they are unquoted.

    Iceberg's catalogs keep a name's case (a model file `MODEL.sql` makes table
    `MODEL`); dbt looks unquoted names up in lower case and, for a relation it did not
    create in this run, would call `MODEL` an approximate match of `model` and fail
    the second run. Spark resolves unquoted names without regard to case, so does this.
    """

    def _is_exactish_match(self, field: Any, value: str) -> bool:
        if self.quote_policy.get_part(field) is False:
            return str(self.path.get_lowered_part(field)) == value.lower()
        return bool(self.path.get_part(field) == value)

    def _render_iterator(self) -> Iterator[tuple[Any, str | None]]:
        """dbt-spark's rendering, backquoting a part Spark cannot read unquoted.

        A seed file `seed.with.dots.csv` makes table `seed.with.dots`: unquoted it would
        be read as a three-part name. A part that holds a backquote already is left as
        given (dbt-spark users spell ``delta.`/path` `` that way); seeds refuse such names
        (seed_identifier).
        """
        for key, part in super()._render_iterator():
            if part is not None and not _PLAIN_NAME.fullmatch(part) and "`" not in part:
                part = self.quoted(part)
            yield key, part


# A name Spark SQL reads unquoted (its lexer's IDENTIFIER, not all digits).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_]*[A-Za-z_][A-Za-z0-9_]*")


# Spark's type names (DESCRIBE, Iceberg schemas) by dbt's column kinds.
_SPARK_STRING = re.compile(r"^(string|varchar(\(\d+\))?|char(\(\d+\))?)$")
_SPARK_INTEGER = ("tinyint", "smallint", "int", "integer", "bigint", "byte", "short", "long")
_SPARK_FLOAT = ("float", "double", "real")
_MENTIONS_NULL = re.compile(r"\bnull\b", re.IGNORECASE)


@dataclass
class FloeColumn(SparkColumn):
    """dbt-spark's column, with `is_*` that know Spark's type names."""

    def is_string(self) -> bool:
        return bool(_SPARK_STRING.match(self.dtype.lower())) or super().is_string()

    def is_integer(self) -> bool:
        return self.dtype.lower() in _SPARK_INTEGER or super().is_integer()

    def is_float(self) -> bool:
        return self.dtype.lower() in _SPARK_FLOAT or super().is_float()

    def is_numeric(self) -> bool:
        dtype = self.dtype.lower()
        return dtype.startswith(("decimal", "numeric")) or super().is_numeric()

    @classmethod
    def of(cls, column: SparkColumn) -> FloeColumn:
        """The same column as a FloeColumn (dbt-spark builds SparkColumns itself)."""
        if isinstance(column, cls):
            return column
        return cls(**{f.name: getattr(column, f.name) for f in fields(SparkColumn)})


class FloeStatementError(DbtConfigError):
    """A statement floe refuses before Spark sees it (a bad `/* floe:... */` mark)."""


class FloeConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE

    @contextmanager
    def exception_handler(self, sql: str) -> Iterator[None]:
        """dbt-spark's, raising dbt's DbtDatabaseError for what the database refused.

        dbt-spark turns every error into DbtRuntimeError; dbt (and its adapter suite)
        expect a SQL error to be a DbtDatabaseError. floe's own refusals keep their type.
        """
        try:
            with super().exception_handler(sql):
                yield
        except DbtDatabaseError:
            raise
        except DbtRuntimeError as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, DbtRuntimeError) and type(cause) is not DbtRuntimeError:
                raise cause from None
            # the database's own message, not dbt-spark's "Runtime Error" wrapping of it
            message = cause.msg if isinstance(cause, DbtRuntimeError) else exc.msg
            raise DbtDatabaseError(message) from exc

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.credentials.method != SparkConnectionMethod.SESSION:
            return super().open(connection)
        from dbt.adapters.spark.session import SessionConnectionWrapper

        settings = connection_settings()
        # The lock before the session: starting it creates the fixed schemas, already a
        # catalog write, which a second build racing the first lost with SQLite's
        # SQLITE_BUSY_SNAPSHOT (docs/reliability.md, "Concurrent writers").
        _take_writer_lock(settings)
        with _catalog_contention(settings, "starting the Spark session"):
            spark = get_spark(settings)
        if connection.credentials.require_cluster:
            _require_cluster(spark, settings)
        _use_env(spark, settings)
        connection = super().open(connection)
        if isinstance(connection.handle, SessionConnectionWrapper):
            wrapper = _literal_binding_wrapper()(connection.handle.handle)
            wrapper.dbt_connection = connection  # renamed for each node the thread runs
            connection.handle = wrapper
        return connection

    def release(self) -> None:
        try:
            super().release()
        finally:
            untag_spark_jobs()  # the node is done: later jobs of this thread are not its

    def cleanup_all(self) -> None:
        try:
            super().cleanup_all()
        finally:
            _leave_env()
            release(DBT_LOCK_OWNER)


def connection_settings() -> Settings:
    """The settings dbt's connections open floe's session with: the edge of a dbt run.

    In a process that already runs floe's session (``floe build``, tests: dbt in-process),
    that session's settings; in a plain ``dbt`` process, the environment's
    (docs/runtime.md, "Settings"). Either way the privacy SQL functions are registered.
    The environment a run builds into (``FLOE_ENV``, docs/envs.md) and how long it waits
    for the writer lock (``FLOE_LOCK_TIMEOUT``) belong to the dbt invocation, not to the
    session: they are read here, at the invocation's edge, each time.
    """
    add_session_hook(privacy.session_hook)
    invocation = Settings.from_env()
    running = session_settings()
    if running is None:
        return invocation
    return dataclasses.replace(
        running,
        env=invocation.env,
        lock_timeout=invocation.lock_timeout,
        kafka_bootstrap_servers=invocation.kafka_bootstrap_servers,
        kinesis_endpoint=invocation.kinesis_endpoint,
    )


def invoked_command() -> str | None:
    """The dbt command this process is running (``build``, ``show``...), if known."""
    try:
        from dbt.flags import get_flags

        return getattr(get_flags(), "WHICH", None)
    except ImportError:  # the adapter without dbt-core's CLI
        return None


def _take_writer_lock(settings: Settings) -> None:
    """The warehouse's writer lock, when the running dbt command writes (re-entrant)."""
    which = invoked_command()
    if which not in WRITER_COMMANDS:
        return
    try:
        acquire(settings, DBT_LOCK_OWNER, command=f"dbt {which}")
    except WriterLockTimeout as exc:
        raise DbtRuntimeError(str(exc)) from exc


@contextlib.contextmanager
def _catalog_contention(settings: Settings | None, doing: str) -> Iterator[None]:
    """Catalog contention (a write lost to another process) as a clear dbt error that
    names the other writer, instead of the JDBC driver's trace."""
    try:
        yield
    except Exception as exc:
        if not is_catalog_contention(exc):
            raise
        raise DbtRuntimeError(
            str(catalog_busy(settings or connection_settings(), exc, doing))
        ) from exc


# -- environments (floe.envs, docs/envs.md): FLOE_ENV=<name> builds into branch env_<name>
WAP_BRANCH = "spark.wap.branch"


def _use_env(spark: Any, settings: Settings) -> None:
    """Point this session's reads and writes at FLOE_ENV's branch, or at main."""
    name = settings.env
    if name is None:
        spark.conf.unset(WAP_BRANCH)
        return
    try:
        require_env(settings, name)
    except EnvError as exc:
        raise DbtRuntimeError(f"FLOE_ENV={name}: {exc}") from exc
    spark.conf.set(WAP_BRANCH, branch_of(name))


def _leave_env() -> None:
    """Back to main for whatever runs next in this process's session."""
    settings = session_settings()
    if settings is not None:
        get_spark(settings).conf.unset(WAP_BRANCH)


def tag_spark_jobs(spark: Any, connection: Connection | None) -> None:
    """This thread's Spark jobs carry the dbt node they run for (docs/runtime.md,
    "Spark jobs by dbt node"): its unique id as their job group and description, so
    Spark's UI and event log tell which model, test or snapshot ran each query.

    dbt names a thread's connection after the node it runs (``model.floe.dim_customer``;
    ``master`` and the like for dbt's own queries). A Spark job takes the local
    properties of the thread that starts it, and floe's own worker threads inherit
    them (``inheritable_thread_target``).
    """
    name = connection.name if connection is not None else None
    if name:
        spark.sparkContext.setJobGroup(name, name)


def untag_spark_jobs() -> None:
    """This thread's jobs carry no dbt node any more (its connection was released)."""
    if session_settings() is None:
        return
    try:
        spark = get_spark()
    except NoSessionError:  # stopped meanwhile: no thread of it runs jobs any more
        return
    spark.sparkContext._jsc.clearJobGroup()


def _require_cluster(spark: Any, settings: Settings) -> None:
    """Fail the build unless `spark` runs its tasks on a cluster (floe.cluster.guard)."""
    try:
        require_cluster_session(spark, settings)
    except ClusterTargetError as exc:
        raise DbtRuntimeError(str(exc)) from exc


@functools.cache
def _literal_binding_wrapper() -> type:
    """dbt-spark's session wrapper, binding parameters with sql_literal (imports pyspark)."""
    from dbt.adapters.spark.session import SessionConnectionWrapper

    class LiteralBindingSessionWrapper(SessionConnectionWrapper):
        @classmethod
        def _fix_binding(cls, value: Any) -> str:  # type: ignore[override]
            return sql_literal(value)

        def execute(self, sql: str, bindings: list[Any] | None = None) -> None:
            # A DELETE/MERGE into a table another dbt thread appends to (the shared SCD2
            # ledger) can be refused before it writes: run it again (docs/runtime.md).
            # A statement may ask for Spark settings of its own with a `/* floe:<name> */`
            # comment (docs/runtime.md, "Statement settings").
            try:
                marks = statement_marks(sql)
            except ValueError as exc:
                raise FloeStatementError(str(exc)) from exc

            def run() -> None:
                spark = get_spark()
                tag_spark_jobs(spark, getattr(self, "dbt_connection", None))
                held = statement_settings(spark, marks) if marks else nullcontext()
                with held:
                    namespace = cascaded_namespace(sql)
                    if namespace is not None:
                        _empty_namespace(spark, namespace)
                    super(LiteralBindingSessionWrapper, self).execute(sql, bindings)

            with _catalog_contention(None, "running a dbt statement"):
                retry_concurrent_scan(run, what="dbt statement")

    return LiteralBindingSessionWrapper


class SessionPythonJobHelper(PythonJobHelper):
    """Runs a compiled Python model in this process's SparkSession."""

    def __init__(self, parsed_model: dict, credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> Any:
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        if self.credentials.method != SparkConnectionMethod.SESSION:
            # The only session here would be a local one: never run a model there silently.
            raise DbtRuntimeError(
                f"Python model {name} cannot run on a target with method "
                f"{self.credentials.method}: floe runs Python models in the dbt process's "
                "SparkSession (method: session), e.g. --target cluster (docs/cluster.md)"
            )
        settings = connection_settings()
        spark = get_spark(settings)
        if getattr(self.credentials, "require_cluster", False):
            _require_cluster(spark, settings)
        code = compile(compiled_code, f"<dbt python model {name}>", "exec")
        # The compiled model finds the session as `spark` (as on Databricks) and floe's
        # settings as `floe_settings` (the feed loader's landing zone and state).
        namespace: dict[str, Any] = {
            "spark": spark,
            "floe_settings": settings,
            "__name__": f"dbt_model_{name}",
        }
        try:
            exec(code, namespace)
        except Exception as exc:
            raise DbtRuntimeError(
                f"Python model {name} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return None


class FloeAdapter(SparkAdapter):
    ConnectionManager = FloeConnectionManager
    Relation = FloeRelation  # type: ignore[assignment]
    Column = FloeColumn  # type: ignore[assignment]

    @classmethod
    def type(cls) -> str:
        return ADAPTER_TYPE

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @available
    def floe_run_checks(self, relation: Any, checks: Any, model_name: str, run_id: str) -> Any:
        """Data-quality checks of a built model, for the `floe_checks` test (floe.quality)."""
        self._session()
        return run_checks_for(relation, checks, model_name, run_id)

    @available
    def floe_run_dqdl(
        self,
        relation: Any,
        ruleset: Any,
        model_name: str,
        run_id: str,
        datasets: Any,
        model_path: Any,
    ) -> Any:
        """A built model's DQDL ruleset, for the `floe_dqdl` test (floe.quality.dqdl)."""
        self._session()
        return run_dqdl_for(
            relation,
            ruleset,
            model_name,
            run_id,
            datasets=dict(datasets or {}),
            model_path=model_path,
            project_root=self.config.project_root,
        )

    @available
    def floe_env(self) -> str:
        """The environment this dbt run builds into (FLOE_ENV), '' for main."""
        return connection_settings().env or ""

    @available
    def floe_env_table(self, relation: Any, branch: str) -> dict[str, Any]:
        """A table's branch, write.wap.enabled and columns for an environment build, from
        one catalog read (floe.envs.table_for_build)."""
        table = f"{relation.schema}.{relation.identifier}"
        try:
            return table_for_build(self._session(), table, str(branch))
        except EnvError as exc:
            raise DbtRuntimeError(str(exc)) from exc

    @available
    def floe_privacy(self, operation: str, args: dict, graph: dict) -> str:
        """GDPR erasure / rectification for the `privacy_*` run-operations (floe.privacy).

        Not through `_session()`: opening a connection points the session at FLOE_ENV's
        branch, and an erasure works on main and every ref itself (docs/privacy.md)."""
        return run_operation(operation, args, graph, connection_settings())

    @available
    def floe_create_table_if_missing(self, table: str, ddl: str) -> str:
        """Run a macro's ``create table if not exists`` safely against a racing creator."""
        create_table_if_missing(self._session(), table, ddl)
        return ""

    @available
    def floe_freeze_view(self, view: str, name: str) -> str:
        """Compute a temporary view once into temporary view `name` (floe.runtime.views)."""
        freeze_view(self._session(), str(view), str(name))
        return ""

    @available
    def floe_pin_view(self, sql: str, name: str) -> str:
        """Temporary view `name` over `sql`, analyzed once (floe.runtime.views.pin_view)."""
        pin_view(self._session(), str(sql), str(name))
        return ""

    @available
    def floe_release_view(self, name: str) -> str:
        """Drop a view made by floe_freeze_view and free its rows."""
        release_view(self._session(), str(name))
        return ""

    @available
    def floe_settled(self, kind: str, name: str, relations: list, salt: str = "") -> bool:
        """Did this step's last run leave nothing to do, its inputs unchanged since?

        An input is a relation, `{'relation': r, 'column': c, 'value': v}` for the rows
        of a shared table whose `c` is `v` (floe.runtime.settled.RowsOf), or
        `{'table': t, 'ref': r}` for a table as of its ref (floe.runtime.settled.TableAt).
        """
        inputs = _settled_inputs(relations)
        return is_settled(self._session(), connection_settings(), kind, name, inputs, salt)

    @available
    def floe_remember_settled(self, kind: str, name: str, relations: list, salt: str = "") -> str:
        """Record that this step has nothing left to do as of its inputs now."""
        inputs = _settled_inputs(relations)
        remember(self._session(), connection_settings(), kind, name, inputs, salt)
        return ""

    @available
    def floe_reconcile_feeds(self, nodes: list[dict]) -> str:
        """Post-hook of raw feed models: every landed file's records add up (floe.feeds)."""
        try:
            reconcile_nodes(self._session(), nodes)
        except FeedError as exc:
            raise DbtRuntimeError(str(exc)) from exc
        return ""

    @available
    def floe_drop_table(self, relation: Any) -> str:
        """Drop an Iceberg table and delete its files (data, manifests, metadata).

        The same result as `drop table ... purge`, whose Iceberg implementation deletes
        the files with a Spark action (jobs that list and delete them: seconds per
        table on a busy machine); here the driver deletes them with Iceberg's own
        `CatalogUtil.dropTableData`, as Iceberg's non-Spark catalogs purge. A table
        with `gc.enabled=false` keeps Iceberg's refusal (purge through SQL).
        """
        _drop_iceberg_table(self._session(), str(relation))
        return ""

    @available
    def floe_query_columns(self, sql: str) -> list[str]:
        """The output column names of a query, from Spark's analyzer (nothing runs)."""
        return [field.name for field in self._session().sql(sql).schema.fields]

    @available
    def floe_void_columns(self, sql: str) -> list[str]:
        """The query's columns of Spark's `void` type (an untyped `null`), if any.

        Only SQL that mentions null is analyzed; SQL Spark cannot analyze here is left
        to fail where it runs, with its own error.
        """
        if not _MENTIONS_NULL.search(sql):
            return []
        from pyspark.sql.types import NullType

        try:
            schema = self._session().sql(sql).schema
        except Exception:
            return []
        return [field.name for field in schema.fields if isinstance(field.dataType, NullType)]

    def _session(self) -> Any:
        """The SparkSession, through this thread's dbt connection, opened if still lazy.

        Opening the connection takes the writer lock, starts the session (or waits for
        the entry's prestart) and points it at FLOE_ENV's branch. Planning may have run no
        statement (relations are listed from the catalog, below), so a node's first
        adapter call can come before any connection was opened: it must open one rather
        than find no session.
        """
        from dbt.adapters.exceptions import InvalidConnectionError

        try:
            connection = self.connections.get_thread_connection()
        except InvalidConnectionError:
            # No dbt connection in this thread: take the writer lock as opening one
            # would, so a writing command never starts Spark work without it.
            settings = connection_settings()
            _take_writer_lock(settings)
            return get_spark(settings)
        connection.handle  # noqa: B018 - resolving a lazy handle opens the connection
        return get_spark()

    def submit_python_job(self, parsed_model: dict, compiled_code: str) -> Any:
        # The model runs in this thread's session: opened first, so that it reads and
        # writes FLOE_ENV's branch even when it is the run's first Spark work.
        tag_spark_jobs(self._session(), self.connections.get_if_exists())
        return super().submit_python_job(parsed_model, compiled_code)

    def list_schemas(self, database: str) -> list[str]:
        # From the SQLite catalog when it can answer (docs/dev.md, "A cold command"):
        # no Spark statement, so a cold command's planning does not wait for the JVM.
        # The writer lock first, as the connection a `show namespaces` opens takes it.
        settings = connection_settings()
        _take_writer_lock(settings)
        listed = list_namespaces(settings)
        if listed is not None:
            return listed
        return super().list_schemas(database)  # type: ignore[no-any-return]

    def list_relations_without_caching(self, schema_relation: Any) -> list[Any]:
        schema = schema_relation.schema
        settings = connection_settings()
        _take_writer_lock(settings)
        listing = list_namespace(settings, schema)
        if listing is not None:
            table_names, view_names = listing.tables, set(listing.views)
        else:
            try:
                tables = self.execute_macro("floe__show_tables", kwargs={"schema": schema})
                views = self.execute_macro("floe__show_views", kwargs={"schema": schema})
            except DbtRuntimeError as exc:
                message = getattr(exc, "msg", str(exc))
                if any(marker in message for marker in MISSING_SCHEMA_MESSAGES):
                    return []
                raise
            view_names = {row[1] for row in views if not _truthy(row[2])}
            table_names = [row[1] for row in tables if not _truthy(row[2])]
        relations = []
        for name in table_names:
            if name in view_names:
                continue
            relations.append(
                self.Relation.create(
                    schema=schema,
                    identifier=name,
                    type="table",
                    information="Provider: iceberg\n",
                    is_iceberg=True,
                )
            )
        relations.extend(
            self.Relation.create(schema=schema, identifier=name, type="view") for name in view_names
        )
        return relations

    @available
    def floe_relations_in_schema(self, schema_relation: Any) -> list[Any]:
        """The tables and views of a schema, from the catalog; none if it does not exist."""
        return self.list_relations_without_caching(schema_relation)

    def get_catalog(self, relation_configs: Any, used_schemas: Any) -> tuple[Any, list[Exception]]:
        """The docs catalog from Iceberg's metadata in one pass (floe.docsite.catalog)."""
        relation_configs = list(relation_configs)
        schemas = {str(schema).lower() for _database, schema in used_schemas}
        settings = connection_settings()
        try:
            rows = iceberg_rows(settings, schemas)
        except CatalogUnavailable as exc:
            logger.debug(f"floe: Iceberg catalog not readable directly ({exc}); using DESCRIBE")
            return super().get_catalog(relation_configs, used_schemas)
        listed = {(r["table_schema"].lower(), r["table_name"].lower()) for r in rows}
        sources = [
            s
            for s in landing_sources(relation_configs)
            if (str(s.get("schema")).lower(), str(s.get("identifier") or s["name"]).lower())
            not in listed
        ]
        rows.extend(feed_rows(sources, settings))
        return catalog_table(rows), []

    def parse_describe_extended(self, relation: Any, raw_rows: Any) -> list[Any]:
        """dbt-spark's, with no owner (not the string 'None') where DESCRIBE shows none.

        Iceberg views record no owner; dbt-spark writes str(None) into the catalog.
        """
        columns = super().parse_describe_extended(relation, raw_rows)
        rows = [dict(zip(row._keys, row._values, strict=False)) for row in raw_rows]
        metadata = rows[self.find_table_information_separator(rows) + 1 :]
        owner = next((row["data_type"] for row in metadata if row["col_name"] == "Owner"), None)
        for column in columns:
            column.table_owner = owner
            column.column_index += 1  # dbt's catalog counts columns from 1
        return [FloeColumn.of(column) for column in columns]

    def get_columns_in_relation(self, relation: Any) -> list[Any]:
        return [FloeColumn.of(column) for column in super().get_columns_in_relation(relation)]

    # ---- microbatch and dbt clone (docs/decisions/0026-microbatch-window-merge.md, 0042)

    # Batches of a microbatch model run one at a time, whatever `concurrent_batches` says:
    # each is a MERGE on the same Iceberg table, and concurrent ones conflict in its
    # optimistic commit (docs/decisions/0026-microbatch-window-merge.md, "Concurrency").
    _capabilities = CapabilityDict(
        {Capability.MicrobatchConcurrency: CapabilitySupport(support=Support.Unsupported)}
    )

    # dbt clone (floe.materialize.clone; docs/decisions/0042-dbt-clone-on-iceberg.md)

    @available
    def floe_prepare_clone(self, target: Any, source: Any) -> str:
        """Tag ``source``'s current snapshot and write the clone's metadata file; returns
        the statement that registers it as ``target`` (the clone's `main` statement)."""
        settings = connection_settings()
        spark = self._session()
        catalog = settings.catalog_name
        try:
            prepared = prepare_clone(
                spark,
                table_name(source.schema, source.identifier),
                table_name(target.schema, target.identifier),
                catalog=catalog,
                warehouse=spark.conf.get(f"spark.sql.catalog.{catalog}.warehouse")
                or settings.warehouse,
            )
        except CloneError as exc:
            raise DbtRuntimeError(str(exc)) from exc
        return (
            f"call {catalog}.system.register_table(table => {sql_literal(prepared.table)}, "
            f"metadata_file => {sql_literal(prepared.metadata_file)})"
        )

    # ---- seeds (floe.materialize.seeds; docs/decisions/0025-seeds-and-snapshots.md)

    # --- model config: parsed and checked in Python, macros only render SQL ----------
    # (floe.materialize.configs; a bad option is a compilation error naming the model)

    @available
    def floe_table_properties(self, relation: Any, options: dict) -> dict[str, Any]:
        """The model's Iceberg table properties (TableProperties.from_options)."""
        with _model_config_errors():
            return TableProperties.from_options(str(relation), **options).as_dict()

    @available
    def floe_validate_incremental(self, relation: Any, strategy: Any, partition_by: Any) -> str:
        """Refuse an unknown strategy or insert_overwrite without partition_by."""
        with _model_config_errors():
            IncrementalConfig.from_options(str(relation), strategy, partition_by)
        return ""

    @available
    def floe_validate_unique_key(self, relation: Any, unique_key: Any, columns: Any) -> str:
        """Refuse a unique_key column the model's rows do not have."""
        with _model_config_errors():
            check_unique_key(str(relation), unique_key, columns or [])
        return ""

    @available
    def floe_scd2_config(self, relation: Any, options: dict) -> dict[str, Any]:
        """The scd2 model's resolved config (Scd2Config.from_options)."""
        with _model_config_errors():
            return Scd2Config.from_options(str(relation), options).as_dict()

    @available
    def floe_cdc_config(
        self,
        relation: Any,
        options: Any,
        unique_key: Any,
        partition_by: Any,
        model: Any,
        graph: Any,
    ) -> dict[str, Any]:
        """The cdc model's resolved options, defaulted from the feed it replicates."""
        with _model_config_errors():
            return model_cdc_config(
                str(relation),
                options,
                unique_key=unique_key,
                partition_by=partition_by,
                node=model,
                graph=graph,
            ).as_dict()

    @available
    def floe_feed_node(self, source: str, name: str, graph: Any) -> dict[str, Any] | None:
        """Feed ``source.name``'s declaration from dbt's graph, validated (or None if that
        source is no feed): the one way a feed reaches Jinja (floe.feeds.sources)."""
        with _model_config_errors():
            return feed_node(graph, str(source), str(name))

    @available
    def floe_upstream_tables(self, node: Any, graph: Any) -> list[str]:
        """The tables a model reads through views and ephemerals (floe.materialize.graph),
        each where dbt's ``ref()`` reads it: a deferred node at its state relation."""
        return upstream_tables(graph or {}, node, read_from=self._deferred_relation)

    def _deferred_relation(self, node: Mapping[str, Any]) -> str | None:
        """dbt's ``--defer`` rule (dbt.context.providers, RuntimeRefResolver): an
        unselected node with a ``defer_relation`` is read from it under
        ``--favor-state``, or when its own relation does not exist here."""
        deferred = node.get("defer_relation")
        args = getattr(self.config, "args", None)
        if not deferred or not getattr(args, "defer", False):
            return None
        from dbt import selected_resources  # dbt-core's, set by the running task

        favored = (
            getattr(args, "favor_state", False)
            and node.get("unique_id") not in selected_resources.SELECTED_RESOURCES
        )
        identifier = str(node.get("alias") or node.get("name"))
        if not favored and self.get_relation(str(node.get("database")), node["schema"], identifier):
            return None
        return f"{deferred['schema']}.{deferred.get('alias') or deferred.get('name')}"

    @available
    def floe_seed_read(
        self,
        seed: str,
        path: str,
        column_types: dict,
        delimiter: Any,
        quote_columns: Any = None,
    ) -> Any:
        """A seed CSV with dbt's column names and types (floe.materialize.seeds.read_seed).

        A config that cannot read the CSV (an empty `delimiter`; with `quote_columns:
        false` a column name that is no plain identifier) is a compilation error, as dbt
        reports it; a CSV that does not load is a runtime error."""
        from pathlib import Path

        from floe.materialize.seeds import SeedConfigError, SeedError, read_seed

        if quote_columns is not None and not isinstance(quote_columns, bool):
            raise CompilationError(
                f"Seed {seed}: quote_columns must be true or false, got {quote_columns!r}"
            )
        try:
            return read_seed(
                Path(path),
                delimiter=delimiter,
                column_types={str(k): str(v) for k, v in (column_types or {}).items()},
                convert_type=self.convert_type,
                quote_columns=quote_columns is not False,
            )
        except SeedConfigError as exc:
            raise CompilationError(f"Seed {seed}: {exc}") from exc
        except (SeedError, OSError, UnicodeDecodeError) as exc:
            raise DbtRuntimeError(f"Seed {seed}: {exc}") from exc

    @available
    def floe_seed_relation(self, relation: Any) -> Any:
        """The seed's table relation; its name may be anything but a backquote or a
        control character (a file `seed.with.dots.csv` renders as `seed.with.dots`)."""
        name = str(relation.identifier)
        if "`" in name or any(ord(c) < 32 for c in name):
            raise CompilationError(
                f"Seed {relation.schema}.{name!r}: a seed's name (its file name or alias) "
                "cannot hold a backquote or a control character; rename the CSV or set "
                "an `alias`"
            )
        return relation

    @available
    def floe_seed_show_table(self, columns: Any) -> Any:
        """The first rows of a read seed as an agate table (`dbt seed --show`)."""
        from floe.materialize.seeds import show_table

        return show_table(columns)

    @available
    def floe_seed_view(self, seed: str, columns: Any) -> str:
        """A read seed's rows as a temporary view cast to its column types; its name."""
        from floe.materialize.seeds import SeedError, register_seed_view, seed_view_name

        view = seed_view_name(str(seed))
        try:
            register_seed_view(self._session(), columns, view)
        except SeedError as exc:
            raise DbtRuntimeError(f"Seed {seed}: {exc}") from exc
        return view


_LEADING_COMMENTS = re.compile(r"^\s*(?:/\*.*?\*/\s*|--[^\n]*\n\s*)*", re.DOTALL)
_DROP_CASCADE = re.compile(
    r"drop\s+(?:schema|database|namespace)\s+(?:if\s+exists\s+)?"
    r"(?P<name>`[^`]+`|[A-Za-z_][A-Za-z0-9_]*)\s+cascade\s*;?\s*$",
    re.IGNORECASE,
)


def cascaded_namespace(sql: str) -> str | None:
    """The namespace of a `drop schema <name> cascade` statement (quoted as given), else
    None. Iceberg's catalogs ignore CASCADE and refuse a namespace that holds tables or
    views, so floe empties it first (docs: README, "dbt on Iceberg")."""
    match = _DROP_CASCADE.fullmatch(_LEADING_COMMENTS.sub("", sql, count=1).strip())
    return match.group("name") if match else None


def _empty_namespace(spark: Any, namespace: str) -> None:
    """Drop every view and table (with its files) of ``namespace``; nothing if it is
    missing. ``namespace`` is one identifier (plain or backquoted: cascaded_namespace)."""
    if not spark.catalog.databaseExists(namespace.strip("`")):
        return
    views = {row[1] for row in spark.sql(f"show views in {namespace}").collect() if not row[2]}
    for view in sorted(views):
        spark.sql(f"drop view if exists {namespace}.`{view}`")
    for row in spark.sql(f"show tables in {namespace}").collect():
        if not row[2] and row[1] not in views:
            _drop_iceberg_table(spark, f"{namespace}.`{row[1]}`")


def _drop_iceberg_table(spark: Any, table: str) -> None:
    """`drop table if exists <table> purge`, deleting the files in the driver."""
    jvm: Any = spark._jvm
    catalog = spark.conf.get("spark.sql.defaultCatalog", "spark_catalog")
    loaded = iceberg_table(spark, catalog, table)  # raises on anything but "none such"
    if loaded is None:  # not an Iceberg table of the catalog: a temporary view, or missing
        spark.sql(f"drop table if exists {table} purge")  # Spark's own drop decides
        return
    plain = table.replace("`", "")
    if is_clone(loaded.properties()):
        # docs/decisions/0042-dbt-clone-on-iceberg.md: its own files only, and its tags
        drop_clone(spark, plain, loaded, catalog=catalog)
        return
    if str(loaded.properties().getOrDefault("gc.enabled", "true")).lower() == "false":
        spark.sql(f"drop table if exists {table} purge")  # Iceberg refuses, naming why
        return
    readers = live_clones(spark, plain, catalog=catalog, loaded=loaded)
    if readers:
        logger.warning(
            f"floe: {plain} is dropped but its files stay: clone(s) {', '.join(readers)} "
            "read them (docs/decisions/0042-dbt-clone-on-iceberg.md); drop or re-clone "
            "those to let them go"
        )
        spark.sql(f"drop table if exists {table}")
        return
    loaded.refresh()
    metadata = loaded.operations().current()
    io = loaded.io()
    spark.sql(f"drop table if exists {table}")
    jvm.org.apache.iceberg.CatalogUtil.dropTableData(io, metadata)


@contextmanager
def _model_config_errors() -> Iterator[None]:
    """A model config or feed declaration error as dbt's compilation error (its message)."""
    try:
        yield
    except (ModelConfigError, FeedError) as exc:
        raise CompilationError(str(exc)) from exc


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() == "true"


def _settled_inputs(relations: list) -> list:
    """Settled-step inputs from the materialization: relation names, dicts naming one
    writer's rows of a shared table (floe.runtime.settled.RowsOf), and dicts naming a
    table at one of its refs (`{'table': t, 'ref': r}`: floe.runtime.settled.TableAt,
    compactions leaving it unchanged unless `same_rows_ok` is false)."""
    inputs: list = []
    for item in relations:
        if isinstance(item, dict) and "table" in item:
            same_rows_ok = item.get("same_rows_ok", True)
            inputs.append(TableAt(str(item["table"]), str(item.get("ref") or "main"), same_rows_ok))
        elif isinstance(item, dict):
            inputs.append(RowsOf(str(item["relation"]), str(item["column"]), str(item["value"])))
        else:
            inputs.append(str(item))
    return inputs

"""Create, inspect, publish and drop environments (docs/envs.md).

State lives in two places, each written atomically:

- the catalog: the branches ``env_NAME`` (made by the environment's first write to a
  table), the table property ``floe.env.created = NAME`` on tables and views that exist
  only in the environment, ``write.wap.enabled`` on the tables it may write;
- ``$FLOE_HOME/envs/NAME.json``: when it was created and main's snapshot of every table
  then (the base "main moved" is judged against), and during a publish
  ``NAME.publish.json``, the journal naming each table's snapshot before and after.

Every command that changes the catalog holds the warehouse's writer lock
(floe.runtime.locking), so a publish never interleaves with a build or a maintenance run.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.runtime import settled
from floe.runtime.locking import writer_lock
from floe.runtime.session import SCHEMAS
from floe.runtime.settings import Settings
from floe.runtime.tables import tables_in

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

BRANCH_PREFIX = "env_"
CREATED_PROPERTY = "floe.env.created"
WAP_PROPERTY = "write.wap.enabled"
# An environment name becomes part of a branch name and of identifiers like
# `t.branch_env_NAME`: lowercase letters, digits and underscores only.
_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
_TABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")


class EnvError(Exception):
    """An environment command cannot do what was asked; the message says what to do."""


class EnvNotFound(EnvError):
    pass


class EnvExists(EnvError):
    pass


class MainMoved(EnvError):
    """Main of some tables changed since the environment was created."""

    def __init__(self, name: str, tables: list[str]) -> None:
        self.tables = tables
        super().__init__(
            f"environment {name}: main moved since it was created for "
            f"{', '.join(tables)}; publishing would overwrite those changes or combine "
            f"the environment's tables with a main they were not built against. Rebuild "
            f"on top of the new main (`floe env drop {name} && floe env create {name} && "
            f"FLOE_ENV={name} dbt build -s <selector>`); --allow-moved publishes anyway "
            f"only when none of them was changed in the environment."
        )


class PublishConflict(EnvError):
    pass


def validate_name(name: str) -> str:
    if not _NAME.match(name or ""):
        raise EnvError(
            f"environment name {name!r} is not valid: use 1-40 lowercase letters, digits "
            "and underscores, starting with a letter (it becomes the branch env_<name>)"
        )
    return name


def branch_of(name: str) -> str:
    return BRANCH_PREFIX + validate_name(name)


def _check_table(table: str) -> str:
    if not _TABLE.match(table):
        raise EnvError(f"{table!r} is not a schema.table identifier floe can use")
    return table


@dataclass(frozen=True)
class Env:
    name: str
    created_at: str  # ISO 8601, UTC
    base: dict[str, int | None]  # table -> main's snapshot id when created

    @property
    def branch(self) -> str:
        return branch_of(self.name)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "created_at": self.created_at, "base": self.base}


@dataclass
class TableRefs:
    table: str
    main: int | None
    branch: int | None  # None: the environment never wrote this table
    created: bool  # exists only in the environment
    branch_committed_at: datetime | None = None


@dataclass
class EnvStatus:
    env: Env
    tables: list[TableRefs] = field(default_factory=list)
    views_created: list[str] = field(default_factory=list)
    publishing: dict[str, dict[str, int | None]] | None = None

    @property
    def changed(self) -> list[str]:
        return [t.table for t in self.tables if t.branch is not None and t.branch != t.main]

    @property
    def moved(self) -> list[str]:
        """Tables whose main is not what it was when the environment was created."""
        return [
            t.table
            for t in self.tables
            if t.table in self.env.base and not t.created and t.main != self.env.base[t.table]
        ]


# -- files under $FLOE_HOME/envs


def _dir(settings: Settings) -> Path:
    return settings.home / "envs"


def _state_path(settings: Settings, name: str) -> Path:
    return _dir(settings) / f"{validate_name(name)}.json"


def _journal_path(settings: Settings, name: str) -> Path:
    return _dir(settings) / f"{validate_name(name)}.publish.json"


def _write_atomic(path: Path, data: dict[str, Any]) -> None:
    """Write ``data`` as JSON so a reader (or a crash) sees the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as out:
            json.dump(data, out, indent=2, sort_keys=True)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
        dirfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dirfd)
        finally:
            os.close(dirfd)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load(settings: Settings, name: str) -> Env:
    path = _state_path(settings, name)
    if not path.exists():
        raise EnvNotFound(
            f"environment {name} does not exist under {_dir(settings)}: create it with "
            f"`floe env create {name}` (or list them with `floe env list`)"
        )
    data = json.loads(path.read_text())
    return Env(data["name"], data["created_at"], dict(data["base"]))


def list_envs(settings: Settings) -> list[Env]:
    folder = _dir(settings)
    if not folder.is_dir():
        return []
    names = sorted(p.stem for p in folder.glob("*.json") if not p.stem.endswith(".publish"))
    return [load(settings, n) for n in names if _NAME.match(n)]


def require_env(settings: Settings, name: str) -> Env:
    """The environment dbt is asked to build into; refused while a publish is unfinished."""
    env = load(settings, name)
    if _journal_path(settings, name).exists():
        raise EnvError(
            f"environment {name} has an unfinished publish: run `floe env publish {name}` "
            "to finish it before building into it"
        )
    return env


# -- the catalog


def _iceberg_table(spark: SparkSession, table: str) -> Any:
    """``table``'s org.apache.iceberg.Table, refreshed; None if it does not exist."""
    jvm: Any = spark._jvm
    name = f"{spark.conf.get('spark.sql.defaultCatalog', 'spark_catalog')}.{table}"
    try:
        loaded = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(
            spark._jsparkSession, name
        )
    except Exception as exc:  # py4j wraps NoSuchTableException
        text = str(exc)
        if any(m in text for m in ("NoSuchTable", "TABLE_OR_VIEW_NOT_FOUND")) or (
            "not found" in text.lower()
        ):
            return None
        raise
    loaded.refresh()
    return loaded


def _iceberg_catalog(spark: SparkSession) -> Any:
    """The session's default catalog as an org.apache.iceberg.catalog.Catalog, or None."""
    name = spark.conf.get("spark.sql.defaultCatalog", "spark_catalog")
    try:
        catalog = spark._jsparkSession.sessionState().catalogManager().catalog(name)
        return catalog.icebergCatalog()
    except Exception:  # not an Iceberg SparkCatalog: list through SQL instead
        return None


def _list_in_catalog(spark: SparkSession, schemas: tuple[str, ...], views: bool) -> list[str]:
    """``schema.name`` of the catalog's tables (or views), read from the catalog alone:
    no Spark job, unlike ``show tables`` (seconds each on a loaded machine)."""
    catalog = _iceberg_catalog(spark)
    if catalog is None:
        raise LookupError("no Iceberg catalog")
    jvm: Any = spark._jvm
    gateway: Any = spark.sparkContext._gateway
    found: list[str] = []
    try:
        for schema in schemas:
            levels = gateway.new_array(jvm.java.lang.String, 1)
            levels[0] = schema
            namespace = jvm.org.apache.iceberg.catalog.Namespace.of(levels)
            if not catalog.namespaceExists(namespace):
                continue
            listed = catalog.listViews(namespace) if views else catalog.listTables(namespace)
            found.extend(f"{schema}.{ident.name()}" for ident in listed)
    except Exception as exc:  # e.g. a catalog that keeps no views: list through SQL
        raise LookupError(str(exc)) from exc
    return sorted(found)


def project_tables(spark: SparkSession, schemas: tuple[str, ...] = SCHEMAS) -> list[str]:
    """Iceberg tables (not views) of floe's schemas, as ``schema.table``."""
    try:
        return _list_in_catalog(spark, schemas, views=False)
    except LookupError:
        return tables_in(spark, schemas)


def project_views(spark: SparkSession, schemas: tuple[str, ...] = SCHEMAS) -> list[str]:
    try:
        return _list_in_catalog(spark, schemas, views=True)
    except LookupError:
        pass
    existing = {r[0] for r in spark.sql("show namespaces").collect()}
    return sorted(
        f"{schema}.{r.viewName}"
        for schema in schemas
        if schema in existing
        for r in spark.sql(f"show views in {schema}").collect()
        if not r.isTemporary
    )


def _refs(loaded: Any) -> dict[str, int]:
    refs = loaded.refs()
    return {str(k): int(refs.get(k).snapshotId()) for k in refs.keySet().toArray()}


def _table_refs(spark: SparkSession, table: str, env: Env) -> TableRefs | None:
    loaded = _iceberg_table(spark, table)
    if loaded is None:
        return None
    refs = _refs(loaded)
    props = loaded.properties()
    head = refs.get(env.branch)
    committed = None
    if head is not None:
        millis = loaded.snapshot(head).timestampMillis()
        committed = datetime.fromtimestamp(millis / 1000, UTC)
    return TableRefs(
        table,
        refs.get("main"),
        head,
        props.get(CREATED_PROPERTY) == env.name,
        committed,
    )


def table_for_build(spark: SparkSession, table: str, branch: str) -> dict[str, Any]:
    """What a build of ``table`` in an environment checks, from one catalog read.

    ``exists``; ``has_branch``: the environment has written it; ``wap``: its writes
    under ``spark.wap.branch`` go to the branch (``write.wap.enabled``); ``columns``:
    its column names, lowercased. Read through Iceberg's API (no Spark job), where the
    table materialization ran a ``.refs`` query, ``show tblproperties`` and ``describe``
    per node (docs/decisions/0055-environment-build-and-diff-costs.md).
    """
    loaded = _iceberg_table(spark, _check_table(table))
    if loaded is None:
        return {"exists": False, "has_branch": False, "wap": False, "columns": []}
    return {
        "exists": True,
        "has_branch": bool(loaded.refs().containsKey(branch)),
        "wap": loaded.properties().get(WAP_PROPERTY) == "true",
        "columns": [str(c.name()).lower() for c in loaded.schema().columns()],
    }


def _view_created_by(spark: SparkSession, view: str, name: str) -> bool:
    rows = spark.sql(f"show tblproperties {view}").collect()
    return any(r[0] == CREATED_PROPERTY and r[1] == name for r in rows)


def status(spark: SparkSession, settings: Settings, name: str) -> EnvStatus:
    env = load(settings, name)
    result = EnvStatus(env)
    for table in project_tables(spark):
        refs = _table_refs(spark, table, env)
        if refs is not None:
            result.tables.append(refs)
    result.views_created = [v for v in project_views(spark) if _view_created_by(spark, v, env.name)]
    journal = _journal_path(settings, name)
    if journal.exists():
        result.publishing = json.loads(journal.read_text())["tables"]
    return result


def create(spark: SparkSession, settings: Settings, name: str) -> Env:
    """Record environment ``name``: no data file and no branch is written.

    Each table gets ``write.wap.enabled`` (a table property, once; main's snapshot is
    untouched) so that a write in the environment goes to its branch, and main's current
    snapshot is recorded as the base.
    """
    validate_name(name)
    with writer_lock(settings, f"floe env create {name}"):
        if _state_path(settings, name).exists():
            raise EnvExists(
                f"environment {name} exists already: build into it with FLOE_ENV={name}, "
                f"or `floe env drop {name}` first"
            )
        base: dict[str, int | None] = {}
        for table in project_tables(spark):
            loaded = _iceberg_table(spark, table)
            if loaded is None:
                continue
            snapshot = loaded.currentSnapshot()
            base[table] = int(snapshot.snapshotId()) if snapshot is not None else None
            enable_wap(spark, table, loaded)
        env = Env(name, datetime.now(UTC).isoformat(timespec="seconds"), base)
        _write_atomic(_state_path(settings, name), env.to_json())
    return env


def enable_wap(spark: SparkSession, table: str, loaded: Any = None) -> None:
    """Let writes to ``table`` under ``spark.wap.branch`` go to that branch (metadata only)."""
    loaded = loaded if loaded is not None else _iceberg_table(spark, table)
    if loaded is not None and loaded.properties().get(WAP_PROPERTY) != "true":
        spark.sql(
            f"alter table {_check_table(table)} set tblproperties ('{WAP_PROPERTY}' = 'true')"
        )


def _forget_table_memo(settings: Settings, table: str, branch: str) -> None:
    # The "same inputs, no rebuild" memo of the environment's builds (table.sql,
    # floe_table_memo_name): its branch is gone, so is what the memo vouched for.
    settled.forget(settings, settled.TABLES, f"{table}.{branch}")


def drop(spark: SparkSession, settings: Settings, name: str) -> list[str]:
    """Remove the environment: its branches, its own tables and views, its state.

    Main is never touched. Returns what was removed, one line each.
    """
    with writer_lock(settings, f"floe env drop {name}"):
        st = status(spark, settings, name)
        removed = _remove(spark, settings, st)
        _journal_path(settings, name).unlink(missing_ok=True)
        _state_path(settings, name).unlink(missing_ok=True)
    return removed


def _remove(spark: SparkSession, settings: Settings, st: EnvStatus) -> list[str]:
    branch = st.env.branch
    removed: list[str] = []
    for refs in st.tables:
        table = _check_table(refs.table)
        if refs.created:
            spark.sql(f"drop table if exists {table} purge")
            removed.append(f"table {table} (environment only)")
            continue
        if refs.branch is not None:
            spark.sql(f"alter table {table} drop branch if exists {branch}")
            removed.append(f"branch {branch} of {table}")
        _forget_table_memo(settings, table, branch)
    for view in st.views_created:
        spark.sql(f"drop view if exists {_check_table(view)}")
        removed.append(f"view {view} (environment only)")
    return removed


def publish(
    spark: SparkSession,
    settings: Settings,
    name: str,
    *,
    allow_moved: bool = False,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, dict[str, int | None]]:
    """Make main of every changed table equal its branch, then end the environment.

    Each table is a fast-forward of main to the branch head (metadata only; no data file
    is rewritten). The plan is journaled before the first table moves, so a crash
    leaves a journal and the next ``publish`` finishes exactly those tables. Refuses,
    naming them, when main moved since ``create`` (unless ``allow_moved``). Returns the
    plan: table -> {"from": main before, "to": branch head}.
    """
    step = on_step or (lambda _line: None)
    with writer_lock(settings, f"floe env publish {name}"):
        journal = _journal_path(settings, name)
        st = status(spark, settings, name)
        if journal.exists():
            plan: dict[str, dict[str, int | None]] = json.loads(journal.read_text())["tables"]
            step(f"resuming the publish journaled in {journal}")
        else:
            moved = st.moved
            changed = set(st.changed)
            # A changed table whose main moved cannot be fast-forwarded at all: refused
            # before anything moves, --allow-moved or not.
            if moved and (not allow_moved or changed & set(moved)):
                raise MainMoved(name, moved)
            plan = {
                t.table: {"from": t.main, "to": t.branch}
                for t in st.tables
                if t.table in changed or (t.created and t.branch is not None)
            }
            _write_atomic(journal, {"env": name, "tables": plan})
            step(f"journal written: {len(plan)} table(s) to publish")
        branch = st.env.branch
        for table in sorted(plan):
            _check_table(table)
            loaded = _iceberg_table(spark, table)
            if loaded is None:
                raise PublishConflict(
                    f"environment {name}: {table} disappeared during the publish; the journal "
                    f"{journal} lists what was published; drop it by hand after checking"
                )
            main = _refs(loaded).get("main")
            target = plan[table]["to"]
            if main == target:
                step(f"{table}: already published")
                continue
            if main != plan[table]["from"]:
                raise PublishConflict(
                    f"environment {name}: main of {table} is {main}, neither the snapshot "
                    f"before the publish ({plan[table]['from']}) nor the branch "
                    f"({target}): another writer committed during the publish. The journal "
                    f"{journal} is kept; restore main or drop the environment."
                )
            spark.sql(
                f"call {settings.catalog_name}.system.fast_forward("
                f"table => '{table}', branch => 'main', to => '{branch}')"
            )
            step(f"{table}: main -> {target}")
        _finish(spark, settings, st)
        journal.unlink(missing_ok=True)
        _state_path(settings, name).unlink(missing_ok=True)
    return plan


def rebase(spark: SparkSession, settings: Settings, name: str) -> list[str]:
    """Move environment ``name`` onto main as it is now, to be rebuilt on top of it.

    For ``floe env publish --rebuild`` (docs/envs.md, "Publish"): the environment's
    branches were built against a main that has moved since, so they are dropped (main
    is untouched), its recorded base becomes main's current snapshots, and the tables it
    had written are returned, to be rebuilt in it (their builds then read the new main).
    Refused while a publish of it is unfinished.
    """
    require_env(settings, name)
    with writer_lock(settings, f"floe env publish --rebuild {name}"):
        st = status(spark, settings, name)
        rebuild = sorted(t.table for t in st.tables if t.branch is not None)
        branch = st.env.branch
        for refs in st.tables:
            table = _check_table(refs.table)
            if refs.branch is not None:
                spark.sql(f"alter table {table} drop branch if exists {branch}")
            _forget_table_memo(settings, table, branch)
        base = {t.table: t.main for t in st.tables if not t.created}
        _write_atomic(
            _state_path(settings, name),
            Env(name, st.env.created_at, base).to_json(),
        )
    return rebuild


def _finish(spark: SparkSession, settings: Settings, st: EnvStatus) -> None:
    """After the fast-forwards: environment-only tables and views become main's own,
    branches go (main holds their heads now)."""
    branch = st.env.branch
    for refs in st.tables:
        table = _check_table(refs.table)
        if refs.created:
            spark.sql(f"alter table {table} unset tblproperties if exists ('{CREATED_PROPERTY}')")
        if refs.branch is not None:
            spark.sql(f"alter table {table} drop branch if exists {branch}")
        _forget_table_memo(settings, table, branch)
    for view in st.views_created:
        spark.sql(
            f"alter view {_check_table(view)} unset tblproperties if exists ('{CREATED_PROPERTY}')"
        )


def expire_abandoned(
    spark: SparkSession,
    settings: Settings,
    max_age_days: float,
    *,
    now: datetime | None = None,
) -> list[str]:
    """Drop environments with no write for ``max_age_days`` (``floe maintain``'s policy).

    An environment's last activity is its newest branch commit, else its creation.
    One with an unfinished publish is left alone (its journal must be finished first).
    """
    moment = now or datetime.now(UTC)
    dropped = []
    for env in list_envs(settings):
        if _journal_path(settings, env.name).exists():
            continue
        st = status(spark, settings, env.name)
        commits = [t.branch_committed_at for t in st.tables if t.branch_committed_at]
        last = max([datetime.fromisoformat(env.created_at), *commits])
        if moment - last > timedelta(days=max_age_days):
            drop(spark, settings, env.name)
            dropped.append(env.name)
    return dropped

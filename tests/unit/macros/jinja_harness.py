"""Render floe's adapter macros with Jinja alone: no dbt project, no Spark.

Every `.sql` file of the include project (src/dbt/include/floe/macros) is compiled
into ONE template, the way dbt puts every macro of a package in one namespace, with
dbt's `materialization` and `test` tags. A test gets a fresh module over fakes of the
dbt context a macro reads (config, this, adapter, run_query, statement, ...), calls a
macro by name and asserts on the SQL it renders or the statements it runs.

dbt's `return()` is honoured at every macro boundary, as in dbt (a macro returns the
value, not its rendered text), and `adapter.dispatch` resolves floe__, spark__,
default__ in that order. Macros floe inherits from dbt-spark or dbt-core are stubs
recording their calls; tests of those belong to the adapter suite (tests/adapter).
"""

from __future__ import annotations

import datetime
import functools
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import jinja2.runtime
from dbt_common.clients.jinja import MaterializationExtension, TestExtension
from dbt_common.exceptions import CompilationError

from floe.adapter import FloeAdapter
from floe.materialize.graph import upstream_tables

ROOT = Path(__file__).resolve().parents[3]
MACROS = ROOT / "src" / "dbt" / "include" / "floe" / "macros"
DISPATCH_PREFIXES = ("floe", "spark", "default")


class CompilerError(Exception):
    """What `exceptions.raise_compiler_error` raises here (dbt: CompilationError)."""


class MacroReturn(Exception):
    def __init__(self, value: Any) -> None:
        self.value = value


def _return(value: Any) -> None:
    raise MacroReturn(value)


class ReturningContext(jinja2.runtime.Context):
    """Calls a macro as dbt does: `{{ return(x) }}` inside it makes the call's value x."""

    def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().call(__obj, *args, **kwargs)
        except MacroReturn as returned:
            if isinstance(__obj, jinja2.runtime.Macro):
                return returned.value
            raise


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        extensions=[
            "jinja2.ext.do",
            "jinja2.ext.loopcontrols",
            MaterializationExtension,
            TestExtension,
        ],
        undefined=jinja2.StrictUndefined,
    )
    env.context_class = ReturningContext
    return env


def macro_files() -> list[Path]:
    return sorted(MACROS.rglob("*.sql"))


_TEMPLATE: jinja2.Template | None = None


def _template() -> jinja2.Template:
    global _TEMPLATE
    if _TEMPLATE is None:
        source = "\n".join(path.read_text() for path in macro_files())
        _TEMPLATE = _environment().from_string(source)
    return _TEMPLATE


def normalize(sql: str, lower: bool = True) -> str:
    """One space between tokens, none inside parentheses' edges; lower case unless asked."""
    sql = re.sub(r"\s+", " ", sql.lower() if lower else sql).strip()
    return sql.replace("( ", "(").replace(" )", ")")


# --- fakes of dbt's context ---------------------------------------------------------


@dataclass(frozen=True)
class Column:
    name: str
    dtype: str = "string"

    @property
    def data_type(self) -> str:
        return self.dtype

    @property
    def quoted(self) -> str:
        return f"`{self.name}`"


@dataclass
class Relation:
    schema: str | None = "marts"
    identifier: str = "t"
    type: str = "table"
    is_iceberg: bool = True

    @property
    def is_view(self) -> bool:
        return self.type == "view"

    @property
    def is_table(self) -> bool:
        return self.type == "table"

    def incorporate(self, type: str | None = None, **_: Any) -> Relation:
        return Relation(self.schema, self.identifier, type or self.type, self.is_iceberg)

    def include(self, database: bool = True, schema: bool = True, **_: Any) -> Relation:
        return Relation(self.schema if schema else None, self.identifier, self.type)

    def without_identifier(self) -> str:
        return str(self.schema)

    def __str__(self) -> str:
        return f"{self.schema}.{self.identifier}" if self.schema else self.identifier


@dataclass
class Table:
    """An agate-like query result: `rows`, `column_names`, iteration, indexing."""

    rows: list[tuple] = field(default_factory=list)
    column_names: list[str] = field(default_factory=list)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index: int) -> tuple:
        return self.rows[index]


class Config:
    """`config` of a model: get / require / meta_get over one dict."""

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values

    def get(self, key: str, default: Any = None, **_: Any) -> Any:
        value = self.values.get(key)
        return default if value is None else value

    def require(self, key: str) -> Any:
        if key not in self.values:
            raise CompilerError(f"missing config: {key}")
        return self.values[key]

    def meta_get(self, key: str, default: Any = None) -> Any:
        return (self.values.get("meta") or {}).get(key, default)


class Exceptions:
    def raise_compiler_error(self, message: str) -> None:
        raise CompilerError(message)

    def warn(self, message: str) -> str:
        return ""


class Adapter:
    """The adapter calls macros make, answered from per-test data."""

    def floe_env(self) -> str:
        return self.env

    def __init__(self, render: Renderer) -> None:
        self._render = render
        self.env = ""  # floe_env(): main unless a test says otherwise
        self.columns: dict[str, list[Column]] = {}
        self.dropped: list[str] = []

    def dispatch(self, macro_name: str, macro_namespace: str | None = None) -> Callable:
        for prefix in DISPATCH_PREFIXES:
            found = self._render.find(f"{prefix}__{macro_name}")
            if found is not None:
                return found
        raise CompilerError(f"no macro to dispatch {macro_name} to")

    def quote(self, identifier: str) -> str:
        return f"`{identifier}`"

    def get_columns_in_relation(self, relation: Any) -> list[Column]:
        return self.columns.get(str(relation), [])

    def drop_relation(self, relation: Any) -> str:
        self.dropped.append(str(relation))
        return ""

    def floe_relations_in_schema(self, relation: Any) -> list[Relation]:
        return [r for r in self._render.relations if r.schema == relation.schema]

    def floe_upstream_tables(self, node: Any, graph: Any) -> list[str]:
        return upstream_tables(graph or {}, node)


def _with_harness_errors(method: Callable[..., Any]) -> Callable[..., Any]:
    """floe.adapter's own method; dbt's compilation error becomes this harness's."""

    @functools.wraps(method)
    def call(self: Adapter, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except CompilationError as exc:
            raise CompilerError(exc.msg) from exc

    return call


# Model config: the adapter's real methods (Python config objects, validated there).
for _name in (
    "floe_table_properties",
    "floe_validate_incremental",
    "floe_validate_unique_key",
    "floe_scd2_config",
    "floe_cdc_config",
):
    setattr(Adapter, _name, _with_harness_errors(getattr(FloeAdapter, _name)))


class Renderer:
    """One module of all floe macros over a fresh fake context."""

    def __init__(self, **overrides: Any) -> None:
        self.statements: list[tuple[str, str]] = []
        self.queries: list[str] = []
        self.query_results: list[tuple[str, Table]] = []
        self.relations: list[Relation] = []
        self.config = Config({})
        self.adapter = Adapter(self)
        self.this = Relation("marts", "t")
        self.stubs: dict[str, list[tuple]] = {}
        context: dict[str, Any] = {
            "return": _return,
            "config": self.config,
            "this": self.this,
            "model": {"name": "t", "unrendered_config": {}, "language": "sql"},
            "adapter": self.adapter,
            "exceptions": Exceptions(),
            "statement": self._statement,
            "run_query": self._run_query,
            "log": lambda *a, **k: "",
            "var": lambda name, default=None: default,
            "target": {"schema": "default", "name": "local"},
            "modules": _Modules(),
            "execute": True,
            "is_incremental": lambda: False,
            "should_full_refresh": lambda: False,
            "local_md5": lambda s: f"md5({len(s)})",
            "make_temp_relation": lambda base, suffix="__dbt_tmp": Relation(
                base.schema, base.identifier + suffix, "view"
            ),
            "load_relation": lambda relation: None,
            "ref": lambda name: Relation("intermediate", name),
            "api": _Api(),
            "compiled_code": "select 1 as id",
            "pre_hooks": [],
            "post_hooks": [],
        }
        for name in (
            "run_hooks",
            "apply_grants",
            "persist_docs",
            "should_revoke",
            "process_schema_changes",
            "create_table_as",
            "partition_cols",
            "spark__tblproperties_clause",
            "file_format_clause",
            "location_clause",
            "comment_clause",
            "spark__create_table_as",
            "spark__alter_relation_add_remove_columns",
            "default__alter_column_type",
            "incremental_validate_on_schema_change",
            "get_insert_overwrite_sql",
        ):
            context[name] = self._stub(name)
        context["incremental_validate_on_schema_change"] = self._stub(
            "incremental_validate_on_schema_change", lambda value, default="ignore": value
        )
        context["create_table_as"] = self._stub(
            "create_table_as",
            lambda temporary, relation, sql, language="sql": f"create {relation} as {sql}",
        )
        # dbt-core's get_merge_sql dispatches; floe's version is the one under test
        context["get_merge_sql"] = lambda target, source, unique_key, dest_columns=None, **kw: (
            self.find("floe__get_merge_sql")(target, source, unique_key, dest_columns, **kw)
        )
        context.update(overrides)
        self.context = context
        self.module = _template().make_module(vars=context)

    # --- what macros call -------------------------------------------------------
    def _statement(self, name: str | None = None, *args: Any, caller: Any = None, **_: Any):
        sql = caller() if caller is not None else ""
        self.statements.append((name or "", str(sql)))
        return ""

    def _run_query(self, sql: str) -> Table:
        self.queries.append(sql)
        for prefix, result in self.query_results:
            if normalize(sql).startswith(normalize(prefix)):
                return result
        return Table()

    def _stub(self, name: str, result: Callable[..., Any] | None = None) -> Callable[..., Any]:
        def stub(*args: Any, **kwargs: Any) -> Any:
            self.stubs.setdefault(name, []).append((args, kwargs))
            return result(*args, **kwargs) if result is not None else ""

        return stub

    # --- test API ----------------------------------------------------------------
    def find(self, name: str) -> Any:
        found = getattr(self.module, name, None)
        if found is None:
            found = self.context.get(name)
        return None if found is None else self._returning(found)

    @staticmethod
    def _returning(macro: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return macro(*args, **kwargs)
            except MacroReturn as returned:
                return returned.value

        return call

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """The value of macro `name` (its return(), else its rendered text)."""
        # dbt's materialization and test tags name their macros dbt_macro__<name>
        macro = getattr(self.module, name, None) or getattr(self.module, f"dbt_macro__{name}", None)
        if macro is None:
            raise KeyError(f"no macro {name} in {MACROS}")
        return self._returning(macro)(*args, **kwargs)

    def sql(self, name: str, *args: Any, **kwargs: Any) -> str:
        """The rendered text of macro `name`, normalized (case kept: literals matter)."""
        return normalize(str(self.call(name, *args, **kwargs)), lower=False)

    def configure(self, **values: Any) -> None:
        """The model's config (and `meta`)."""
        self.config.values.update(values)

    def context_set(self, **values: Any) -> None:
        """Replace names of the dbt context (is_incremental, execute, var, ...)."""
        self.context.update(values)
        self.module = _template().make_module(vars=self.context)

    def answer(self, prefix: str, rows: Iterable[tuple], columns: Sequence[str] = ()) -> None:
        """run_query of SQL starting with `prefix` returns these rows."""
        self.query_results.append((prefix, Table(list(rows), list(columns))))

    def statement(self, name: str, raw: bool = False) -> str:
        """The last SQL run as statement `name`, normalized (case kept) unless `raw`."""
        matches = [sql for stmt, sql in self.statements if stmt == name]
        assert matches, f"no statement {name!r}; ran {[s for s, _ in self.statements]}"
        return matches[-1] if raw else normalize(matches[-1], lower=False)


class _Modules:
    re = re
    datetime = datetime


class _Api:
    class Relation:
        @staticmethod
        def create(schema: str | None = None, identifier: str = "", **_: Any) -> Relation:
            return Relation(schema, identifier)


def assert_parses(sql: str) -> None:
    """The SQL parses as Spark SQL with the project's linter (sqlfluff, sparksql)."""
    import sqlfluff
    from sqlfluff.api.simple import APIParsingError

    try:
        sqlfluff.parse(sql, dialect="sparksql")
    except APIParsingError as exc:
        raise AssertionError(f"rendered SQL does not parse as Spark SQL:\n{sql}\n{exc}") from exc

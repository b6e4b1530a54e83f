"""Column lineage of one SQL query (Spark dialect), with sqlglot.

``query_lineage(sql, schema)`` answers, for every output column of a query, which columns
of which relations it is computed from and how (:data:`KINDS`), plus the columns that
only decide which rows are kept (filters, join keys, grouping). It resolves CTE chains,
derived tables, joins with aliases, ``union`` (by position), ``select *`` (from
``schema``), struct field access (``col.field``), ``explode`` and ``lateral view``,
window functions and scalar subqueries. sqlglot's ``qualify`` does the name resolution;
this module walks its scopes. A column it cannot resolve is reported as an unknown
reference, never guessed (docs/lineage.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

DIALECT = "spark"

# How an output column is computed from a referenced column, weakest first. Along a
# chain of CTEs the strongest step wins; ``identity`` becomes ``rename`` when the
# name changes. ``constant`` has no referenced column; ``unknown`` could not be resolved.
KINDS = (
    "identity",
    "provenance",
    "rename",
    "field",
    "cast",
    "expression",
    "explode",
    "window",
    "aggregate",
    "unknown",
)
INDIRECT_KINDS = ("filter", "join", "group_by")
ROWS = "*"  # a table-level reference: the rows of a relation, not one of its columns
_RANK = {kind: rank for rank, kind in enumerate(KINDS)}
_CASTS = (exp.Cast, exp.TryCast)
_EXPLODES = (exp.Explode, exp.Posexplode, exp.Inline)


class LineageParseError(ValueError):
    """The SQL could not be parsed or qualified; the message names the reason."""


@dataclass(frozen=True, order=True)
class Ref:
    """A column of a relation as the SQL names it (``schema.table``, lowercase)."""

    table: str
    column: str
    path: tuple[str, ...] = ()

    def __str__(self) -> str:
        return ".".join((self.table, self.column, *self.path))


@dataclass
class ColumnLineage:
    """One output column: where it comes from and how."""

    column: str
    kind: str
    refs: dict[Ref, str] = field(default_factory=dict)  # ref -> kind along its own path
    sql: str = ""
    unknown: list[str] = field(default_factory=list)  # unresolved references, as written


@dataclass
class QueryLineage:
    columns: dict[str, ColumnLineage]
    indirect: dict[Ref, str]  # columns that only filter, join or group -> INDIRECT_KINDS
    tables: set[str]
    unresolved_star: bool = False  # a `select *` over a relation of unknown columns


def stronger(a: str, b: str) -> str:
    return a if _RANK.get(a, 0) >= _RANK.get(b, 0) else b


def normalize_schema(
    columns_by_table: Mapping[str, Mapping[str, str] | Iterable[str]],
) -> dict[str, object]:
    """``{"schema.table": {col: type} | [col, ...]}`` as sqlglot's nested schema dict.

    Types sqlglot cannot read (engine-specific spellings) become ``string``: lineage
    needs names, not types.
    """
    nested: dict[str, Any] = {}
    for name, cols in columns_by_table.items():
        db, _, table = name.lower().rpartition(".")
        typed = cols.items() if isinstance(cols, Mapping) else ((c, "string") for c in cols)
        out: dict[str, str] = {}
        for col, typ in typed:
            out[str(col).lower()] = _safe_type(str(typ or "string"))
        nested.setdefault(db, {})[table] = out
    return nested


def _safe_type(text: str) -> str:
    try:
        exp.DataType.build(text, dialect=DIALECT)
    except (SqlglotError, ValueError):
        return "string"
    return text


def _table_name(table: exp.Table) -> str:
    parts = [p for p in (table.catalog, table.db, table.name) if p]
    # Spark's default catalog prefix (lake.schema.table) names the same relation.
    return ".".join(parts[-2:]).lower()


def parse(sql: str) -> exp.Expr:
    try:
        statements = [s for s in sqlglot.parse(sql, read=DIALECT) if s is not None]
    except SqlglotError as exc:
        raise LineageParseError(f"sqlglot cannot parse the SQL: {_first_line(exc)}") from exc
    if len(statements) != 1:
        raise LineageParseError(f"expected one statement, found {len(statements)}")
    return statements[0]


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def query_lineage(
    sql: str | exp.Expr,
    schema: Mapping[str, Mapping[str, str] | Iterable[str]] | None = None,
) -> QueryLineage:
    """Lineage of every output column of ``sql`` (a single ``select``, Spark SQL).

    ``schema`` maps ``schema.table`` to its columns (names, or names to types); it
    expands ``select *`` and tells columns from struct fields. Raises
    :class:`LineageParseError` if the SQL cannot be read.
    """
    tree = parse(sql) if isinstance(sql, str) else sql
    if not isinstance(tree, exp.Query):
        raise LineageParseError(f"not a query: {type(tree).__name__}")
    try:
        qualified = qualify(
            tree,
            schema=normalize_schema(schema or {}),
            dialect=DIALECT,
            validate_qualify_columns=False,
            quote_identifiers=False,
            identify=False,
        )
        root = build_scope(qualified)
    except SqlglotError as exc:
        raise LineageParseError(f"sqlglot cannot resolve the query: {_first_line(exc)}") from exc
    if root is None:
        raise LineageParseError("no select to trace")
    walker = _Walker()
    columns: dict[str, ColumnLineage] = {}
    names = _output_names(root)
    for index, name in enumerate(names):
        if name == "*":
            continue
        traced = walker.trace(root, index)
        kind = traced.kind
        refs = dict(traced.refs)
        if kind == "identity" or any(k == "identity" for k in refs.values()):
            refs = {r: _renamed(k, r, name) for r, k in refs.items()}
            kind = max(refs.values(), key=lambda k: _RANK[k]) if refs else kind
        columns[name] = ColumnLineage(name, kind, refs, traced.sql, traced.unknown)
    indirect = walker.indirect(root)
    tables = {_table_name(t) for s in root.traverse() for t in s.tables}
    return QueryLineage(columns, indirect, tables, "*" in names)


def _renamed(kind: str, ref: Ref, name: str) -> str:
    if kind != "identity":
        return kind
    return "identity" if not ref.path and ref.column.lower() == name.lower() else "rename"


def _output_names(scope: Scope) -> list[str]:
    expression = scope.expression
    while isinstance(expression, exp.SetOperation):
        expression = expression.this
    if isinstance(expression, exp.Subquery):
        expression = expression.unnest()
    return [str(n) for n in getattr(expression, "named_selects", [])]


@dataclass
class _Traced:
    kind: str
    refs: dict[Ref, str]
    sql: str
    unknown: list[str]


def _classify(node: exp.Expr) -> str:
    """The kind of one projection expression (alias removed)."""
    if isinstance(node, exp.Column):
        return "identity"
    if isinstance(node, exp.Dot) and isinstance(node.this, (exp.Column, exp.Dot)):
        return "field"
    if isinstance(node, _CASTS) and isinstance(node.this, (exp.Column, exp.Dot)):
        return "cast"
    if node.find(*_EXPLODES):
        return "explode"
    if any(not _inside_window(agg) for agg in node.find_all(exp.AggFunc)):
        return "aggregate"
    if node.find(exp.Window):
        return "window"
    return "expression"


def _inside_window(node: exp.Expr) -> bool:
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Window):
            return True
        if isinstance(parent, (exp.Select, exp.Subquery)):
            return False
        parent = parent.parent
    return False


def _struct_path(column: exp.Column) -> tuple[str, ...]:
    """Field names accessed on a struct column: ``t.customer.first_name`` -> (first_name,)."""
    path: list[str] = []
    node: exp.Expr = column
    while isinstance(node.parent, exp.Dot) and node.parent.this is node:
        node = node.parent
        path.append(str(node.expression.name))
    return tuple(path)


class _Walker:
    def __init__(self) -> None:
        self._memo: dict[tuple[int, int | str], _Traced] = {}

    # ------------------------------------------------------------------ projections
    def trace(self, scope: Scope, column: int | str) -> _Traced:
        key = (id(scope), column)
        if key not in self._memo:
            self._memo[key] = _Traced("unknown", {}, "", [f"cycle at {column}"])
            self._memo[key] = self._trace(scope, column)
        return self._memo[key]

    def _trace(self, scope: Scope, column: int | str) -> _Traced:
        expression = scope.expression
        if isinstance(expression, exp.SetOperation):
            index = column if isinstance(column, int) else _index(scope, column)
            if index is None:
                return _Traced("unknown", {}, "", [f"{column} (not in the union)"])
            merged = _Traced("identity", {}, "", [])
            for branch in scope.set_operation_scopes:
                part = self.trace(branch, index)
                merged.kind = stronger(merged.kind, part.kind)
                for ref, kind in part.refs.items():
                    merged.refs[ref] = stronger(merged.refs.get(ref, kind), kind)
                merged.unknown.extend(part.unknown)
                merged.sql = merged.sql or part.sql
            return merged
        if not isinstance(expression, exp.Select):
            return _Traced(
                "unknown", {}, "", [f"{column} (unsupported {type(expression).__name__})"]
            )
        projection = _projection(expression, column)
        if projection is None:
            return _Traced("unknown", {}, "", [f"{column} (not selected)"])
        body = projection.unalias() if isinstance(projection, exp.Alias) else projection
        local = _classify(body)
        traced = _Traced(local, {}, "" if local == "identity" else _readable(body), [])
        own = _own_columns(body, expression)
        for col in own:
            self._resolve(scope, col, local, traced, compose_sql=len(own) == 1)
        for sub in scope.subquery_scopes:
            if body.find(exp.Subquery, exp.Select) is not None and _contains(body, sub.expression):
                part = self.trace(sub, 0)
                kind = stronger(part.kind, "expression")
                for ref, ref_kind in part.refs.items():
                    traced.refs[ref] = stronger(
                        traced.refs.get(ref, kind), stronger(ref_kind, kind)
                    )
                traced.unknown.extend(part.unknown)
                traced.kind = stronger(traced.kind, kind)
        if not traced.refs and not traced.unknown:
            if local in ("aggregate", "window"):
                # count(*), row_number() over (): no column feeds it, the rows of the
                # tables it reads do (a table-level edge, column "*").
                for table in self._row_sources(scope):
                    traced.refs[Ref(table, ROWS)] = local
            else:
                traced.kind = "expression"  # a constant: no column feeds it
        return traced

    def _row_sources(self, scope: Scope) -> set[str]:
        """The tables whose rows a scope reads (through CTEs, subqueries and unions)."""
        tables: set[str] = set()
        for name, source in scope.sources.items():
            if isinstance(source, exp.Table):
                tables.add(_table_name(source))
            elif source.is_cte and str(name).startswith("__dbt__cte__"):
                tables.add(str(name).lower())
            elif isinstance(source, Scope):
                branches = source.set_operation_scopes or [source]
                for branch in branches:
                    tables |= self._row_sources(branch)
        return tables

    def _resolve(
        self, scope: Scope, col: exp.Column, local: str, traced: _Traced, compose_sql: bool = True
    ) -> None:
        source = scope.sources.get(col.table) if col.table else None
        path = _struct_path(col)
        if source is None:
            traced.unknown.append(col.sql(dialect=DIALECT))
            traced.kind = stronger(traced.kind, "unknown")
            return
        if isinstance(source, exp.Table):
            ref = Ref(_table_name(source), col.name.lower(), path)
            traced.refs[ref] = stronger(traced.refs.get(ref, local), local)
            return
        if source.is_cte and str(col.table).startswith("__dbt__cte__"):
            # dbt inlines ephemeral models as CTEs: keep them as their own node.
            ref = Ref(str(col.table).lower(), col.name.lower(), path)
            traced.refs[ref] = stronger(traced.refs.get(ref, local), local)
            return
        inner = self._udtf(source, col.name) if source.is_udtf else self.trace(source, col.name)
        traced.unknown.extend(inner.unknown)
        if compose_sql and inner.sql and inner.sql not in traced.sql:
            traced.sql = f"{inner.sql} -> {traced.sql}" if traced.sql else inner.sql
        for ref, kind in inner.refs.items():
            combined = stronger(kind, local)
            if path and kind in ("identity", "rename", "field"):
                ref = Ref(ref.table, ref.column, ref.path + path)
            traced.refs[ref] = stronger(traced.refs.get(ref, combined), combined)
        traced.kind = stronger(traced.kind, inner.kind)

    def _udtf(self, scope: Scope, column: str) -> _Traced:
        """A column produced by ``lateral view explode(...)`` (or another table function)."""
        udtf = scope.expression
        function = udtf.this if isinstance(udtf, exp.Lateral) else udtf
        traced = _Traced("explode", {}, _readable(function), [])
        for col in function.find_all(exp.Column):
            self._resolve(scope, col, "explode", traced)
        traced.kind = stronger(traced.kind, "explode")
        del column  # every output of the function comes from all its arguments
        return traced

    # ------------------------------------------------------------------ indirect
    def indirect(self, root: Scope) -> dict[Ref, str]:
        """Columns that decide rows (where, join on, group by, having, qualify), resolved
        to the query's tables."""
        found: dict[Ref, str] = {}
        for scope in root.traverse():
            select = scope.expression
            if not isinstance(select, exp.Select) or _in_dbt_cte(select):
                continue  # an ephemeral model's own filters are its node's, not this one's
            clauses: list[tuple[str, exp.Expr | None]] = [
                ("filter", select.args.get("where")),
                ("filter", select.args.get("having")),
                ("filter", select.args.get("qualify")),
                ("group_by", select.args.get("group")),
            ]
            clauses += [("join", join.args.get("on")) for join in select.args.get("joins") or []]
            for kind, clause in clauses:
                if clause is None:
                    continue
                for col in clause.find_all(exp.Column):
                    owner = _owning_select(col)
                    if owner is not select:
                        continue  # a subquery's own columns: its scope handles them
                    traced = _Traced(kind, {}, "", [])
                    self._resolve(scope, col, "identity", traced)
                    for ref in traced.refs:
                        plain = Ref(ref.table, ref.column)
                        found.setdefault(plain, kind)
        return found


def _in_dbt_cte(node: exp.Expr) -> bool:
    cte = node.find_ancestor(exp.CTE)
    while cte is not None:
        if str(cte.alias).lower().startswith("__dbt__cte__"):
            return True
        cte = cte.find_ancestor(exp.CTE)
    return False


def _index(scope: Scope, name: str) -> int | None:
    names = [n.lower() for n in _output_names(scope)]
    return names.index(name.lower()) if name.lower() in names else None


def _projection(select: exp.Select, column: int | str) -> exp.Expr | None:
    projections = select.expressions
    if isinstance(column, int):
        return projections[column] if column < len(projections) else None
    wanted = column.lower()
    for projection in projections:
        if projection.alias_or_name.lower() == wanted:
            return projection
    return None


def _readable(node: exp.Expr) -> str:
    """SQL of an expression without table qualifiers (``upper(trim(status))``)."""

    def strip(n: exp.Expr) -> exp.Expr:
        if isinstance(n, exp.Column) and n.table:
            return exp.column(n.name)
        return n

    return node.copy().transform(strip).sql(dialect=DIALECT)


def _owning_select(node: exp.Expr) -> exp.Expr | None:
    parent = node.parent
    while parent is not None and not isinstance(parent, exp.Select):
        parent = parent.parent
    return parent


def _own_columns(body: exp.Expr, select: exp.Select) -> list[exp.Column]:
    """Columns of a projection that belong to its own select (not to a subquery's)."""
    return [c for c in body.find_all(exp.Column) if _owning_select(c) is select]


def _contains(body: exp.Expr, node: exp.Expr) -> bool:
    return any(n is node for n in body.walk())

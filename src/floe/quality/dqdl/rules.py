"""DQDL rules mapped onto floe's analyzers, so a table's rules share one aggregation.

Every static rule becomes one or more *requirements*: a metric (an analyzer of the
one-pass engine, or an *external* metric computed outside it: schema facts, CustomSql,
rules reading a second dataset) and a DQDL condition on its value. A rule holds when
all its requirements hold; composite rules combine their parts with and/or.

Row-level rules (ColumnValues, ColumnLength, ColumnDataType, DataFreshness) measure
the share of rows whose value satisfies the condition — one :class:`RowCompliance`
aggregate each in the shared pass — and hold when that share satisfies
``with threshold`` (default: every row, ``= 1.0``).

The support matrix is in docs/quality.md ("DQDL rulesets").
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from floe.quality.analyzers import (
    Analyzer,
    Completeness,
    Correlation,
    CountDistinct,
    Entropy,
    MaxLength,
    Mean,
    Size,
    StandardDeviation,
    Sum,
    Uniqueness,
    UniqueValueRatio,
    regex_find,
    text_length,
)
from floe.quality.dqdl.parser import Composite, Condition, Node, Rule, Value

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession


class DqdlUnsupportedError(ValueError):
    """A DQDL rule uses a rule type or form floe does not evaluate; the message names it."""


ONE = Condition("=", (Value("number", number=1.0),))

# Spark types a ColumnDataType rule may name (DQDL's names, case-insensitive).
DATA_TYPES = {
    "boolean": "boolean",
    "date": "date",
    "timestamp": "timestamp",
    "integer": "int",
    "int": "int",
    "long": "bigint",
    "bigint": "bigint",
    "short": "smallint",
    "byte": "tinyint",
    "float": "float",
    "double": "double",
    "decimal": "decimal(38,18)",
    "string": "string",
}
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def quote_identifier(name: str) -> str:
    """`name` as a Spark SQL identifier (backticks doubled): never a way to inject SQL."""
    return "`" + name.replace("`", "``") + "`"


# ---------------------------------------------------------------------------- analyzers


@dataclass(frozen=True)
class RowCompliance(Analyzer):
    """Share of rows (matching ``where``) whose value satisfies a DQDL ``condition``.

    ``measure`` is what the condition reads: ``value`` (ColumnValues), ``length``
    (ColumnLength), ``age`` in seconds since now (DataFreshness) or ``type`` (the value
    cast to ``data_type``: ColumnDataType, where NULL values are not counted against it).
    Literals are Spark literals (bound), never SQL text.
    """

    name: ClassVar[str] = "dqdl_row_compliance"
    measure: str = "value"
    condition: Condition = ONE
    data_type: str = ""

    @property
    def argument(self) -> str | None:
        if self.measure == "type":
            return f"type {self.data_type}"
        return f"{self.measure} {self.condition.render()}"

    def aggregates(self, df: DataFrame) -> list[Column]:
        from pyspark.sql import functions as F

        return [self._hits(F.coalesce(self._passes(df), F.lit(False))), self._rows()]

    def finish(self, values: Sequence[Any]) -> float | None:
        return None if not values[1] else float(values[0]) / float(values[1])

    def _passes(self, df: DataFrame) -> Column:
        from pyspark.sql import functions as F

        value = self._col(df)
        if self.measure == "type":
            cast = F.expr(
                f"try_cast(cast({quote_identifier(self.columns[0])} as string) "
                f"as {DATA_TYPES[self.data_type]})"
            )
            return value.isNull() | cast.isNotNull()
        if self.measure == "length":
            value = text_length(df.sparkSession, value.cast("string"))
        elif self.measure == "age":
            value = F.unix_timestamp(F.current_timestamp()) - F.unix_timestamp(
                value.cast("timestamp")
            )
        return row_predicate(df.sparkSession, value, self.condition)


def row_predicate(spark: SparkSession, value: Column, condition: Condition) -> Column:
    """The condition on each row's ``value``: NULL rows fail, except under ``!=`` and
    ``not in`` (DQDL's null behaviour), and ``= NULL`` / ``in [NULL, EMPTY, ...]``."""
    from pyspark.sql import functions as F

    op, negated = condition.op, condition.negated
    if op == "in":
        plain = [_literal(v) for v in condition.values if v.kind != "keyword"]
        keywords = {v.text for v in condition.values if v.kind == "keyword"}
        hit = value.isin(plain) if plain else F.lit(False)
        if "null" in keywords:
            hit = hit | value.isNull()
        if "empty" in keywords:
            hit = hit | (value.cast("string") == F.lit(""))
        if "whitespaces_only" in keywords:
            text = value.cast("string")
            hit = hit | ((F.length(text) > 0) & (F.trim(text) == F.lit("")))
        hit = F.coalesce(hit, F.lit(False))
        if negated:
            # not in: NULL passes unless NULL is in the list
            return ~hit
        return hit
    if op == "matches":
        # DQDL's matches is a whole-value match (Java's String.matches), rlike a search.
        pattern = f"^(?:{condition.values[0].text})$"
        hit = regex_find(spark, value.cast("string"), pattern)
        return ~hit if negated else hit
    if op == "between":
        low, high = (_literal(v) for v in condition.values)
        # DQDL's between excludes its bounds (use >= and <= for a closed range).
        hit = (value > low) & (value < high)
        return (value <= low) | (value >= high) if negated else hit
    operand = condition.values[0]
    if operand.kind == "keyword" and operand.text == "null":
        return value.isNull() if op == "=" else value.isNotNull()
    right = _literal(operand)
    if op == "!=":
        return value.isNull() | (value != right)
    return {
        "=": value == right,
        ">": value > right,
        ">=": value >= right,
        "<": value < right,
        "<=": value <= right,
    }[op]


def _literal(value: Value) -> Column:
    from pyspark.sql import functions as F

    resolved = static_value(value)
    if isinstance(resolved, dt.timedelta):
        return F.lit(resolved.total_seconds())
    return F.lit(resolved)


def static_value(value: Value) -> Any:
    """A value with no history in it: a number, text, a duration or a point in time."""
    if value.kind == "number":
        return value.number
    if value.kind == "string":
        return value.text
    if value.kind == "duration":
        return dt.timedelta(seconds=value.number)
    if value.kind == "now":
        return dt.datetime.now()
    if value.kind == "keyword":
        return {"empty": "", "whitespaces_only": " "}.get(value.text)
    if value.kind == "dynamic":
        raise DqdlUnsupportedError(
            f"{value.render()}: dynamic values compare a rule's metric, not row values"
        )
    assert value.left is not None and value.right is not None
    return _arith(value.text, static_value(value.left), static_value(value.right))


def _arith(op: str, left: Any, right: Any) -> Any:
    if op == "+":
        return left + right
    if op == "-":
        return left - right
    if op == "*":
        return left * right
    if right == 0:
        raise DqdlUnsupportedError("division by zero in a DQDL value")
    return left / right


# ---------------------------------------------------------------------------- external metrics


@dataclass(frozen=True)
class External(Analyzer):
    """A metric computed outside the shared pass (schema facts, SQL, a second dataset).

    It is recorded in dq.metrics like any other; ``compute(context)`` returns its value.
    """

    name: ClassVar[str] = "dqdl_external"
    kind: ClassVar[str] = "external"
    metric: str = ""
    detail: str = ""

    @property
    def argument(self) -> str | None:
        return f"{self.metric} {self.detail}".strip()

    def key(self) -> tuple[str, tuple[str, ...], str | None, str | None]:
        return (self.name, self.columns, self.argument, self.where)


# ---------------------------------------------------------------------------- requirements


@dataclass(frozen=True)
class Requirement:
    """One metric and the condition its value must meet (``anomaly``: DetectAnomalies)."""

    analyzer: Analyzer
    condition: Condition | None
    anomaly: bool = False


@dataclass(frozen=True)
class CompiledRule:
    rule: Rule
    requirements: tuple[Requirement, ...]


@dataclass(frozen=True)
class CompiledComposite:
    op: str
    parts: tuple[Compiled, ...]
    text: str


Compiled = CompiledRule | CompiledComposite


def requirements(node: Compiled) -> list[Requirement]:
    if isinstance(node, CompiledRule):
        return list(node.requirements)
    return [r for part in node.parts for r in requirements(part)]


# ---------------------------------------------------------------------------- compiler


@dataclass
class Compiler:
    """Maps parsed rules onto analyzers; ``datasets`` maps DQDL aliases (``reference``)
    to tables of the project for the rules that read a second dataset."""

    datasets: Mapping[str, str] = field(default_factory=dict)

    def compile(self, node: Node) -> Compiled:
        if isinstance(node, Composite):
            return CompiledComposite(node.op, tuple(self.compile(p) for p in node.parts), node.text)
        handler = _HANDLERS.get(node.rule_type)
        if handler is None:
            known = ", ".join(sorted(_HANDLERS))
            hint = (
                " (rule type names are case-sensitive)"
                if node.rule_type.lower() in {k.lower() for k in _HANDLERS}
                else ""
            )
            raise DqdlUnsupportedError(
                f"rule `{node.text}`: rule type {node.rule_type!r} is not supported by floe"
                f"{hint} (supported: {known}; docs/quality.md has the matrix)"
            )
        try:
            reqs = handler(self, node)
        except DqdlUnsupportedError as exc:
            raise DqdlUnsupportedError(f"rule `{node.text}`: {exc}") from exc
        return CompiledRule(node, tuple(reqs))

    def alias(self, name: str) -> str:
        table = self.datasets.get(name)
        if table is None:
            known = ", ".join(sorted(self.datasets)) or "none declared"
            raise DqdlUnsupportedError(
                f"dataset alias {name!r} is not declared (declared: {known}); map it to a "
                "project table under `dqdl_datasets:`"
            )
        return table


def _params(rule: Rule, n: int | tuple[int, int], what: str) -> tuple[str, ...]:
    low, high = (n, n) if isinstance(n, int) else n
    if not low <= len(rule.params) <= high:
        raise DqdlUnsupportedError(f"{rule.rule_type} takes {what}, got {len(rule.params)}")
    return rule.params


def _needs(rule: Rule) -> Condition:
    if rule.condition is None:
        raise DqdlUnsupportedError(f"{rule.rule_type} needs a condition, e.g. `> 0.9`")
    return rule.condition


def _no_condition(rule: Rule) -> None:
    if rule.condition is not None:
        raise DqdlUnsupportedError(f"{rule.rule_type} takes no condition")


def _no_threshold(rule: Rule) -> None:
    if rule.threshold is not None:
        raise DqdlUnsupportedError(f"{rule.rule_type} takes no `with threshold`")


def _metric_rule(cls: type[Analyzer], columns: int) -> Callable[[Compiler, Rule], list]:
    def handle(_: Compiler, rule: Rule) -> list[Requirement]:
        names = _params(rule, columns, f"{columns} column name(s)")
        _no_threshold(rule)
        return [Requirement(cls(columns=names, where=rule.where), _needs(rule))]

    return handle


def _row_count(_: Compiler, rule: Rule) -> list[Requirement]:
    # Glue's own examples write `RowCount "id" > 100`: a column there counts nothing.
    _no_threshold(rule)
    return [Requirement(Size(where=rule.where), _needs(rule))]


def _is_complete(_: Compiler, rule: Rule) -> list[Requirement]:
    (column,) = _params(rule, 1, "one column name")
    _no_condition(rule)
    return [Requirement(Completeness((column,), rule.where), ONE)]


def _is_unique(_: Compiler, rule: Rule) -> list[Requirement]:
    (column,) = _params(rule, 1, "one column name")
    _no_condition(rule)
    return [Requirement(Uniqueness((column,), rule.where), ONE)]


def _is_primary_key(_: Compiler, rule: Rule) -> list[Requirement]:
    if not rule.params:
        raise DqdlUnsupportedError("IsPrimaryKey needs at least one column name")
    _no_condition(rule)
    complete = [Requirement(Completeness((c,), rule.where), ONE) for c in rule.params]
    return [*complete, Requirement(Uniqueness(tuple(rule.params), rule.where), ONE)]


def _row_level(measure: str) -> Callable[[Compiler, Rule], list[Requirement]]:
    def handle(_: Compiler, rule: Rule) -> list[Requirement]:
        (column,) = _params(rule, 1, "one column name")
        condition = _needs(rule)
        if condition.is_dynamic:
            raise DqdlUnsupportedError(f"{rule.rule_type} compares row values: no last(n)")
        if measure == "age" and not all(v.kind in ("duration", "number") for v in condition.values):
            raise DqdlUnsupportedError("DataFreshness takes durations, e.g. `<= 24 hours`")
        if condition.op == "matches":
            try:
                re.compile(condition.values[0].text)
            except re.error as exc:
                raise DqdlUnsupportedError(f"invalid regular expression: {exc}") from exc
        analyzer = RowCompliance((column,), rule.where, measure=measure, condition=condition)
        return [Requirement(analyzer, rule.threshold or ONE)]

    return handle


def _column_data_type(_: Compiler, rule: Rule) -> list[Requirement]:
    (column,) = _params(rule, 1, "one column name")
    condition = _needs(rule)
    if condition.op not in ("=", "in") or condition.negated:
        raise DqdlUnsupportedError('ColumnDataType takes `= "TYPE"` or `in ["TYPE", ...]`')
    kinds = []
    for value in condition.values:
        name = value.text.lower() if value.kind == "string" else ""
        if name not in DATA_TYPES:
            raise DqdlUnsupportedError(
                f"ColumnDataType: unknown type {value.render()} "
                f"(known: {', '.join(sorted(DATA_TYPES))})"
            )
        kinds.append(name)
    if len(kinds) != 1:
        raise DqdlUnsupportedError("ColumnDataType with several types is not supported yet")
    analyzer = RowCompliance(
        (column,), rule.where, measure="type", condition=ONE, data_type=kinds[0]
    )
    return [Requirement(analyzer, rule.threshold or ONE)]


def _column_count(_: Compiler, rule: Rule) -> list[Requirement]:
    _params(rule, 0, "no parameters")
    return [Requirement(External(metric="column_count"), _needs(rule))]


def _column_exists(_: Compiler, rule: Rule) -> list[Requirement]:
    (column,) = _params(rule, 1, "one column name")
    _no_condition(rule)
    return [Requirement(External((column,), metric="column_exists"), ONE)]


def _column_names_match_pattern(_: Compiler, rule: Rule) -> list[Requirement]:
    (pattern,) = _params(rule, 1, "one regular expression")
    try:
        re.compile(pattern)
    except re.error as exc:
        raise DqdlUnsupportedError(f"invalid regular expression: {exc}") from exc
    return [
        Requirement(External(metric="column_names_match", detail=pattern), rule.condition or ONE)
    ]


def _custom_sql(_: Compiler, rule: Rule) -> list[Requirement]:
    (sql,) = _params(rule, 1, "one SQL statement")
    if rule.condition is not None:
        if rule.threshold is not None:
            raise DqdlUnsupportedError("CustomSql takes a condition or `with threshold`, not both")
        return [
            Requirement(External(where=rule.where, metric="custom_sql", detail=sql), rule.condition)
        ]
    # Row-level form: the statement selects the rows that pass.
    return [
        Requirement(
            External(where=rule.where, metric="custom_sql_rows", detail=sql),
            rule.threshold or ONE,
        )
    ]


_REF_COLUMNS = re.compile(
    r"^(?P<alias>[A-Za-z_][A-Za-z0-9_]*)\.(?:\{(?P<many>[^}]*)\}|(?P<one>.+))$"
)


def _column_list(text: str) -> tuple[str, ...]:
    columns = tuple(c.strip() for c in text.split(",") if c.strip())
    if not columns:
        raise DqdlUnsupportedError(f"no column names in {text!r}")
    return columns


def _referential_integrity(compiler: Compiler, rule: Rule) -> list[Requirement]:
    primary, reference = _params(rule, 2, 'two parameters: "col" "alias.col"')
    match = _REF_COLUMNS.match(reference)
    if match is None:
        raise DqdlUnsupportedError(
            f'expected "alias.column" or "alias.{{c1,c2}}" as the reference, got {reference!r}'
        )
    ref_columns = _column_list(match["many"] or match["one"])
    columns = _column_list(primary)
    if len(ref_columns) != len(columns):
        raise DqdlUnsupportedError("as many reference columns as primary columns, please")
    table = compiler.alias(match["alias"])
    detail = f"{','.join(columns)} -> {table}({','.join(ref_columns)})"
    return [
        Requirement(
            External(columns, rule.where, metric="referential_integrity", detail=detail),
            rule.condition or ONE,
        )
    ]


def _mapping(text: str) -> tuple[tuple[str, str], ...]:
    pairs = []
    for part in _column_list(text):
        left, _, right = part.partition("->")
        pairs.append((left.strip(), (right or left).strip()))
    return tuple(pairs)


def _dataset_match(compiler: Compiler, rule: Rule) -> list[Requirement]:
    params = _params(rule, (2, 3), '"alias" "keys" ["values"]')
    table = compiler.alias(params[0])
    keys = _mapping(params[1])
    values = _mapping(params[2]) if len(params) == 3 else ()
    detail = repr((table, keys, values))
    return [
        Requirement(External(where=rule.where, metric="dataset_match", detail=detail), _needs(rule))
    ]


_AGGREGATE = re.compile(
    r"^\s*(?P<fn>sum|avg|mean|min|max|count)\s*\(\s*(?:(?P<alias>[A-Za-z_][A-Za-z0-9_]*)\.)?"
    r"(?P<column>[A-Za-z_][A-Za-z0-9_]*|\*)\s*\)\s*$",
    re.IGNORECASE,
)


def _aggregate(compiler: Compiler, text: str) -> tuple[str, str, str | None]:
    match = _AGGREGATE.match(text)
    if match is None:
        raise DqdlUnsupportedError(
            f"aggregate {text!r}: expected sum|avg|min|max|count(column) or (alias.column)"
        )
    table = compiler.alias(match["alias"]) if match["alias"] else None
    fn = match["fn"].lower()
    return ("avg" if fn == "mean" else fn), match["column"], table


def _aggregate_match(compiler: Compiler, rule: Rule) -> list[Requirement]:
    first, second = _params(rule, 2, "two aggregates")
    detail = repr((_aggregate(compiler, first), _aggregate(compiler, second)))
    return [
        Requirement(
            External(where=rule.where, metric="aggregate_match", detail=detail), _needs(rule)
        )
    ]


def _schema_match(compiler: Compiler, rule: Rule) -> list[Requirement]:
    (alias,) = _params(rule, 1, "one dataset alias")
    table = compiler.alias(alias)
    return [Requirement(External(metric="schema_match", detail=table), rule.condition or ONE)]


def _row_count_match(compiler: Compiler, rule: Rule) -> list[Requirement]:
    (alias,) = _params(rule, 1, "one dataset alias")
    table = compiler.alias(alias)
    return [Requirement(External(metric="row_count_match", detail=table), _needs(rule))]


_ANOMALY_RULES: dict[str, tuple[type[Analyzer], int]] = {
    "RowCount": (Size, 0),
    "Completeness": (Completeness, 1),
    "Uniqueness": (Uniqueness, 1),
    "Mean": (Mean, 1),
    "Sum": (Sum, 1),
    "StandardDeviation": (StandardDeviation, 1),
    "Entropy": (Entropy, 1),
    "DistinctValuesCount": (CountDistinct, 1),
    "UniqueValueRatio": (UniqueValueRatio, 1),
    "ColumnCorrelation": (Correlation, 2),
    "ColumnLength": (MaxLength, 1),
}


def _detect_anomalies(_: Compiler, rule: Rule) -> list[Requirement]:
    if not rule.params:
        raise DqdlUnsupportedError('DetectAnomalies needs a rule name, e.g. "RowCount"')
    name, *columns = rule.params
    entry = _ANOMALY_RULES.get(name)
    if entry is None:
        raise DqdlUnsupportedError(
            f"DetectAnomalies of {name!r} is not supported yet "
            f"(supported: {', '.join(sorted(_ANOMALY_RULES))})"
        )
    cls, arity = entry
    if len(columns) != arity:
        raise DqdlUnsupportedError(f"DetectAnomalies {name!r} takes {arity} column name(s)")
    _no_condition(rule)
    analyzer = cls(where=rule.where) if arity == 0 else cls(tuple(columns), rule.where)
    return [Requirement(analyzer, None, anomaly=True)]


_HANDLERS: dict[str, Callable[[Compiler, Rule], list[Requirement]]] = {
    "RowCount": _row_count,
    "IsComplete": _is_complete,
    "Completeness": _metric_rule(Completeness, 1),
    "IsUnique": _is_unique,
    "Uniqueness": _metric_rule(Uniqueness, 1),
    "UniqueValueRatio": _metric_rule(UniqueValueRatio, 1),
    "IsPrimaryKey": _is_primary_key,
    "ColumnValues": _row_level("value"),
    "ColumnLength": _row_level("length"),
    "DataFreshness": _row_level("age"),
    "ColumnDataType": _column_data_type,
    "ColumnCount": _column_count,
    "ColumnExists": _column_exists,
    "ColumnNamesMatchPattern": _column_names_match_pattern,
    "DistinctValuesCount": _metric_rule(CountDistinct, 1),
    "Entropy": _metric_rule(Entropy, 1),
    "Mean": _metric_rule(Mean, 1),
    "Sum": _metric_rule(Sum, 1),
    "StandardDeviation": _metric_rule(StandardDeviation, 1),
    "ColumnCorrelation": _metric_rule(Correlation, 2),
    "CustomSql": _custom_sql,
    "ReferentialIntegrity": _referential_integrity,
    "DatasetMatch": _dataset_match,
    "AggregateMatch": _aggregate_match,
    "SchemaMatch": _schema_match,
    "RowCountMatch": _row_count_match,
    "DetectAnomalies": _detect_anomalies,
}
SUPPORTED_RULE_TYPES = tuple(sorted(_HANDLERS))


# ---------------------------------------------------------------------------- judging


def metric_holds(condition: Condition, actual: float | None, history: Sequence[float]) -> str:
    """``pass`` / ``fail`` of a metric against a condition; ``skip`` when a dynamic value
    has no history yet (a new ruleset's first run is not a failure)."""
    if actual is None or (isinstance(actual, float) and math.isnan(actual)):
        return "fail"
    try:
        operands = [_resolve(v, history) for v in condition.values]
    except _NoHistory:
        return "skip"
    op = condition.op
    if op == "between":
        low, high = operands
        hit = low < actual < high
        return _status(not hit if condition.negated else hit)
    if op == "in":
        hit = any(actual == v for v in operands)
        return _status(not hit if condition.negated else hit)
    if op == "matches":
        raise DqdlUnsupportedError("matches applies to row values (ColumnValues)")
    right = operands[0]
    return _status(
        {
            "=": actual == right,
            "!=": actual != right,
            ">": actual > right,
            ">=": actual >= right,
            "<": actual < right,
            "<=": actual <= right,
        }[op]
    )


def _status(ok: bool) -> str:
    return "pass" if ok else "fail"


class _NoHistory(Exception):
    pass


def _resolve(value: Value, history: Sequence[float]) -> float:
    if value.kind == "number":
        return value.number
    if value.kind == "duration":
        return value.number
    if value.kind == "dynamic":
        window = [h for h in history[-int(value.number) :] if h is not None]
        if not window:
            raise _NoHistory
        if value.text == "avg":
            return sum(window) / len(window)
        if value.text == "min":
            return min(window)
        if value.text == "max":
            return max(window)
        mean = sum(window) / len(window)
        return math.sqrt(sum((h - mean) ** 2 for h in window) / len(window))
    if value.kind == "binary":
        assert value.left is not None and value.right is not None
        return float(
            _arith(value.text, _resolve(value.left, history), _resolve(value.right, history))
        )
    raise DqdlUnsupportedError(f"{value.render()} cannot be compared with a metric")

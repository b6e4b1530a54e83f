"""Checks: a small grammar for constraints on metrics, parsed without ever evaluating it.

Checks are declared next to a model, in its YAML under `meta: floe_checks:` (a list):

    meta:
      floe_checks:
        - size > 0                                   # a bare string: severity error
        - check: completeness(email_id) >= 0.99
          severity: warn                             # error (default) | warn
        - check: is_unique(customer_id)
          where: "load_kind = 'full'"                # optional SQL predicate on the rows
        - check: is_contained_in(country, ['US', 'DE'])
        - check: 0 <= mean(amount) <= 100            # chained comparisons are ranges
        - anomaly: {metric: size, strategy: relative_rate_of_change, max_increase: 2.0}

Grammar of `check` (a subset of Python expression syntax, parsed with `ast`, never eval'd):

    check      := metric (op number)+ | number op metric (op number)* | shorthand
    metric     := name | name "(" arg ("," arg)* ")"
    arg        := column | 'string' | number | [literal, ...]
    column     := identifier | 'quoted name'   (quote names that are not identifiers)
    op         := >= | > | <= | < | == | !=
    shorthand  := is_complete(c) | is_unique(c, ...) | is_contained_in(c, [v, ...])
                | is_non_negative(c) | has_pattern(c, 'regex') | has_data_type(c, kind)

Metric names are the analyzers' (`floe.quality.analyzers.ANALYZERS`): size, completeness,
uniqueness, distinctness, unique_value_ratio, approx_count_distinct, minimum, maximum,
mean, standard_deviation, sum, approx_quantile(c, q), max_length, pattern_match(c, 're'),
compliance('sql predicate'), contained_in(c, [..]), data_type(c, integral|fractional|
boolean|string), count_distinct, entropy, correlation(a, b); aliases min, max, avg, stddev.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from floe.quality.analyzers import (
    ANALYZERS,
    Analyzer,
    AnalyzerError,
    ApproxQuantile,
    Compliance,
    ContainedIn,
    DataType,
    PatternMatch,
)

SEVERITIES = ("error", "warn")
ALIASES = {
    "min": "minimum",
    "max": "maximum",
    "avg": "mean",
    "stddev": "standard_deviation",
    "approx_distinct": "approx_count_distinct",
}
_OPS: dict[type, tuple[str, Callable[[float, float], bool]]] = {
    ast.GtE: (">=", operator.ge),
    ast.Gt: (">", operator.gt),
    ast.LtE: ("<=", operator.le),
    ast.Lt: ("<", operator.lt),
    ast.Eq: ("==", operator.eq),
    ast.NotEq: ("!=", operator.ne),
}
_FLIP = {">=": "<=", ">": "<", "<=": ">=", "<": ">", "==": "==", "!=": "!="}
_TEST = {sym: fn for sym, fn in _OPS.values()}
_VERB = {"pass": "passed", "fail": "failed", "skip": "skipped"}


class CheckSyntaxError(ValueError):
    """A check in YAML does not follow the grammar (see this module's docstring)."""


@dataclass(frozen=True)
class AnomalySpec:
    """`anomaly:` — compare the metric with its own history in dq.metrics."""

    strategy: str
    params: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """One declared check: an analyzer plus either bounds or an anomaly strategy."""

    text: str
    analyzer: Analyzer
    severity: str = "error"
    bounds: tuple[tuple[str, float], ...] = ()
    anomaly: AnomalySpec | None = None

    @property
    def expected(self) -> str:
        if self.anomaly is not None:
            params = ", ".join(f"{k}={v}" for k, v in sorted(self.anomaly.params.items()))
            return f"{self.anomaly.strategy}({params})"
        return " and ".join(f"{op} {_fmt(bound)}" for op, bound in self.bounds)

    def holds(self, value: float | None) -> bool:
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return False
        return all(_TEST[op](value, bound) for op, bound in self.bounds)


@dataclass(frozen=True)
class CheckResult:
    model: str
    table: str
    check: str
    severity: str
    status: str  # "pass" | "fail" | "skip" (anomaly without enough history)
    expected: str
    actual: float | None
    message: str

    @property
    def failed(self) -> bool:
        return self.status == "fail"


def _fmt(value: float | None) -> str:
    if value is None:
        return "undefined"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


# ---------------------------------------------------------------------------- parsing


def parse_checks(specs: Iterable[Any] | None) -> list[Check]:
    """Checks from the YAML list under `floe_checks` (strings or mappings)."""
    checks = []
    for i, spec in enumerate(specs or []):
        try:
            checks.append(parse_check(spec))
        except (CheckSyntaxError, AnalyzerError) as exc:
            raise CheckSyntaxError(f"floe_checks[{i}]: {exc}") from exc
    return checks


def parse_check(spec: Any) -> Check:
    if isinstance(spec, str):
        spec = {"check": spec}
    if not isinstance(spec, Mapping):
        raise CheckSyntaxError(f"expected a string or a mapping, got {spec!r}")
    known = {"check", "anomaly", "severity", "where", "name"}
    unknown = set(spec) - known
    if unknown:
        raise CheckSyntaxError(f"unknown keys {sorted(unknown)} (known: {sorted(known)})")
    severity = str(spec.get("severity", "error")).lower()
    if severity not in SEVERITIES:
        raise CheckSyntaxError(f"severity {severity!r} is not one of {SEVERITIES}")
    where = spec.get("where")
    if ("check" in spec) == ("anomaly" in spec):
        raise CheckSyntaxError("give exactly one of `check:` or `anomaly:`")
    if "check" in spec:
        text = str(spec["check"]).strip()
        analyzer, bounds = parse_expression(text, where)
        label = spec.get("name") or (f"{text} where {where}" if where else text)
        return Check(text=label, analyzer=analyzer, severity=severity, bounds=bounds)
    anomaly = spec["anomaly"]
    if not isinstance(anomaly, Mapping) or "metric" not in anomaly:
        raise CheckSyntaxError("anomaly: needs a mapping with `metric` and `strategy`")
    from floe.quality.anomaly import STRATEGIES

    strategy = str(anomaly.get("strategy", "relative_rate_of_change"))
    if strategy not in STRATEGIES:
        raise CheckSyntaxError(f"anomaly strategy {strategy!r} is not one of {sorted(STRATEGIES)}")
    params = {k: v for k, v in anomaly.items() if k not in ("metric", "strategy")}
    try:
        STRATEGIES[strategy](**params)  # validate parameters now, not at run time
    except (TypeError, ValueError) as exc:
        raise CheckSyntaxError(f"anomaly {strategy}: {exc}") from exc
    node = _parse(str(anomaly["metric"]))
    analyzer = _metric(node, where)
    label = spec.get("name") or f"anomaly {strategy} on {analyzer.describe()}"
    return Check(
        text=label,
        analyzer=analyzer,
        severity=severity,
        anomaly=AnomalySpec(strategy=strategy, params=params),
    )


def _parse(text: str) -> ast.expr:
    try:
        return ast.parse(text, mode="eval").body
    except SyntaxError as exc:
        raise CheckSyntaxError(
            f"cannot parse {text!r}: {exc.msg} (quote column names that are not identifiers)"
        ) from exc


def parse_expression(
    text: str, where: str | None = None
) -> tuple[Analyzer, tuple[tuple[str, float], ...]]:
    """`completeness(x) >= 0.99` -> (Completeness(('x',)), ((">=", 0.99),))."""
    node = _parse(text)
    if isinstance(node, ast.Call) and (shorthand := SHORTHANDS.get(_name(node.func) or "")):
        return shorthand(node, where)
    if not isinstance(node, ast.Compare):
        raise CheckSyntaxError(f"{text!r}: expected `metric op number` or a shorthand")
    operands = [node.left, *node.comparators]
    metric_at = [i for i, o in enumerate(operands) if not _is_number(o)]
    if len(metric_at) != 1:
        raise CheckSyntaxError(f"{text!r}: compare exactly one metric with numbers")
    m = metric_at[0]
    analyzer = _metric(operands[m], where)
    bounds = []
    for i, op_node in enumerate(node.ops):
        sym = _OPS.get(type(op_node), (None, None))[0]
        if sym is None:
            raise CheckSyntaxError(f"{text!r}: operator not allowed (use >= > <= < == !=)")
        left, right = i, i + 1
        if left == m:
            bounds.append((sym, _number(operands[right])))
        elif right == m:
            bounds.append((_FLIP[sym], _number(operands[left])))
        else:
            raise CheckSyntaxError(f"{text!r}: every comparison must involve the metric")
    return analyzer, tuple(bounds)


def _name(node: ast.expr) -> str | None:
    return node.id if isinstance(node, ast.Name) else None


def _is_number(node: ast.expr) -> bool:
    try:
        _number(node)
    except CheckSyntaxError:
        return False
    return True


def _number(node: ast.expr) -> float:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        value = _number(node.operand)
        return -value if isinstance(node.op, ast.USub) else value
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, (int, float))
        and not isinstance(node.value, bool)
    ):
        return float(node.value)
    raise CheckSyntaxError(f"expected a number, got {ast.unparse(node)!r}")


def _literal(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant) and isinstance(node.value, (str, int, float, bool)):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return _number(node)
    raise CheckSyntaxError(f"expected a literal, got {ast.unparse(node)!r}")


def _column(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    raise CheckSyntaxError(f"expected a column name, got {ast.unparse(node)!r}")


def _string(node: ast.expr, what: str) -> str:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return node.id
    raise CheckSyntaxError(f"expected {what} as a string, got {ast.unparse(node)!r}")


def _values(node: ast.expr) -> tuple[Any, ...]:
    if not isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        raise CheckSyntaxError(f"expected a list of values, got {ast.unparse(node)!r}")
    return tuple(_literal(e) for e in node.elts)


def _metric(node: ast.expr, where: str | None) -> Analyzer:
    """An analyzer from `name` or `name(args)`."""
    if isinstance(node, ast.Name):
        name, args = node.id, []
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        name, args = node.func.id, list(node.args)
    else:
        raise CheckSyntaxError(
            f"expected a metric like completeness(col), got {ast.unparse(node)!r}"
        )
    name = ALIASES.get(name, name)
    cls = ANALYZERS.get(name)
    if cls is None:
        raise CheckSyntaxError(f"unknown metric {name!r} (known: {', '.join(sorted(ANALYZERS))})")
    return build_analyzer(cls, args, where)


def build_analyzer(cls: type[Analyzer], args: Sequence[ast.expr], where: str | None) -> Analyzer:
    name = cls.name

    def arity(n: int) -> None:
        if len(args) != n:
            raise CheckSyntaxError(f"{name} takes {n} argument(s), got {len(args)}")

    if name == "size":
        arity(0)
        return cls(where=where)
    if name == "correlation":
        arity(2)
        return cls(columns=(_column(args[0]), _column(args[1])), where=where)
    if name in ("uniqueness", "distinctness", "unique_value_ratio", "count_distinct", "entropy"):
        if not args:
            raise CheckSyntaxError(f"{name} needs at least one column")
        return cls(columns=tuple(_column(a) for a in args), where=where)
    if name == "compliance":
        arity(1)
        return Compliance(predicate=_string(args[0], "a SQL predicate"), where=where)
    if name == "approx_quantile":
        arity(2)
        return ApproxQuantile((_column(args[0]),), where, quantile=_number(args[1]))
    if name == "pattern_match":
        arity(2)
        return PatternMatch((_column(args[0]),), where, pattern=_string(args[1], "a regex"))
    if name == "contained_in":
        arity(2)
        return ContainedIn((_column(args[0]),), where, allowed=_values(args[1]))
    if name == "data_type":
        arity(2)
        return DataType((_column(args[0]),), where, value_kind=_string(args[1], "a kind"))
    arity(1)
    return cls(columns=(_column(args[0]),), where=where)


Bounds = tuple[tuple[str, float], ...]
ShorthandParser = Callable[[ast.Call, str | None], tuple[Analyzer, Bounds]]


def _shorthand(
    metric: str, make_args: Callable[[list[ast.expr]], list[ast.expr]], bound: float
) -> ShorthandParser:
    def parse(node: ast.Call, where: str | None) -> tuple[Analyzer, Bounds]:
        cls = ANALYZERS[metric]
        return build_analyzer(cls, make_args(list(node.args)), where), (("==", bound),)

    return parse


def _non_negative(node: ast.Call, where: str | None) -> tuple[Analyzer, Bounds]:
    if len(node.args) != 1:
        raise CheckSyntaxError("is_non_negative takes one column")
    column = _column(node.args[0]).replace("`", "``")
    predicate = f"`{column}` is null or `{column}` >= 0"
    return Compliance(predicate=predicate, where=where), (("==", 1.0),)


SHORTHANDS: dict[str, ShorthandParser] = {
    "is_complete": _shorthand("completeness", lambda a: a, 1.0),
    "is_unique": _shorthand("uniqueness", lambda a: a, 1.0),
    "is_contained_in": _shorthand("contained_in", lambda a: a, 1.0),
    "has_pattern": _shorthand("pattern_match", lambda a: a, 1.0),
    "has_data_type": _shorthand("data_type", lambda a: a, 1.0),
    "is_non_negative": _non_negative,
}


# ---------------------------------------------------------------------------- evaluation


def evaluate(
    checks: Sequence[Check],
    metrics: Mapping[tuple, float | None],
    *,
    model: str,
    table: str,
    history: Callable[[Analyzer], list[float]] | None = None,
) -> list[CheckResult]:
    """Results of `checks` given computed `metrics` (by analyzer key) and metric history.

    `history(analyzer)` returns earlier values of that metric, oldest first, excluding
    this run; anomaly checks need it.
    """
    from floe.quality.anomaly import STRATEGIES

    results = []
    for check in checks:
        actual = metrics[check.analyzer.key()]
        if check.anomaly is None:
            ok = check.holds(actual)
            status = "pass" if ok else "fail"
            detail = "" if actual is not None else " (metric undefined: no rows or values)"
        else:
            strategy = STRATEGIES[check.anomaly.strategy](**check.anomaly.params)
            past = history(check.analyzer) if history else []
            verdict = strategy.detect(past, actual)
            status, detail = verdict.status, f" ({verdict.reason})" if verdict.reason else ""
        message = (
            f"{table}: check `{check.text}` {_VERB[status]}"
            f" [{check.severity}]: expected {check.expected}, actual {_fmt(actual)}{detail}"
        )
        results.append(
            CheckResult(
                model=model,
                table=table,
                check=check.text,
                severity=check.severity,
                status=status,
                expected=check.expected,
                actual=actual,
                message=message,
            )
        )
    return results

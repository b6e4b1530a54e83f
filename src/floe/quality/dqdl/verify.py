"""Evaluate a DQDL ruleset on a table: one shared pass, judge each rule, record in dq.*.

The analyzers of every rule go to :func:`floe.quality.analyzers.compute_metrics` together
(one aggregation, one sketch query, one groupBy per uniqueness column set); the few
rules that cannot ride on it (schema facts, CustomSql, rules reading a second dataset)
each cost their own small query. Metrics land in ``dq.metrics`` and one row per rule
(its DQDL text) in ``dq.check_results``, like ``floe_checks``; dynamic rules
(``avg(last(n))``) and DetectAnomalies read the model's history from ``dq.metrics``.
"""

from __future__ import annotations

import ast
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from floe.quality.analyzers import Analyzer, Metric, Plan, compute_metrics, plan, scan_frame
from floe.quality.anomaly import STRATEGIES
from floe.quality.checks import CheckResult
from floe.quality.dqdl.parser import Condition, Rule, Ruleset, Value, parse_ruleset
from floe.quality.dqdl.rules import (
    Compiled,
    CompiledRule,
    Compiler,
    DqdlUnsupportedError,
    External,
    metric_holds,
    quote_identifier,
    requirements,
)
from floe.quality.repository import MetricsRepository, history_key
from floe.runtime.tables import read_fingerprint

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

SEVERITY = "error"
# DetectAnomalies: floe's z-score strategy over the metric's history (Glue's own model
# is not published); too little history is a skip, not a failure.
ANOMALY_STRATEGY = STRATEGIES["stddev"](n_sigmas=3.0, min_history=3)
ANY_VALUE = Condition(">", (Value("number", number=float("-inf")),))


@dataclass(frozen=True)
class RulesetResult:
    run_id: str
    table: str
    model: str
    snapshot_id: int | None
    metrics: list[Metric]
    results: list[CheckResult]
    plan: Plan

    @property
    def errors(self) -> list[CheckResult]:
        return [r for r in self.results if r.failed]

    def status(self, rule_text: str) -> str:
        for result in self.results:
            if result.check == rule_text:
                return result.status
        raise KeyError(rule_text)


def compile_ruleset(
    ruleset: str | Ruleset, datasets: Mapping[str, str] | None = None
) -> tuple[list[Compiled], list[Compiled]]:
    """(rules, analyzers) of a DQDL document, mapped onto floe's analyzers."""
    tree = parse_ruleset(ruleset) if isinstance(ruleset, str) else ruleset
    compiler = Compiler(dict(datasets or {}))
    # An analyzer is a metric to record, not a rule: it needs no condition.
    measured = [
        replace(n, condition=ANY_VALUE) if isinstance(n, Rule) and n.condition is None else n
        for n in tree.analyzers
    ]
    return [compiler.compile(n) for n in tree.rules], [compiler.compile(n) for n in measured]


def explain(
    spark: SparkSession,
    table: str,
    ruleset: str,
    datasets: Mapping[str, str] | None = None,
) -> tuple[Plan, str]:
    """The pass plan of a ruleset on ``table`` and Spark's physical plan of its aggregation."""
    rules, analyzers = compile_ruleset(ruleset, datasets)
    in_pass = _pass_analyzers([*rules, *analyzers])
    the_plan = plan(in_pass)
    frame, _ = scan_frame(spark.table(table), the_plan.scan)
    physical = frame._jdf.queryExecution().executedPlan().toString()
    return the_plan, physical


def _pass_analyzers(compiled: Sequence[Compiled]) -> list[Analyzer]:
    seen: dict[tuple, Analyzer] = {}
    for node in compiled:
        for req in requirements(node):
            if not isinstance(req.analyzer, External):
                seen.setdefault(req.analyzer.key(), req.analyzer)
    return list(seen.values())


def _externals(compiled: Sequence[Compiled]) -> list[External]:
    seen: dict[tuple, External] = {}
    for node in compiled:
        for req in requirements(node):
            if isinstance(req.analyzer, External):
                seen.setdefault(req.analyzer.key(), req.analyzer)
    return list(seen.values())


def verify_ruleset(
    spark: SparkSession,
    table: str,
    ruleset: str,
    *,
    model: str | None = None,
    run_id: str | None = None,
    datasets: Mapping[str, str] | None = None,
    repository: MetricsRepository | None = None,
    store: bool = True,
) -> RulesetResult:
    """Evaluate the DQDL ``ruleset`` on ``table``; append to dq.* unless ``store=False``.

    ``datasets`` maps the aliases rules name (``"reference"``) to project tables.
    """
    rules, analyzer_section = compile_ruleset(ruleset, datasets)
    model = model or table.split(".")[-1].strip("`")
    run_id = run_id or uuid.uuid4().hex
    frame = spark.table(table)
    snapshot = read_fingerprint(frame)
    compiled = [*rules, *analyzer_section]
    in_pass = _pass_analyzers(compiled)
    the_plan = plan(in_pass)
    metrics = compute_metrics(frame, in_pass)
    metrics += [
        Metric(e, _external_value(spark, frame, e, datasets or {})) for e in _externals(compiled)
    ]
    values = {m.analyzer.key(): m.value for m in metrics}

    repo = repository or (MetricsRepository(spark) if store else None)
    needs_history = any(
        r.anomaly or (r.condition is not None and r.condition.is_dynamic)
        for node in rules
        for r in requirements(node)
    )
    recorded = repo.model_metrics(model) if repo is not None else None
    past = recorded.history(run_id) if (recorded is not None and needs_history) else {}

    def history(analyzer: Analyzer) -> list[float]:
        return [v for v in past.get(history_key(analyzer), []) if v is not None]

    results = [_judge(node, values, history, model=model, table=table) for node in rules]
    if store and repo is not None:
        last_snapshot, last_values = recorded.latest() if recorded is not None else (None, {})
        current = {history_key(m.analyzer): m.value for m in metrics}
        # Same data, same metrics: re-running a build on unchanged input changes no table.
        if not (last_values and last_snapshot == snapshot and last_values == current):
            repo.save_run(
                run_id=run_id,
                model=model,
                table=table,
                snapshot_id=snapshot,
                metrics=metrics,
                results=results,
            )
    return RulesetResult(run_id, table, model, snapshot, metrics, results, the_plan)


# ---------------------------------------------------------------------------- judging


def _fmt(value: float | None) -> str:
    if value is None:
        return "undefined"
    if float(value).is_integer() and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _leaf_status(
    node: CompiledRule, values: Mapping[tuple, float | None], history: Any
) -> tuple[str, float | None, str]:
    statuses, actual, details = [], None, []
    for req in node.requirements:
        value = values[req.analyzer.key()]
        actual = value if actual is None else actual
        if req.anomaly:
            verdict = ANOMALY_STRATEGY.detect(history(req.analyzer), value)
            status = verdict.status
            if verdict.reason:
                details.append(verdict.reason)
        else:
            assert req.condition is not None
            status = metric_holds(req.condition, value, history(req.analyzer))
            if status == "skip":
                details.append("no history yet for last(n)")
            elif status == "fail":
                details.append(f"{req.analyzer.describe()} = {_fmt(value)}")
        statuses.append(status)
    return _combine("and", statuses), actual, "; ".join(details)


def _combine(op: str, statuses: Sequence[str]) -> str:
    if op == "and":
        if "fail" in statuses:
            return "fail"
        return "skip" if "skip" in statuses else "pass"
    if "pass" in statuses:
        return "pass"
    return "skip" if "skip" in statuses else "fail"


def _status_of(node: Compiled, values: Mapping[tuple, float | None], history: Any) -> str:
    if isinstance(node, CompiledRule):
        return _leaf_status(node, values, history)[0]
    return _combine(node.op, [_status_of(p, values, history) for p in node.parts])


def _judge(
    node: Compiled,
    values: Mapping[tuple, float | None],
    history: Any,
    *,
    model: str,
    table: str,
) -> CheckResult:
    if isinstance(node, CompiledRule):
        status, actual, detail = _leaf_status(node, values, history)
        text = node.rule.text
        expected = _expected(node)
    else:
        status, actual, detail = _status_of(node, values, history), None, ""
        text, expected = node.text, f"composite ({node.op})"
    verb = {"pass": "passed", "fail": "failed", "skip": "skipped"}[status]
    message = f"{table}: DQDL rule `{text}` {verb}: expected {expected}, actual {_fmt(actual)}" + (
        f" ({detail})" if detail and status != "pass" else ""
    )
    return CheckResult(
        model=model,
        table=table,
        check=text,
        severity=SEVERITY,
        status=status,
        expected=expected,
        actual=actual,
        message=message,
    )


def _expected(node: CompiledRule) -> str:
    parts = []
    for req in node.requirements:
        if req.anomaly:
            parts.append(f"no anomaly in {req.analyzer.describe()}")
        elif req.condition is not None:
            parts.append(f"{req.analyzer.describe()} {req.condition.render()}")
    return " and ".join(parts)


# ---------------------------------------------------------------------------- external metrics


def _external_value(
    spark: SparkSession, frame: DataFrame, metric: External, datasets: Mapping[str, str]
) -> float | None:
    from pyspark.sql import functions as F

    kind = metric.metric
    columns = frame.columns
    if kind == "column_count":
        return float(len(columns))
    if kind == "column_exists":
        wanted = metric.columns[0].lower()
        return 1.0 if any(c.lower() == wanted for c in columns) else 0.0
    if kind == "column_names_match":
        pattern = re.compile(metric.detail)
        return sum(1 for c in columns if pattern.fullmatch(c)) / len(columns) if columns else None
    primary = frame.where(F.expr(metric.where)) if metric.where else frame
    if kind in ("custom_sql", "custom_sql_rows"):
        return _custom_sql(spark, metric, primary, datasets)
    if kind == "referential_integrity":
        return _referential_integrity(spark, metric, primary)
    if kind == "dataset_match":
        return _dataset_match(spark, metric, primary)
    if kind == "aggregate_match":
        return _aggregate_match(spark, metric, primary)
    if kind == "schema_match":
        return _schema_match(spark, metric, frame)
    if kind == "row_count_match":
        reference = spark.table(metric.detail).count()
        return None if reference == 0 else primary.count() / reference
    raise DqdlUnsupportedError(f"unknown external metric {kind!r}")


_SQL_PARTS = re.compile(
    r"('(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`[^`]*`)|([A-Za-z_][A-Za-z0-9_]*)|([{}])"
)


def bind_datasets(sql: str, names: Sequence[str]) -> str:
    """``sql`` with each dataset name in ``names`` (outside quotes and backticks) turned
    into a ``{name}`` placeholder for ``spark.sql(..., name=DataFrame)``, and every other
    brace doubled: the DataFrames are bound as views Spark names itself."""
    wanted = {n.lower() for n in names}

    def replace(match: re.Match[str]) -> str:
        quoted, word, brace = match.groups()
        if quoted is not None:
            return quoted.replace("{", "{{").replace("}", "}}")
        if word is not None:
            return "{" + word.lower() + "}" if word.lower() in wanted else word
        return brace * 2

    return _SQL_PARTS.sub(replace, sql)


def _custom_sql(
    spark: SparkSession,
    metric: External,
    primary: DataFrame,
    datasets: Mapping[str, str],
) -> float | None:
    """The statement reads ``primary`` (the table, filtered by the rule's where) and the
    declared dataset aliases, bound as DataFrames (PySpark names their views)."""
    clash = {"args", "sqlquery", "primary"} & {a.lower() for a in datasets}
    if clash:
        raise DqdlUnsupportedError(
            f"dataset alias {sorted(clash)[0]!r} is reserved for CustomSql; rename it"
        )
    frames: dict[str, Any] = {a.lower(): spark.table(t) for a, t in datasets.items()}
    frames["primary"] = primary
    result = spark.sql(bind_datasets(metric.detail, list(frames)), **frames)
    if metric.metric == "custom_sql_rows":
        total = primary.count()
        return None if total == 0 else result.count() / total
    rows = result.limit(2).collect()
    if len(rows) != 1 or len(rows[0]) != 1:
        raise DqdlUnsupportedError(
            f"CustomSql {metric.detail!r} must return one value (one row, one column) to "
            "compare with a condition; without a condition it lists the passing rows"
        )
    value = rows[0][0]
    return None if value is None else float(value)


def _referential_integrity(
    spark: SparkSession, metric: External, primary: DataFrame
) -> float | None:
    match = re.match(r"^(?P<cols>.*) -> (?P<table>[^(]+)\((?P<ref>.*)\)$", metric.detail)
    assert match is not None
    ref_columns = match["ref"].split(",")
    ref_table = spark.table(match["table"])
    reference = ref_table.select(
        *[ref_table[c].alias(f"__ref{i}") for i, c in enumerate(ref_columns)]
    ).distinct()
    condition = [primary[c] == reference[f"__ref{i}"] for i, c in enumerate(metric.columns)]
    total = primary.count()
    if total == 0:
        return None
    found = primary.join(reference, condition, "left_semi").count()
    return found / total


def _dataset_match(spark: SparkSession, metric: External, primary: DataFrame) -> float | None:
    table, keys, values = ast.literal_eval(metric.detail)
    reference = spark.table(table)
    if not values:
        key_left = {k for k, _ in keys}
        ref_lower = {c.lower(): c for c in reference.columns}
        values = tuple(
            (c, ref_lower[c.lower()])
            for c in primary.columns
            if c not in key_left and c.lower() in ref_lower
        )
    pairs = [*keys, *values]
    renamed = reference.select(*[reference[r].alias(f"__ref{i}") for i, (_, r) in enumerate(pairs)])
    condition = [
        primary[left].eqNullSafe(renamed[f"__ref{i}"]) for i, (left, _) in enumerate(pairs)
    ]
    total = primary.count()
    if total == 0:
        return None
    return primary.join(renamed, condition, "left_semi").count() / total


def _aggregate_match(spark: SparkSession, metric: External, primary: DataFrame) -> float | None:
    from pyspark.sql import functions as F

    first, second = ast.literal_eval(metric.detail)

    def value(spec: tuple[str, str, str | None]) -> float | None:
        fn, column, table = spec
        frame = spark.table(table) if table else primary
        target = F.lit(1) if column == "*" else frame[quote_identifier(column)]
        result = frame.agg(getattr(F, fn)(target)).collect()[0][0]
        return None if result is None else float(result)

    a, b = value(first), value(second)
    if a is None or b is None:
        return None
    if a == b:
        return 1.0
    high = max(abs(a), abs(b))
    return min(abs(a), abs(b)) / high if high else None


def _schema_match(spark: SparkSession, metric: External, frame: DataFrame) -> float | None:
    def schema(df: DataFrame) -> set[tuple[str, str]]:
        return {(f.name.lower(), f.dataType.simpleString()) for f in df.schema.fields}

    mine, theirs = schema(frame), schema(spark.table(metric.detail))
    union = mine | theirs
    return len(mine & theirs) / len(union) if union else None

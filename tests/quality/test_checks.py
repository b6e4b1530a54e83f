"""Check grammar and evaluation (anomaly checks included): pure Python, no Spark."""

from __future__ import annotations

import pytest

from floe.quality.analyzers import (
    ApproxQuantile,
    Completeness,
    Compliance,
    ContainedIn,
    DataType,
    Mean,
    PatternMatch,
    Size,
    Uniqueness,
)
from floe.quality.checks import CheckSyntaxError, evaluate, parse_check, parse_checks


@pytest.mark.parametrize(
    ("text", "analyzer", "bounds"),
    [
        ("size > 0", Size(), ((">", 0.0),)),
        ("completeness(email_id) >= 0.99", Completeness(("email_id",)), ((">=", 0.99),)),
        ("0.5 < completeness('e mail')", Completeness(("e mail",)), ((">", 0.5),)),
        ("0 <= mean(amount) <= 100", Mean(("amount",)), ((">=", 0.0), ("<=", 100.0))),
        ("avg(amount) != -1", Mean(("amount",)), (("!=", -1.0),)),
        ("is_unique(a, b)", Uniqueness(("a", "b")), (("==", 1.0),)),
        ("is_complete(a)", Completeness(("a",)), (("==", 1.0),)),
        (
            "is_contained_in(country, ['US', 'DE'])",
            ContainedIn(("country",), allowed=("US", "DE")),
            (("==", 1.0),),
        ),
        (
            "has_pattern(email, '^[^@]+@[^@]+$')",
            PatternMatch(("email",), pattern="^[^@]+@[^@]+$"),
            (("==", 1.0),),
        ),
        (
            "data_type(code, integral) >= 0.9",
            DataType(("code",), value_kind="integral"),
            ((">=", 0.9),),
        ),
        (
            "approx_quantile(amount, 0.95) < 1e6",
            ApproxQuantile(("amount",), quantile=0.95),
            (("<", 1e6),),
        ),
        (
            "is_non_negative(amount)",
            Compliance(predicate="`amount` is null or `amount` >= 0"),
            (("==", 1.0),),
        ),
        ("compliance('a > b') == 1", Compliance(predicate="a > b"), (("==", 1.0),)),
    ],
)
def test_grammar(text, analyzer, bounds):
    check = parse_check(text)
    assert check.analyzer == analyzer
    assert check.bounds == bounds
    assert check.severity == "error"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("completeness(x) >=", "cannot parse"),
        ("completeness(x) >> 1", "expected `metric op number`"),
        ("completeness(x)", "expected `metric op number`"),
        ("completeness(x) >= size", "exactly one metric"),
        ("__import__('os').system('x') > 0", "metric"),
        ("frobnicate(x) > 0", "unknown metric"),
        ("completeness(x, y) > 0", "takes 1 argument"),
        ("data_type(x, number) == 1", "kind"),
        ("pattern_match(x, '(') == 1", "invalid regex"),
        ({"check": "size > 0", "severity": "fatal"}, "severity"),
        ({"check": "size > 0", "sevrity": "warn"}, "unknown keys"),
        ({"anomaly": {"metric": "size", "strategy": "magic"}}, "strategy"),
        ({"anomaly": {"metric": "size", "strategy": "absolute_change"}}, "max_increase"),
        ({"anomaly": {"metric": "size", "strategy": "stddev", "sigma": 2}}, "sigma"),
    ],
)
def test_bad_checks_are_rejected_with_the_reason(spec, message):
    with pytest.raises(CheckSyntaxError, match=message):
        parse_checks([spec])


def test_evaluation_messages_name_table_check_expected_actual():
    checks = parse_checks(
        [
            "size > 0",
            {"check": "completeness(email_id) >= 0.99", "severity": "warn"},
            {"check": "is_unique(id)", "where": "country = 'US'"},
            "mean(amount) > 0",
        ]
    )
    values = {c.analyzer.key(): v for c, v in zip(checks, (5.0, 0.8, 1.0, None), strict=True)}
    results = evaluate(checks, values, model="m", table="marts.t")
    assert [r.status for r in results] == ["pass", "fail", "pass", "fail"]
    assert results[1].severity == "warn"
    assert results[1].message == (
        "marts.t: check `completeness(email_id) >= 0.99` failed [warn]: "
        "expected >= 0.99, actual 0.8"
    )
    assert results[2].check == "is_unique(id) where country = 'US'"
    assert "metric undefined" in results[3].message


def test_anomaly_checks_use_history():
    checks = parse_checks(
        [{"anomaly": {"metric": "size", "strategy": "relative_rate_of_change", "max_increase": 2}}]
    )
    key = checks[0].analyzer.key()
    history = {Size().key(): [100.0, 120.0]}
    hist = lambda a: history.get(a.key(), [])  # noqa: E731
    ok = evaluate(checks, {key: 200.0}, model="m", table="t", history=hist)[0]
    bad = evaluate(checks, {key: 241.0}, model="m", table="t", history=hist)[0]
    new = evaluate(checks, {key: 241.0}, model="m", table="t", history=lambda a: [])[0]
    assert (ok.status, bad.status, new.status) == ("pass", "fail", "skip")
    assert "ratio 2.008 > max_increase 2" in bad.message

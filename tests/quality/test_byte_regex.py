"""floe.jvm.ByteRegex: the same answers as Spark's rlike, on the values' UTF-8 bytes.

Every pattern below is run both ways over one generated corpus in Spark (random short
strings over an alphabet of digits, letters, punctuation, the line terminators and
non-ASCII characters, plus edge values and NULL): not one row may differ. Patterns
outside the subset keep Spark's rlike (the plan says which ran). The same corpus checks
floe.jvm.Text's length against Spark's, and the data_type kinds computed with the byte
matcher (no cast shortcut) against the kinds computed without floe's jar
(docs/decisions/0072-jvm-functions-called-in-place.md).
"""

from __future__ import annotations

import random

import pytest
from pyspark.sql import functions as F

import floe.runtime.jars
from floe.quality.analyzers import (
    _FRACTIONAL_RE,
    _INTEGRAL_RE,
    BYTE_REGEX_CLASS,
    CALLS_CLASS,
    can_ride,
    regex_find,
    text_length,
    value_kind,
)
from tests.helpers import executed_plans, last_execution_id

pytestmark = pytest.mark.integration

# In the subset: what checks write (emails, codes, the data_type kinds, DQDL's
# whole-value wrapping) and the corners of `^`, `$`, classes and counted repeats.
ELIGIBLE = [
    r"^u[0-9]+@x[.]io$",
    _INTEGRAL_RE,
    _FRACTIONAL_RE,
    r"^(?:[A-Z]{2}\d{3})$",
    r"^[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}$",
    r"^(\d{1,3}\.){3}\d{1,3}$",
    r"\w+@\w+\.com",
    r"a|b",
    r"^$",
    r"$",
    r"a$\n",
    r"a$\r\n",
    r"\r$",
    r"(^a|b)c",
    r"a(b$|c)",
    r"[^\d\s]",
    r"[+-]x",
    r"[\s-]",
    r"x{0,3}y",
    r"(x|y|z){1,4}$",
    r"a.c",
    r"\W$",
    r"a+?$",
    r"(?:ab)+c?",
    r"[ab]*a[ab]{6}$",
]

# Outside it: back references, flags, possessive quantifiers, word boundaries, nested
# classes, non-ASCII in the pattern, nullable repeated bodies, big counts.
INELIGIBLE = [
    r"(a)\1",
    r"(?i)abc",
    r"a*+b",
    r"\bab",
    r"[a[b]]",
    r"[a&&b]",
    "é+",
    r"(a*)*",
    r"a{17}",
    r"\p{L}",
    r"(?=a)b",
]

ALPHABET = "ab xyu019@.+-eE_AB\n\r\t" + "é€\u0085\u2028"


def _corpus() -> list[str | None]:
    rng = random.Random(61)
    edge = [
        "",
        "\n",
        "\r",
        "\r\n",
        "\n\r",
        "u123@x.io",
        "u123@x.io\n",
        "u123@x.io\r\n",
        "u123@x.io\n\n",
        "u123@x.io\u0085",
        "a\u2028",
        " 12 ",
        "-1.5e3",
        "12.",
        ".5",
        "AB123",
        "10.0.0.1",
        "ab@cd.com",
        "aé",
        "é",
        None,
    ]
    generated = [
        "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(14))) for _ in range(4000)
    ]
    long = ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(30, 90))) for _ in range(200)]
    return edge + generated + long


@pytest.fixture(scope="module")
def corpus(spark):
    return spark.createDataFrame([(v,) for v in _corpus()], "v string").cache()


def _differences(spark, corpus, pattern: str) -> int:
    value = F.col("v")
    ours = regex_find(spark, value, pattern)
    return corpus.where(~F.coalesce(ours.eqNullSafe(value.rlike(pattern)), F.lit(False))).count()


@pytest.mark.parametrize("pattern", ELIGIBLE)
def test_the_byte_matcher_answers_as_rlike(spark, corpus, pattern):
    since = last_execution_id(spark)
    assert _differences(spark, corpus, pattern) == 0
    plan = "\n".join(executed_plans(spark, since).values())
    assert "ByteRegex(" in plan, plan  # the byte matcher ran, not only rlike


def test_more_states_than_the_cache_holds(spark):
    """`[ab]*a[ab]{10}$` has 1,024 sets of alive nodes, twice the 512 states the matcher
    caches: random a/b values of every length meet them all, so moves are cached, read,
    and then refused (the cache full) and stepped the general way. Every answer is
    rlike's."""
    rng = random.Random(74)
    values = ["".join(rng.choice("ab") for _ in range(rng.randrange(70))) for _ in range(3000)]
    df = spark.createDataFrame([(v,) for v in values], "v string").repartition(1)
    pattern = r"[ab]*a[ab]{10}$"
    since = last_execution_id(spark)
    assert _differences(spark, df, pattern) == 0
    assert "ByteRegex(" in "\n".join(executed_plans(spark, since).values())
    # Both answers occur, so neither a matcher always true nor always false passes.
    assert 0 < df.where(regex_find(spark, F.col("v"), pattern)).count() < len(values)


@pytest.mark.parametrize("pattern", INELIGIBLE)
def test_patterns_outside_the_subset_keep_rlike(spark, pattern):
    jvm = spark.sparkContext._jvm
    assert jvm.floe.jvm.ByteRegex.udf(pattern) is None
    column = str(regex_find(spark, F.col("v"), pattern))
    assert "RLIKE" in column.upper() and "ByteRegex(" not in column, column


def test_null_stays_null(spark):
    df = spark.createDataFrame([(None,), ("u1@x.io",)], "v string")
    got = df.select(regex_find(spark, F.col("v"), r"^u[0-9]+@x[.]io$").alias("m")).collect()
    assert [r.m for r in got] == [None, True]


def test_text_length_is_sparks_length(spark, corpus):
    """floe.jvm.Text counts an ASCII value by its bytes and hands any other to Spark's
    count: every row (short, long, non-ASCII anywhere, empty, NULL) is Spark's length."""
    since = last_execution_id(spark)
    value = F.col("v")
    ours = text_length(spark, value)
    assert corpus.where(~F.coalesce(ours.eqNullSafe(F.length(value)), F.lit(False))).count() == 0
    assert "floe_length" in "\n".join(executed_plans(spark, since).values())


def test_value_kinds_with_the_byte_matcher_are_the_kinds_without_it(spark, monkeypatch):
    """With floe's byte matcher, data_type drops the cast shortcut (a canonical integer is
    the integral pattern's anyway); without the jar it keeps the shortcut and rlike. Both
    classify every value alike: signs, spaces, leading zeros, bigint's edges and beyond,
    fractions, exponents, boolean spellings, non-ASCII digits, line ends, NULL."""
    rng = random.Random(72)
    edge = [
        "0",
        "-0",
        "+0",
        "00",
        "007",
        "12",
        "-12",
        "+12",
        " 12",
        "12 ",
        "12\n",
        "\t7",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "99999999999999999999",
        "1e3",
        "1.0",
        ".5",
        "5.",
        "-.5e-3",
        "true",
        "TRUE",
        " true",
        "True ",
        "false",
        "FaLsE",
        "yes",
        "",
        " ",
        "\u0661\u0662",
        "1_000",
        "0x1F",
        "NaN",
        "Infinity",
        "\uff11\uff12",
        None,
    ]
    generated = [
        "".join(rng.choice("0123456789 +-.eE\nx") for _ in range(rng.randrange(8)))
        for _ in range(3000)
    ]
    df = spark.createDataFrame([(v,) for v in edge + generated], "v string").cache()
    with_matcher = [r[0] for r in df.select(value_kind(df, "v")).collect()]
    assert "ByteRegex(" in str(value_kind(df, "v"))
    real = floe.runtime.jars.jvm_class
    monkeypatch.setattr(
        floe.runtime.jars,
        "jvm_class",
        lambda session, name: None if name == BYTE_REGEX_CLASS else real(session, name),
    )
    without = value_kind(df, "v")
    assert "ByteRegex(" not in str(without) and "CAST" in str(without).upper()
    assert [r[0] for r in df.select(without).collect()] == with_matcher
    df.unpersist()


def test_the_same_call_on_the_same_column_is_one_expression(spark):
    """Two matchers of one pattern on one column (a check and a DQDL rule, say), or two
    lengths of one column, are one expression to Spark, which can then evaluate it once
    per row; another pattern or another column is another expression."""

    def same(a, b):
        return a._jc.expr().semanticEquals(b._jc.expr())

    v, w = F.col("v"), F.col("w")
    email = r"^u[0-9]+@x[.]io$"
    assert same(regex_find(spark, v, email), regex_find(spark, v, email))
    assert not same(regex_find(spark, v, email), regex_find(spark, v, _INTEGRAL_RE))
    assert not same(regex_find(spark, v, email), regex_find(spark, w, email))
    assert same(text_length(spark, v), text_length(spark, v))
    assert not same(text_length(spark, v), text_length(spark, w))


def test_a_jar_built_before_in_place_calls_keeps_sparks_functions(spark, monkeypatch):
    """A floe jar from before floe.jvm.Calls has ByteRegex and the accumulator but not the
    in-place call: the checks keep rlike, Spark's length and the sketches' groupBys
    instead of failing on a method the old jar lacks."""
    real = floe.runtime.jars.jvm_class
    monkeypatch.setattr(
        floe.runtime.jars,
        "jvm_class",
        lambda session, name: None if name == CALLS_CLASS else real(session, name),
    )
    assert "RLIKE" in str(regex_find(spark, F.col("v"), r"^u[0-9]+@x[.]io$")).upper()
    assert "floe_length" not in str(text_length(spark, F.col("v")))
    assert not can_ride(spark)

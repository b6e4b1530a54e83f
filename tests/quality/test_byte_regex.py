"""floe.jvm.ByteRegex: the same answers as Spark's rlike, on the values' UTF-8 bytes.

Every pattern below is run both ways over one generated corpus in Spark (random short
strings over an alphabet of digits, letters, punctuation, the line terminators and
non-ASCII characters, plus edge values and NULL): not one row may differ. Patterns
outside the subset keep Spark's rlike (the plan says which ran).
"""

from __future__ import annotations

import random

import pytest
from pyspark.sql import functions as F

from floe.quality.analyzers import _FRACTIONAL_RE, _INTEGRAL_RE, regex_find
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
    assert "floe_regex_" in plan, plan  # the byte matcher ran, not only rlike


@pytest.mark.parametrize("pattern", INELIGIBLE)
def test_patterns_outside_the_subset_keep_rlike(spark, pattern):
    jvm = spark.sparkContext._jvm
    assert jvm.floe.jvm.ByteRegex.udf(pattern) is None
    column = str(regex_find(spark, F.col("v"), pattern))
    assert "RLIKE" in column.upper() and "floe_regex_" not in column, column


def test_null_stays_null(spark):
    df = spark.createDataFrame([(None,), ("u1@x.io",)], "v string")
    got = df.select(regex_find(spark, F.col("v"), r"^u[0-9]+@x[.]io$").alias("m")).collect()
    assert [r.m for r in got] == [None, True]

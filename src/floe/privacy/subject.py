"""A data subject named on the command line: ``<key>=<value>``, checked before any SQL.

The key must be a subject key some column is tagged with (floe.privacy.tags). The
value is checked against the type of every column holding that key — an id typed
``bigint`` in one table and ``string`` in another takes only canonical integers
(``42``, not ``042`` or ``4.2e1``), so every table is searched for the same subject —
and becomes one typed parameter per column. Values reach SQL only as bound
parameters (``spark.sql(text, args=...)``) or DataFrame literals, never as SQL text.
"""

from __future__ import annotations

import datetime as dt
import decimal
import re
from dataclasses import dataclass
from typing import Any

MAX_VALUE_CHARS = 512
_INTEGER = re.compile(r"^-?(0|[1-9][0-9]*)$")
_INT_RANGES = {
    "tinyint": (-(2**7), 2**7 - 1),
    "byte": (-(2**7), 2**7 - 1),
    "smallint": (-(2**15), 2**15 - 1),
    "short": (-(2**15), 2**15 - 1),
    "int": (-(2**31), 2**31 - 1),
    "integer": (-(2**31), 2**31 - 1),
    "bigint": (-(2**63), 2**63 - 1),
    "long": (-(2**63), 2**63 - 1),
}
_KEY = re.compile(r"^[a-z_][a-z0-9_]*$")


class SubjectError(ValueError):
    """The subject (or a --set value) is malformed or does not fit a column's type."""


@dataclass(frozen=True)
class Subject:
    """``key=value`` as given; :meth:`typed` converts the value for one column type."""

    key: str
    value: str

    @classmethod
    def parse(cls, text: str) -> Subject:
        key, sep, value = text.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SubjectError(f"--subject {text!r}: write it as <subject key>=<value>")
        if not _KEY.match(key):
            raise SubjectError(f"--subject: key {key!r} must be a lowercase name")
        check_text(value, f"--subject {key}")
        return cls(key, value)

    def __str__(self) -> str:  # never the value: subjects do not go to logs
        return f"{self.key}=<value>"

    def typed(self, spark_type: str, where: str) -> Any:
        return typed_value(self.value, spark_type, f"{where} (subject key {self.key})")


def check_text(value: str, what: str) -> None:
    if value == "":
        raise SubjectError(f"{what}: the value is empty")
    if len(value) > MAX_VALUE_CHARS:
        raise SubjectError(f"{what}: the value is longer than {MAX_VALUE_CHARS} characters")
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        raise SubjectError(f"{what}: the value contains control characters")


def typed_value(value: str, spark_type: str, where: str) -> Any:
    """``value`` as a Python value of Spark SQL type ``spark_type``; SubjectError if it
    does not fit (the message names ``where`` and the type)."""
    t = spark_type.strip().lower()
    if t in ("string", "varchar", "char") or t.startswith(("varchar(", "char(")):
        return value
    if t in _INT_RANGES:
        low, high = _INT_RANGES[t]
        if not _INTEGER.match(value) or not low <= int(value) <= high:
            raise SubjectError(f"{where}: {value!r} is not a canonical {t} (e.g. 42)")
        return int(value)
    if t.startswith("decimal"):
        try:
            number = decimal.Decimal(value)
        except decimal.InvalidOperation:
            number = decimal.Decimal("NaN")
        if not number.is_finite():
            raise SubjectError(f"{where}: {value!r} is not a {t}")
        return number
    if t == "date":
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            raise SubjectError(f"{where}: {value!r} is not a date (YYYY-MM-DD)") from None
    if t == "boolean":
        if value not in ("true", "false"):
            raise SubjectError(f"{where}: {value!r} is not true or false")
        return value == "true"
    raise SubjectError(
        f"{where}: a column of type {spark_type} cannot hold a subject key; key columns are "
        "strings, integers, decimals, dates or booleans"
    )

"""The insurance policy landing contract (SPEC §3; seed 'Handle UPSERT data operations').

- `insurance/full/*.csv`: header row, the nine policy columns.
- `insurance/cdc/*.csv`: no header, an op flag (U or I; D is accepted too) then the
  nine columns.

A file's load date is the `yyyymmdd` in its name (`full-load-20220701.csv`,
`cdc-load-20220702.csv`). The files are small, so they are parsed in Python: that
keeps each row's exact position in its file (`_row_in_file`), which orders two
changes of one policy in one file, and lets an unparsable line be named by file
and line number.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from floe.landing.loads import LandingError

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

COLUMNS = [
    ("policy_id", int),
    ("expiry_date", date.fromisoformat),
    ("location_name", str),
    ("state_code", str),
    ("region_name", str),
    ("insured_value", int),
    ("business_type", str),
    ("earthquake_coverage", str),
    ("flood_coverage", str),
]
OPS = ("I", "U", "D")
DATE_IN_NAME = re.compile(r"(\d{8})")


@dataclass(frozen=True)
class PolicyFile:
    path: Path
    relative: str
    kind: str  # full | cdc
    load_date: date


def discover_policy_files(landing: Path) -> list[PolicyFile]:
    """Full loads first, then CDC files, each in name (date) order."""
    found = []
    for kind in ("full", "cdc"):
        for path in sorted((landing / "insurance" / kind).glob("*.csv")):
            match = DATE_IN_NAME.search(path.name)
            try:
                day = date(int(match[1][:4]), int(match[1][4:6]), int(match[1][6:]))  # type: ignore[index]
            except (TypeError, ValueError) as exc:
                raise LandingError(
                    f"{path}: the file name carries no yyyymmdd load date "
                    "(e.g. cdc-load-20220702.csv)"
                ) from exc
            found.append(PolicyFile(path, path.relative_to(landing).as_posix(), kind, day))
    return found


def _spark_schema():
    from pyspark.sql.types import (
        DateType,
        IntegerType,
        LongType,
        StringType,
        StructField,
        StructType,
    )

    types = {int: IntegerType(), date.fromisoformat: DateType(), str: StringType()}
    return StructType(
        [
            StructField("op", StringType()),
            *(StructField(name, types[parse]) for name, parse in COLUMNS),
            StructField("_source_file", StringType()),
            StructField("_row_in_file", LongType()),
            StructField("_load_kind", StringType()),
            StructField("_load_date", DateType()),
        ]
    )


def parse_policy_file(f: PolicyFile) -> list[tuple]:
    """The rows of one file as tuples in `_spark_schema()` order."""
    header = [name for name, _ in COLUMNS]
    rows = []
    with f.path.open(encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        if f.kind == "full":
            first = next(reader, None)
            if first is None or [c.strip() for c in first] != header:
                raise LandingError(f"{f.path}: header must be {','.join(header)}, got {first}")
        for position, record in enumerate(reader):
            line = reader.line_num
            op = None
            if f.kind == "cdc":
                if not record or record[0] not in OPS:
                    raise LandingError(
                        f"{f.path}:{line}: first column must be one of {'/'.join(OPS)}"
                    )
                op, record = record[0], record[1:]
            if len(record) != len(COLUMNS):
                raise LandingError(
                    f"{f.path}:{line}: {len(record)} fields, want {len(COLUMNS)} ({','.join(header)})"
                )
            try:
                values = [
                    None if raw == "" else parse(raw)
                    for raw, (_, parse) in zip(record, COLUMNS, strict=True)
                ]
            except ValueError as exc:
                raise LandingError(f"{f.path}:{line}: {exc}") from exc
            rows.append((op, *values, f.relative, position, f.kind, f.load_date))
    return rows


def read_new_policy_files(
    spark: SparkSession, landing: Path, already_loaded: set[str]
) -> DataFrame:
    """Rows of the insurance files not yet in `already_loaded` (ledger keys)."""
    from pyspark.sql import functions as F

    files = [f for f in discover_policy_files(landing) if f.relative not in already_loaded]
    rows = [row for f in files for row in parse_policy_file(f)]
    df = spark.createDataFrame(rows, _spark_schema())
    return df.withColumn("_ingested_at", F.current_timestamp())

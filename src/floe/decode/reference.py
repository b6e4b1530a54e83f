"""reference/product_priority: full extracts of the priority table, one file per change day."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

REFERENCE_DIR = "reference/product_priority"
FLAG = "_CHANGED"
SCHEMA = "item string, price int, priority string, updated_at timestamp"


def reference_files(landing: Path) -> dict[str, Path]:
    folder = landing / REFERENCE_DIR
    return {
        p.relative_to(landing).as_posix(): p
        for p in sorted(folder.glob("*.csv"))
        if not p.name.startswith(".")
    }


def read_new_reference_files(
    spark: SparkSession, landing: Path, seen: set[str], files: dict[str, Path] | None = None
) -> DataFrame:
    """Rows of reference files not in ``seen`` with ``_source_file`` and ``_load_date``.

    The load date is the file name's date (``product_priority_YYYY-MM-DD.csv``), else
    the date of the rows' ``updated_at``.
    """
    from pyspark.sql import functions as F

    from floe.decode.core import relative_source

    candidates = reference_files(landing) if files is None else files
    new = [str(p) for rel, p in candidates.items() if rel not in seen]
    if not new:
        return spark.createDataFrame([], SCHEMA).select(
            "*",
            F.lit(None).cast("string").alias("_source_file"),
            F.lit(None).cast("date").alias("_load_date"),
            F.current_timestamp().alias("_ingested_at"),
        )
    df = spark.read.schema(SCHEMA).option("header", True).option("mode", "FAILFAST").csv(new)
    source = relative_source(F.col("_metadata.file_path"))
    named = F.to_date(F.regexp_extract(source, r"(\d{4}-\d{2}-\d{2})\.csv$", 1))
    return df.select(
        "*",
        source.alias("_source_file"),
        F.coalesce(named, F.to_date("updated_at")).alias("_load_date"),
        F.current_timestamp().alias("_ingested_at"),
    )


def change_flag(landing: Path) -> Path:
    """The ``_CHANGED`` flag: present means the reference changed since the last refresh."""
    return landing / REFERENCE_DIR / FLAG


def clear_change_flag(landing: Path) -> None:
    """Remove the flag *after* a refresh (the seed's pattern: refresh once per change)."""
    change_flag(landing).unlink(missing_ok=True)

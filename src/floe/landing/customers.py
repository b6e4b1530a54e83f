"""The customer master/address landing contract (SPEC §3)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from floe.landing.loads import discover_loads, read_loads

if TYPE_CHECKING:
    from pathlib import Path

    from pyspark.sql import DataFrame, SparkSession


def _schemas() -> dict:
    from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

    def schema(*names: str) -> StructType:
        return StructType(
            [
                StructField("customer_id", LongType()),
                *(StructField(n, StringType()) for n in names),
                StructField("row_audit_ts", TimestampType()),
            ]
        )

    return {
        "customer_master": schema("first_name", "last_name", "employer_name"),
        "customer_address": schema("email_id", "city", "country"),
    }


def read_new_customer_files(
    spark: SparkSession, landing: Path, table: str, already_loaded: set[str]
) -> DataFrame:
    """Rows of the `customers/<table>` files not yet in `already_loaded` (ledger keys)."""
    files = [
        f for f in discover_loads(landing, f"customers/{table}") if f.relative not in already_loaded
    ]
    return read_loads(spark, files, _schemas()[table])

"""Landed `customer_events` stream records, decoded in Spark and appended once per landed file.

Bad records go to raw.quarantine and per-file counts to raw.stream_files in the same
decode pass (floe.decode.ingest explains the ledger and crash safety).
"""

from floe.decode.ingest import ingest_new
from floe.runtime import Settings


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append", alias="customer_events")
    settings = Settings.from_env()
    rows, _ = ingest_new(
        session,
        "customer_events",
        settings.landing,
        settings.state_dir,
        raw_exists=dbt.is_incremental,
    )
    return rows

"""Landed DMS rows of dms_sample.mlb_data, appended once per landed file (ledger: _source_file)."""

from floe.landing import already_loaded
from floe.landing.dms import read_new_dms_files
from floe.runtime import Settings


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    seen = already_loaded(session, dbt)
    landing = Settings.from_env().landing
    return read_new_dms_files(session, landing, "dms_sample", "mlb_data", seen)

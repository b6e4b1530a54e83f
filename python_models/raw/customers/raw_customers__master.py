"""Landed customer_master CSV rows, appended once per landed file (ledger: _source_file)."""

from floe.landing import already_loaded
from floe.landing.customers import read_new_customer_files
from floe.runtime import Settings


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    seen = already_loaded(session, dbt)
    return read_new_customer_files(session, Settings.from_env().landing, "customer_master", seen)

"""Landed insurance policy rows (full and U/I CDC files), appended once per landed file."""

from floe.landing import already_loaded
from floe.landing.insurance import read_new_policy_files
from floe.runtime import Settings


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append")
    seen = already_loaded(session, dbt)
    return read_new_policy_files(session, Settings.from_env().landing, seen)

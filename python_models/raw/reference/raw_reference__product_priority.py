"""Landed reference/product_priority CSV extracts, appended once per file.

Each file is one full extract of the reference table (the seed's DynamoDB
ProductPriority); its date in the file name is the load date the scd2 history uses.
"""

from floe.decode.reference import read_new_reference_files
from floe.landing import already_loaded
from floe.runtime import Settings


def model(dbt, session):
    dbt.config(materialized="incremental", incremental_strategy="append", alias="product_priority")
    seen = already_loaded(session, dbt)
    return read_new_reference_files(session, Settings.from_env().landing, seen)

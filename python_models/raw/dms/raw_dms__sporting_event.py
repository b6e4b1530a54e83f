def model(dbt, session):
    dbt.config(materialized="incremental")  # dbt makes a Python model a table unless told here
    return dbt.source("dms", "sporting_event")

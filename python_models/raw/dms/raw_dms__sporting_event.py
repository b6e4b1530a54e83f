def model(dbt, session):
    return dbt.source("dms", "sporting_event")

def model(dbt, session):
    return dbt.source("dms", "mlb_data")

def model(dbt, session):
    return dbt.source("streams", "customer_events")

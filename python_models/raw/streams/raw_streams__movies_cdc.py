def model(dbt, session):
    return dbt.source("streams", "movies_cdc")

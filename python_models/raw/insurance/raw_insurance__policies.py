def model(dbt, session):
    return dbt.source("insurance", "policies")

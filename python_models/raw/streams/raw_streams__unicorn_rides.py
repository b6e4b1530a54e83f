def model(dbt, session):
    return dbt.source("streams", "unicorn_rides")

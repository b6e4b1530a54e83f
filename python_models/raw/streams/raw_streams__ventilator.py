def model(dbt, session):
    return dbt.source("streams", "ventilator")

def model(dbt, session):
    return dbt.source("customers", "customer_master")

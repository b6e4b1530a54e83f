def model(dbt, session):
    return dbt.source("reference", "product_priority")

def model(dbt, session):
    return dbt.source("dms", "nfl_stadium_data")

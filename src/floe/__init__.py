"""floe: a SQL-first lakehouse on Spark + Iceberg (dbt project + runtime)."""

__version__ = "0.1.0"
# The distribution name on PyPI (pyproject.toml): `floe` itself is taken there.
DISTRIBUTION = "floelake"

"""Data quality: Deequ-style checks, metrics repository, anomalies, suggestion and
migration validation in plain PySpark (``docs/quality.md``)."""

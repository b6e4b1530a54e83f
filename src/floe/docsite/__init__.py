"""The docs site room: docs coverage of the dbt project (and, later, the site itself)."""

"""floe's dbt adapter plug-in: dbt-spark plus in-process Python models.

dbt-spark runs Python models only on Databricks. This adapter (type `floe`)
inherits everything from dbt-spark (`dependencies=["spark"]`) and adds:

- a `session` Python submission method that executes the compiled model in the
  dbt process's own SparkSession (the one floe's runtime configured);
- connection opening that creates that SparkSession from `floe.runtime`, so the
  profile holds no Spark configuration of its own;
- relation listing with two cheap queries per schema (`show tables`, `show
  views`) instead of dbt-spark's fallback of one DESCRIBE per relation, which
  Iceberg v2 tables force (SHOW TABLE EXTENDED is unsupported there); a schema
  that does not exist lists nothing, as in dbt-spark, although Iceberg's
  catalogs raise their own NoSuchNamespaceException for it;
- `floe_relations_in_schema` for macros (drop schema drops the relations
  first: Iceberg's catalogs refuse to drop a non-empty namespace even with
  CASCADE).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dbt.adapters.base import PythonJobHelper, available
from dbt.adapters.contracts.connection import Connection
from dbt.adapters.spark import SparkAdapter, SparkCredentials
from dbt.adapters.spark.connections import SparkConnectionManager, SparkConnectionMethod
from dbt.adapters.spark.impl import SCHEMA_NOT_FOUND_MESSAGES
from dbt_common.exceptions import DbtRuntimeError

ADAPTER_TYPE = "floe"
# Spark's own messages for a missing schema, and Iceberg's (its catalogs raise
# org.apache.iceberg.exceptions.NoSuchNamespaceException through SHOW TABLES).
MISSING_SCHEMA_MESSAGES = (*SCHEMA_NOT_FOUND_MESSAGES, "NAMESPACE_NOT_FOUND")


@dataclass
class FloeCredentials(SparkCredentials):
    @property
    def type(self) -> str:
        return ADAPTER_TYPE


class FloeConnectionManager(SparkConnectionManager):
    TYPE = ADAPTER_TYPE

    @classmethod
    def open(cls, connection: Connection) -> Connection:
        if connection.credentials.method == SparkConnectionMethod.SESSION:
            from floe.runtime import get_spark

            get_spark()
        return super().open(connection)


class SessionPythonJobHelper(PythonJobHelper):
    """Runs a compiled Python model in this process's SparkSession."""

    def __init__(self, parsed_model: dict, credentials: SparkCredentials) -> None:
        self.parsed_model = parsed_model
        self.credentials = credentials

    def submit(self, compiled_code: str) -> Any:
        from floe.runtime import get_spark

        spark = get_spark()
        name = f"{self.parsed_model['schema']}.{self.parsed_model['alias']}"
        code = compile(compiled_code, f"<dbt python model {name}>", "exec")
        namespace: dict[str, Any] = {"spark": spark, "__name__": f"dbt_model_{name}"}
        try:
            exec(code, namespace)
        except Exception as exc:
            raise DbtRuntimeError(
                f"Python model {name} failed: {type(exc).__name__}: {exc}"
            ) from exc
        return None


class FloeAdapter(SparkAdapter):
    ConnectionManager = FloeConnectionManager

    @classmethod
    def type(cls) -> str:
        return ADAPTER_TYPE

    @property
    def default_python_submission_method(self) -> str:
        return "session"

    @property
    def python_submission_helpers(self) -> dict[str, type[PythonJobHelper]]:
        return {**super().python_submission_helpers, "session": SessionPythonJobHelper}

    @available
    def floe_run_checks(self, relation: Any, checks: Any, model_name: str, run_id: str) -> Any:
        """Data-quality checks of a built model, for the `floe_checks` test (floe.quality)."""
        from floe.quality.dbt_bridge import run_checks_for

        return run_checks_for(relation, checks, model_name, run_id)

    @available
    def floe_relations_in_schema(self, schema_relation: Any) -> list[Any]:
        """The tables and views of a schema, from the catalog; none if it does not exist."""
        return self.list_relations_without_caching(schema_relation)

    def list_relations_without_caching(self, schema_relation: Any) -> list[Any]:
        schema = schema_relation.schema
        try:
            tables = self.execute_macro("floe__show_tables", kwargs={"schema": schema})
            views = self.execute_macro("floe__show_views", kwargs={"schema": schema})
        except DbtRuntimeError as exc:
            message = getattr(exc, "msg", str(exc))
            if any(marker in message for marker in MISSING_SCHEMA_MESSAGES):
                return []
            raise
        relations = []
        view_names = {row[1] for row in views if not _truthy(row[2])}
        for row in tables:
            name = row[1]
            if _truthy(row[2]) or name in view_names:
                continue
            relations.append(
                self.Relation.create(
                    schema=schema,
                    identifier=name,
                    type="table",
                    information="Provider: iceberg\n",
                    is_iceberg=True,
                )
            )
        relations.extend(
            self.Relation.create(schema=schema, identifier=name, type="view") for name in view_names
        )
        return relations


def _truthy(value: Any) -> bool:
    return value is True or str(value).lower() == "true"

"""The bridge from dbt to the quality engine: what `adapter.floe_run_checks(...)` runs.

dbt's Jinja cannot import Python, so the `floe_checks` generic test (macros/quality/)
calls an `@available` method of the floe adapter, which delegates here. Running in the
dbt process, this shares dbt's SparkSession (floe.runtime.get_spark() returns it).

Outcome per run of a model's checks:
- metrics appended to `dq.metrics`, one row per check to `dq.check_results`;
- any failed `error` check raises `DataQualityError` (a dbt runtime error), so the test
  node errors and `dbt build` fails and skips the model's children; its message names
  the table, each failed check, the expected bound and the actual value;
- failed `warn` checks are returned as messages, which the macro emits as dbt warnings
  (the node passes; `--warn-error` would promote them).
"""

from __future__ import annotations

from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from floe.quality.checks import CheckSyntaxError
from floe.quality.verification import verify


class DataQualityError(DbtRuntimeError):
    """A model's `error` data-quality checks failed (raised into dbt)."""


def run_checks_for(
    relation: Any, checks: Any, model_name: str, run_id: str | None = None
) -> dict[str, Any]:
    """Verify `relation` against `checks` (the YAML list) for dbt; see module docstring.

    Returns {"sql": <a query with no rows>, "warnings": [message, ...]}.
    """
    from floe.runtime import get_spark

    table = _table_name(relation)
    if not checks:
        raise DbtRuntimeError(
            f"floe_checks on {table}: no checks declared (add `meta: floe_checks:` to "
            f"model {model_name} or pass `checks:` to the test)"
        )
    try:
        result = verify(get_spark(), table, list(checks), model=model_name, run_id=run_id)
    except CheckSyntaxError as exc:
        raise DbtRuntimeError(f"floe_checks on {table} (model {model_name}): {exc}") from exc
    if result.errors:
        lines = "\n".join(f"  - {r.message}" for r in result.errors)
        raise DataQualityError(
            f"{len(result.errors)} of {len(result.results)} data-quality checks failed on "
            f"{table} (model {model_name}, run {result.run_id}; see dq.check_results):\n{lines}"
        )
    return {
        "sql": "select 'ok' as floe_check where 1 = 0",
        "warnings": [r.message for r in result.warnings],
    }


def _table_name(relation: Any) -> str:
    """`schema.identifier` of a dbt relation (or a string), without quoting."""
    schema = getattr(relation, "schema", None)
    identifier = getattr(relation, "identifier", None)
    if schema and identifier:
        return f"{schema}.{identifier}"
    return str(relation).replace("`", "")

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

from pathlib import Path
from typing import Any

from dbt_common.exceptions import DbtRuntimeError

from floe.quality.analyzers import AnalyzerError
from floe.quality.checks import CheckSyntaxError
from floe.quality.dqdl import DqdlSyntaxError, DqdlUnsupportedError, verify_ruleset
from floe.quality.verification import verify
from floe.runtime import get_spark


class DataQualityError(DbtRuntimeError):
    """A model's `error` data-quality checks failed (raised into dbt)."""


def run_checks_for(
    relation: Any, checks: Any, model_name: str, run_id: str | None = None
) -> dict[str, Any]:
    """Verify `relation` against `checks` (the YAML list) for dbt; see module docstring.

    Returns {"sql": <a query with no rows>, "warnings": [message, ...]}.
    """
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


def dqdl_ruleset_text(
    ruleset: str | None, model_name: str, model_path: str | None, project_root: str | Path
) -> str:
    """The model's DQDL: ``meta.floe_dqdl`` if given, else ``<model>.dqdl`` beside its SQL."""
    if ruleset:
        return str(ruleset)
    if model_path:
        beside = (Path(project_root) / model_path).with_suffix(".dqdl")
        if beside.is_file():
            return beside.read_text(encoding="utf-8")
        where = f" or a file {beside.relative_to(Path(project_root))}"
    else:
        where = ""
    raise DbtRuntimeError(
        f"floe_dqdl on model {model_name}: no ruleset (add `meta: floe_dqdl: |` with "
        f"`Rules = [ ... ]`{where})"
    )


def run_dqdl_for(
    relation: Any,
    ruleset: str | None,
    model_name: str,
    run_id: str | None = None,
    *,
    datasets: dict[str, str] | None = None,
    model_path: str | None = None,
    project_root: str | Path = ".",
) -> dict[str, Any]:
    """Evaluate a model's DQDL ruleset for dbt: a failed rule raises DataQualityError."""
    table = _table_name(relation)
    text = dqdl_ruleset_text(ruleset, model_name, model_path, project_root)
    try:
        result = verify_ruleset(
            get_spark(), table, text, model=model_name, run_id=run_id, datasets=datasets
        )
    except (DqdlSyntaxError, DqdlUnsupportedError, AnalyzerError) as exc:
        raise DbtRuntimeError(f"floe_dqdl on {table} (model {model_name}): {exc}") from exc
    if result.errors:
        lines = "\n".join(f"  - {r.message}" for r in result.errors)
        raise DataQualityError(
            f"{len(result.errors)} of {len(result.results)} DQDL rules failed on {table} "
            f"(model {model_name}, run {result.run_id}; see dq.check_results):\n{lines}"
        )
    return {"sql": "select 'ok' as floe_check where 1 = 0", "warnings": []}


def _table_name(relation: Any) -> str:
    """`schema.identifier` of a dbt relation (or a string), without quoting."""
    schema = getattr(relation, "schema", None)
    identifier = getattr(relation, "identifier", None)
    if schema and identifier:
        return f"{schema}.{identifier}"
    return str(relation).replace("`", "")

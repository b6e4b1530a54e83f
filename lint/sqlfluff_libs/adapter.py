"""`adapter` for sqlfluff's jinja templater: just enough of dbt's to lint floe's SQL.

floe's public macros dispatch (`adapter.dispatch('as_of', 'dbt')(...)`) so an engine
can bring its own version. The linter has no dbt adapter; this resolves a dispatch
as dbt does for the floe adapter (floe__, then spark__, then default__), among the
macros sqlfluff loaded from src/dbt/include/floe/macros (`.sqlfluff`, library_path).
"""

from __future__ import annotations

from typing import Any

from jinja2 import pass_context
from jinja2.runtime import Context

PREFIXES = ("floe", "spark", "default")


@pass_context
def dispatch(context: Context, macro_name: str, macro_namespace: str | None = None) -> Any:
    for prefix in PREFIXES:
        macro = context.get(f"{prefix}__{macro_name}")
        if macro is not None:
            return macro
    searched = ", ".join(f"{prefix}__{macro_name}" for prefix in PREFIXES)
    raise LookupError(f"adapter.dispatch: no macro {searched} in the linted macro paths")


def quote(identifier: str) -> str:
    return f"`{identifier}`"

"""`floe env publish --rebuild`: rebuild an environment on top of a main that moved.

A publish refuses when main of some table moved since the environment was created
(``MainMoved``): its branches were built against an older main. Asked to rebuild on
top, floe drops the environment's branches (main untouched), records main as it is now
as the environment's base, rebuilds the models of the tables it had written and their
children in it, with their data tests (the audit), and publishes only if that build
succeeds (docs/envs.md, "Publish"). The dbt build itself is passed in by the edge
(the CLI command runs dbt in-process with FLOE_ENV set), so this room runs no dbt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from floe.envs.core import EnvError, publish, rebase, status
from floe.runtime.settings import Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class RebuildFailed(EnvError):
    """The rebuild on top of the new main failed its build or its audit."""


def models_of(tables: Sequence[str], manifest: Path | None) -> list[str]:
    """dbt node names of ``schema.table`` names, from the manifest where it knows them.

    A table dbt does not know (no manifest, or not a node of it) is named by its own
    identifier, which is the model's name unless the model sets an alias.
    """
    names: dict[str, str] = {}
    if manifest is not None and manifest.exists():
        for node in json.loads(manifest.read_text()).get("nodes", {}).values():
            if node.get("resource_type") in ("model", "seed", "snapshot"):
                table = f"{node['schema']}.{node.get('alias') or node['name']}".lower()
                names[table] = node["name"]
    return sorted({names.get(t.lower(), t.split(".", 1)[1]) for t in tables})


def publish_rebuilt(
    spark: SparkSession,
    settings: Settings,
    name: str,
    build: Callable[[list[str]], None],
    *,
    select: Sequence[str] = (),
    manifest: Path | None = None,
    on_step: Callable[[str], None] | None = None,
) -> dict[str, dict[str, int | None]]:
    """Publish ``name``; when main moved under it, rebuild it on top of main first.

    ``build(selection)`` runs ``dbt build --select <selection>`` in the environment and
    raises :class:`RebuildFailed` when a model or a data test fails (main is then
    untouched and the environment stays, rebased, for inspection). The selection is
    ``select`` if given, else every model whose table the environment had written, with
    its children (``model+``). An unfinished publish is finished as journaled, with no
    rebuild.
    """
    step = on_step or (lambda _line: None)
    st = status(spark, settings, name)
    if st.publishing is None and st.moved:
        step(f"main moved for {', '.join(st.moved)}: rebuilding environment {name} on top")
        tables = rebase(spark, settings, name)
        selection = list(select) or [f"{m}+" for m in models_of(tables, manifest)]
        if selection:
            step(f"dbt build --select {' '.join(selection)} (FLOE_ENV={name})")
            build(selection)
        else:
            step("the environment had written no table: nothing to rebuild")
    return publish(spark, settings, name, on_step=step)

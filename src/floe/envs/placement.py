"""Where an environment's tables are read from: its branch, main, or only in it.

For the docs site and lineage (``floe docs``, ``floe lineage`` with ``FLOE_ENV=NAME``
or ``--env NAME``; docs/envs.md, "Maintenance, erasure, other readers"). Read through
pyiceberg from the catalog's metadata (refs and table properties), so no Spark job runs
and a command that needs no warehouse otherwise stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from floe.envs.core import CREATED_PROPERTY, load
from floe.runtime.session import SCHEMAS
from floe.runtime.settings import Settings

ON_BRANCH = "branch"  # the environment rebuilt the table: it reads its branch
FROM_MAIN = "main"  # not rebuilt: read from production (zero-copy defer)
ONLY_HERE = "environment only"  # made by the environment; main holds it empty


@dataclass(frozen=True)
class EnvPlacement:
    name: str
    branch: str
    tables: dict[str, str] = field(default_factory=dict)  # schema.table -> where

    def on_branch(self) -> list[str]:
        return sorted(t for t, where in self.tables.items() if where != FROM_MAIN)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "branch": self.branch, "tables": dict(self.tables)}


def placement(settings: Settings, name: str, schemas: tuple[str, ...] = SCHEMAS) -> EnvPlacement:
    """Every Iceberg table of floe's ``schemas``: read on ``name``'s branch or from main."""
    from pyiceberg.exceptions import NoSuchNamespaceError

    from floe.runtime.catalog import open_catalog

    env = load(settings, name)
    catalog = open_catalog(settings)
    tables: dict[str, str] = {}
    for schema in schemas:
        try:
            identifiers = catalog.list_tables(schema)
        except NoSuchNamespaceError:
            continue
        for identifier in identifiers:
            table = catalog.load_table(identifier)
            key = ".".join(identifier[-2:]).lower()
            if table.properties.get(CREATED_PROPERTY) == name:
                tables[key] = ONLY_HERE
            elif env.branch in table.refs():
                tables[key] = ON_BRANCH
            else:
                tables[key] = FROM_MAIN
    return EnvPlacement(name, env.branch, dict(sorted(tables.items())))

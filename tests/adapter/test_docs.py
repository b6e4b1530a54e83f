"""dbt docs generate on floe: the catalog of models, seeds and sources (BaseDocsGenerate)."""

from __future__ import annotations

import getpass

import pytest
from dbt.tests.adapter.basic import expected_catalog
from dbt.tests.adapter.basic.test_docs_generate import (
    BaseDocsGenerate,
    BaseDocsGenReferences,
    macros__dummy_test_sql,
    macros__macro_md,
    macros__schema_yml,
)
from dbt.tests.util import AnyInteger, AnyString

# The suite expects dbt's schema naming (`<target schema>_<custom>`); floe's adapter
# fixes schema names instead (floe__generate_schema_name), which a project may override.
DBT_SCHEMA_NAMING = """
{% macro generate_schema_name(custom_schema_name, node) -%}
    {{ default__generate_schema_name(custom_schema_name, node) }}
{%- endmacro %}
"""


# The suite's macros, plus dbt's schema naming.
DOCS_MACROS = {
    "schema.yml": macros__schema_yml,
    "macro.md": macros__macro_md,
    "dummy_test.sql": macros__dummy_test_sql,
    "generate_schema_name.sql": DBT_SCHEMA_NAMING,
}
# dbt's expected-catalog arguments as Iceberg on Spark answers them.
CATALOG_TYPES = {
    "id_type": "bigint",
    "text_type": "string",
    "time_type": "timestamp",
    "view_type": "view",
    "table_type": "table",
    "model_stats": expected_catalog.no_stats(),
}


def floe_catalog(catalog: dict) -> dict:
    """dbt's expected catalog as floe reads it from Iceberg metadata (floe.docsite.catalog):
    views record no owner (DESCRIBE shows none: null, not dbt-spark's 'None'); tables carry
    their current snapshot's statistics, views their version's time."""
    for node in catalog["nodes"].values():
        if node["metadata"]["type"] == "view":
            node["metadata"]["owner"] = None
    for node in [*catalog["nodes"].values(), *catalog["sources"].values()]:
        node["stats"] = floe_stats(node["metadata"]["type"])
    return catalog


class TestDocsGenerateFloe(BaseDocsGenerate):
    @pytest.fixture(scope="class")
    def macros(self):
        return DOCS_MACROS

    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        # role: Iceberg records the creating process's user
        return floe_catalog(
            expected_catalog.base_expected_catalog(project, role=getpass.getuser(), **CATALOG_TYPES)
        )


class TestDocsGenReferencesFloe(BaseDocsGenReferences):
    @pytest.fixture(scope="class")
    def macros(self):
        return DOCS_MACROS

    @pytest.fixture(scope="class")
    def expected_catalog(self, project):
        return floe_catalog(
            expected_catalog.expected_references_catalog(
                project, role=getpass.getuser(), bigint_type="bigint", **CATALOG_TYPES
            )
        )


def _stat(key: str, label: str, value: object) -> dict:
    return {"id": key, "label": label, "value": value, "include": True, "description": AnyString()}


def floe_stats(kind: str) -> dict:
    stats = {
        "has_stats": {**expected_catalog.no_stats()["has_stats"], "value": True},
        "last_modified": _stat(
            "last_modified", "Last changed" if kind == "view" else "Last snapshot", AnyString()
        ),
    }
    if kind == "table":
        stats["row_count"] = _stat("row_count", "Row count", AnyInteger())
        stats["num_files"] = _stat("num_files", "Data files", AnyInteger())
        stats["bytes"] = _stat("bytes", "Bytes", AnyInteger())
    return stats

"""Docs coverage: every model, column, source, seed, snapshot and macro is described.

Reads dbt's ``manifest.json`` (from ``dbt parse``: no warehouse needed) and, when given,
``catalog.json`` (from ``dbt docs generate``: the columns the tables really have).
Raw feed models are documented by their feed (floe.feeds.docs). Run by ``make lint``
through ``floe docs-coverage``; a test runs it with a catalog after a full build.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

# Packages whose nodes and macros floe answers for: the project and its adapter.
DEFAULT_PACKAGES = ("floe", "dbt_floe")
RESOURCE_TYPES = ("model", "seed", "snapshot")


def parse_manifest(project_dir: Path, profiles_dir: Path) -> dict[str, Any]:
    """``dbt parse`` in-process into a scratch target; the manifest as a dict."""
    from dbt.cli.main import dbtRunner

    with tempfile.TemporaryDirectory(prefix="floe-docs-") as target:
        result = dbtRunner().invoke(
            [
                "parse",
                "--project-dir",
                str(project_dir),
                "--profiles-dir",
                str(profiles_dir),
                "--target-path",
                target,
                "--quiet",
            ]
        )
        if not result.success:
            raise RuntimeError(f"dbt parse failed: {result.exception}")
        return dict(json.loads((Path(target) / "manifest.json").read_text()))


def _blank(text: Any) -> bool:
    return not str(text or "").strip()


def _feed_docs(manifest: Mapping[str, Any], project_dir: Path) -> dict[str, tuple[str, dict]]:
    """unique_id of each raw feed model -> (description, column docs) from its feed."""
    from floe.feeds.docs import raw_model_docs
    from floe.feeds.sources import feed_from_node

    by_source = {}
    for uid, node in manifest["sources"].items():
        feed = feed_from_node(node)
        if feed is not None:
            by_source[uid] = feed
    out = {}
    for uid, node in manifest["nodes"].items():
        parents = node.get("depends_on", {}).get("nodes", [])
        if node["resource_type"] == "model" and len(parents) == 1 and parents[0] in by_source:
            out[uid] = raw_model_docs(by_source[parents[0]], project_dir)
    return out


def check(
    manifest: Mapping[str, Any],
    project_dir: Path,
    catalog: Mapping[str, Any] | None = None,
    packages: Iterable[str] = DEFAULT_PACKAGES,
) -> list[str]:
    """Every undocumented node, column, source, macro and macro argument, one line each."""
    packages = set(packages)
    problems: list[str] = []
    feed_docs = _feed_docs(manifest, project_dir)
    catalog_nodes = {**(catalog or {}).get("nodes", {}), **(catalog or {}).get("sources", {})}
    for uid, node in sorted(manifest["nodes"].items()):
        if node["resource_type"] not in RESOURCE_TYPES or node["package_name"] not in packages:
            continue
        described, columns = feed_docs.get(uid, (node.get("description"), {}))
        columns = {
            **{n.lower(): c for n, c in columns.items()},
            **{
                name.lower(): col.get("description")
                for name, col in node.get("columns", {}).items()
                if not _blank(col.get("description")) or name.lower() not in columns
            },
        }
        where = f"{node['resource_type']} {node['name']} ({node['original_file_path']})"
        if _blank(described):
            problems.append(f"{where}: no description")
        for name, text in sorted(columns.items()):
            if _blank(text):
                problems.append(f"{where}: column {name} has no description")
        actual = catalog_nodes.get(uid, {}).get("columns", {})
        for name in sorted(actual):
            if name.lower() not in columns:
                problems.append(f"{where}: column {name} is not documented")
    for _uid, source in sorted(manifest["sources"].items()):
        if source["package_name"] not in packages:
            continue
        where = f"source {source['source_name']}.{source['name']} ({source['original_file_path']})"
        if _blank(source.get("source_description")):
            problems.append(f"source {source['source_name']}: no description")
        if _blank(source.get("description")):
            problems.append(f"{where}: no description")
        for name, col in sorted(source.get("columns", {}).items()):
            if _blank(col.get("description")):
                problems.append(f"{where}: column {name} has no description")
    for _uid, macro in sorted(manifest["macros"].items()):
        if macro["package_name"] not in packages or macro["name"].startswith("test_"):
            continue
        if macro["name"].startswith(("materialization_", "floe__", "spark__", "default__")):
            continue  # dispatch implementations and materializations document their entry point
        where = f"macro {macro['name']} ({macro['original_file_path']})"
        if _blank(macro.get("description")):
            problems.append(f"{where}: no description")
        for argument in macro.get("arguments", []):
            if _blank(argument.get("description")) or _blank(argument.get("type")):
                problems.append(
                    f"{where}: argument {argument['name']} needs a type and a description"
                )
    return sorted(set(problems))


def main_command() -> Any:
    """``floe docs-coverage``: fail (exit 1) listing every undocumented item."""
    import click

    @click.command("docs-coverage")
    @click.option(
        "--catalog",
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help="catalog.json of `dbt docs generate`: also check the columns tables really have.",
    )
    def docs_coverage(catalog: Path | None) -> None:
        """Check that every model, column, source, seed, snapshot and macro is described."""
        from floe.runtime import Settings

        project = Settings.from_env().dbt_project_dir()
        manifest = parse_manifest(project, project / "profiles")
        loaded = json.loads(catalog.read_text()) if catalog else None
        problems = check(manifest, project, loaded)
        for line in problems:
            click.echo(line)
        if problems:
            raise click.ClickException(f"{len(problems)} undocumented item(s)")
        click.echo("docs coverage: every node, column, source and macro is described")

    return docs_coverage


docs_coverage = main_command()

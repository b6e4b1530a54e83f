"""``floe lineage``: column lineage in the terminal, impact analysis for CI.

floe lineage dim_customer.email_id               # upstream, back to the landed feed
floe lineage dim_customer.email_id --downstream  # what reads it
floe lineage build                               # target/lineage.json from dbt's artifacts
floe lineage coverage                            # mart columns traced to a source
floe lineage diff --base origin/main             # columns affected by the SQL changed
floe lineage emit                                # OpenLineage events of the last dbt run
FLOE_ENV=dev floe lineage dim_customer.email_id  # each table marked: on env dev's branch or main
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from floe.lineage.graph import (
    ANY_COLUMN,
    UNKNOWN,
    Edge,
    LineageError,
    LineageGraph,
    build_from_target,
    mart_coverage,
)


def _project() -> Path:
    from floe.runtime import Settings

    return Settings.from_env().dbt_project_dir()


def _target(target_path: Path | None) -> Path:
    return target_path or _project() / "target"


def load_graph(target: Path) -> LineageGraph:
    """``target/lineage.json``, or built from ``target/manifest.json`` when it is missing
    or older than the manifest."""
    path = target / "lineage.json"
    manifest = target / "manifest.json"
    if path.exists() and (
        not manifest.exists() or path.stat().st_mtime >= manifest.stat().st_mtime
    ):
        return LineageGraph.read(path)
    graph = build_from_target(target, _project())
    graph.write(path)
    return graph


def render_tree(graph: LineageGraph, key: tuple[str, str], downstream: bool = False) -> list[str]:
    """The graph from ``key`` as an indented tree, one edge a line; a column reached
    twice is printed once and then referred to."""
    lines: list[str] = []
    seen: set[tuple[str, str]] = set()

    def label(node_id: str, column: str, kind: str = "") -> str:
        node = graph.nodes.get(node_id)
        name = node.name if node else node_id
        where = _where(graph, node_id)
        if column != ANY_COLUMN:
            return f"{name}.{column}{where}"
        # a table-level edge (count(*)): the rows of the relation, not a column
        rows = f"{name}.? (unknown column)" if kind == UNKNOWN else f"{name}.* (its rows)"
        return rows + where

    def describe(edge: Edge) -> str:
        text = edge.kind
        if edge.path:
            text += f" .{'.'.join(edge.path)}"
        detail = edge.sql or edge.note
        return f"[{text}{': ' + detail if detail else ''}]"

    def visit(current: tuple[str, str], depth: int) -> None:
        edges = graph.downstream_edges(current) if downstream else graph.upstream_edges(current)
        for edge in sorted(edges, key=lambda e: e.dst if downstream else e.src):
            nxt = edge.dst if downstream else edge.src
            arrow = "->" if downstream else "<-"
            repeat = nxt in seen and nxt[1] != ANY_COLUMN
            lines.append(
                f"{'  ' * depth}{arrow} {label(*nxt, edge.kind)} {describe(edge)}"
                + (" (see above)" if repeat else "")
            )
            if not repeat and nxt[1] != ANY_COLUMN:
                seen.add(nxt)
                visit(nxt, depth + 1)

    lines.append(label(*key))
    seen.add(key)
    visit(key, 1)
    return lines


def _where(graph: LineageGraph, node_id: str) -> str:
    """`` [on env_dev]`` / `` [from main]`` / `` [only in dev]`` in an environment."""
    where = graph.placement_of(node_id)
    if not where or graph.env is None:
        return ""
    if where == "main":
        return " [from main]"
    if where == "branch":
        return f" [on {graph.env['branch']}]"
    return f" [only in {graph.env['name']}]"


def env_summary(graph: LineageGraph) -> str:
    """One line naming the environment's tables on its branch (the rest read from main)."""
    if graph.env is None:
        return ""
    tables = graph.env.get("tables", {})
    on_branch = sorted(t for t, where in tables.items() if where != "main")
    return (
        f"environment {graph.env['name']} (branch {graph.env['branch']}): "
        f"{len(on_branch)} table(s) on the branch ({', '.join(on_branch) or 'none'}), "
        f"{len(tables) - len(on_branch)} read from main"
    )


def attach_env(graph: LineageGraph, env: str | None) -> LineageGraph:
    """Mark ``graph``'s tables with where environment ``env`` reads them (None: main).

    ``env`` defaults to ``FLOE_ENV`` at the command's edge; an unknown environment is a
    :class:`click.ClickException` naming ``floe env list``.
    """
    from floe.envs import EnvError
    from floe.envs.placement import placement
    from floe.runtime import Settings

    graph.env = None  # a lineage.json written for an environment is not reused as main
    if not env:
        return graph
    try:
        graph.env = placement(Settings.from_env(), env).to_json()
    except EnvError as exc:
        raise click.ClickException(str(exc)) from exc
    return graph


ENV_OPTION = click.option(
    "--env",
    "env",
    envvar="FLOE_ENV",
    help="Show the lineage as environment ENV reads it: each table on its branch or from "
    "main (default: FLOE_ENV).",
)


class _DefaultShow(click.Group):
    """``floe lineage <model>.<column>`` is ``floe lineage show <model>.<column>``."""

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["show", *args]
        return super().resolve_command(ctx, args)


TARGET_OPTION = click.option(
    "--target-path",
    type=click.Path(file_okay=False, path_type=Path),
    help="dbt's target folder (default: <project>/target).",
)


@click.group(cls=_DefaultShow)
def lineage() -> None:
    """Column-level lineage: `floe lineage <model>.<column> [--downstream]`."""


@lineage.command()
@click.argument("column")
@click.option("--downstream", is_flag=True, help="What reads the column (default: upstream).")
@click.option("--json", "as_json", is_flag=True, help="The edges as JSON.")
@ENV_OPTION
@TARGET_OPTION
def show(
    column: str, downstream: bool, as_json: bool, env: str | None, target_path: Path | None
) -> None:
    """The lineage of one column (<model>.<column>)."""
    try:
        graph = attach_env(load_graph(_target(target_path)), env)
        key = graph.find(column)
    except LineageError as exc:
        raise click.ClickException(str(exc)) from exc
    if as_json:
        edges = graph.walk(key, downstream=downstream)
        click.echo(
            json.dumps(
                [
                    {
                        "from": [graph.nodes[e.src[0]].name, e.src[1]],
                        "to": [graph.nodes[e.dst[0]].name, e.dst[1]],
                        "kind": e.kind,
                        "sql": e.sql,
                        "path": list(e.path),
                        "note": e.note,
                        **(
                            {
                                "from_read": graph.placement_of(e.src[0]),
                                "to_read": graph.placement_of(e.dst[0]),
                            }
                            if graph.env
                            else {}
                        ),
                    }
                    for e in edges
                ],
                indent=2,
            )
        )
        return
    if graph.env:
        click.echo(env_summary(graph))
    for line in render_tree(graph, key, downstream):
        click.echo(line)


@lineage.command()
@ENV_OPTION
@TARGET_OPTION
def build(env: str | None, target_path: Path | None) -> None:
    """Write target/lineage.json from target/manifest.json (+ catalog.json)."""
    target = _target(target_path)
    try:
        graph = attach_env(build_from_target(target, _project()), env)
    except LineageError as exc:
        raise click.ClickException(str(exc)) from exc
    graph.write(target / "lineage.json")
    click.echo(f"{target / 'lineage.json'}: {len(graph.nodes)} nodes, {len(graph.edges)} edges")
    if graph.env:
        click.echo(env_summary(graph))


@lineage.command()
@click.option("--layer", default="marts", show_default=True, help="Models folder to measure.")
@click.option("--list", "show_missing", is_flag=True, help="List the incomplete columns.")
@TARGET_OPTION
def coverage(layer: str, show_missing: bool, target_path: Path | None) -> None:
    """Share of a layer's columns whose every upstream path reaches a source."""
    try:
        graph = load_graph(_target(target_path))
    except LineageError as exc:
        raise click.ClickException(str(exc)) from exc
    complete, total, missing = mart_coverage(graph, layer)
    share = complete / total if total else 0.0
    click.echo(
        f"{layer}: {complete}/{total} columns ({share:.0%}) have a complete path to a source"
    )
    if show_missing:
        for name in missing:
            click.echo(f"  incomplete: {name}")


@lineage.command()
@click.option(
    "--base", "base_ref", help="Git ref to compare with (compiled in a scratch worktree)."
)
@click.option(
    "--base-manifest",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="manifest.json of the base (e.g. the last main build's artifacts) instead of --base.",
)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text")
@TARGET_OPTION
def diff(
    base_ref: str | None, base_manifest: Path | None, fmt: str, target_path: Path | None
) -> None:
    """Downstream columns affected by the SQL changed since a git ref."""
    from floe.lineage.diff import DiffError, compile_ref, diff_manifests, render

    if bool(base_ref) == bool(base_manifest):
        raise click.UsageError("give exactly one of --base <git ref> or --base-manifest <path>")
    project = _project()
    target = _target(target_path)
    try:
        if base_manifest is None:
            assert base_ref is not None
            base = compile_ref(project, base_ref)
        else:
            base = json.loads(base_manifest.read_text())
        head_path = target / "manifest.json"
        if not head_path.exists():
            raise DiffError(f"{head_path} does not exist: run `dbt compile` first")
        head = json.loads(head_path.read_text())
        catalog_path = target / "catalog.json"
        catalog = json.loads(catalog_path.read_text()) if catalog_path.exists() else None
        result = diff_manifests(base, head, project, catalog)
    except (DiffError, LineageError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(render(result, fmt))


@lineage.command()
@TARGET_OPTION
def emit(target_path: Path | None) -> None:
    """Send OpenLineage events for the last dbt invocation (a plain `dbt build`, say).

    Configured the OpenLineage way (OPENLINEAGE_URL, OPENLINEAGE_CONFIG, openlineage.yml);
    with nothing configured it sends nothing. A transport error is a warning, not a
    failure (docs/lineage.md, "OpenLineage").
    """
    from floe.lineage.openlineage import configured_client, dataset_namespace, emit_for_target
    from floe.runtime import Settings, open_catalog

    settings = Settings.from_env()
    client = configured_client()
    if client is None:
        click.echo(
            "OpenLineage is not configured (OPENLINEAGE_URL / openlineage.yml): nothing sent"
        )
        return
    report = emit_for_target(
        _target(target_path),
        namespace=dataset_namespace(settings.catalog_name),
        warn=lambda m: click.echo(m, err=True),
        project_dir=settings.dbt_project_dir(),
        client=client,
        # row counts and per-check assertions from the warehouse, not catalog.json
        catalog_loader=lambda: open_catalog(settings),
    )
    if report.warning is None:
        click.echo(f"OpenLineage: {report.sent} events sent")

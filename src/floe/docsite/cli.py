"""``floe docs``: dbt docs + raw feed docs + column lineage, served on localhost."""

from __future__ import annotations

import time
from pathlib import Path

import click


@click.command("docs")
@click.option("--port", default=8080, show_default=True, help="Port to serve on (0: any free).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind.")
@click.option("--no-serve", is_flag=True, help="Build the site and exit.")
@click.option(
    "--skip-generate",
    is_flag=True,
    help="Reuse target/ from an earlier `dbt docs generate` (no warehouse needed).",
)
@click.option(
    "--target-path",
    type=click.Path(file_okay=False, path_type=Path),
    help="dbt's target folder (default: <project>/target).",
)
@click.option(
    "--env",
    "env",
    envvar="FLOE_ENV",
    help="Show environment ENV: the lineage page marks each table as on its branch or "
    "read from main (default: FLOE_ENV).",
)
def docs(
    port: int,
    host: str,
    no_serve: bool,
    skip_generate: bool,
    target_path: Path | None,
    env: str | None,
) -> None:
    """Build the docs site (dbt docs generate, raw feed docs, lineage) and serve it."""
    from floe.docsite.quarantine import write_quarantine_page
    from floe.docsite.site import DocsSiteError, finish_site, generate, serve
    from floe.envs import EnvError
    from floe.envs.placement import placement
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    project = settings.dbt_project_dir()
    target = target_path or project / "target"
    try:
        shown = placement(settings, env) if env else None
    except EnvError as exc:
        raise click.ClickException(str(exc)) from exc
    try:
        if not skip_generate:
            started = time.perf_counter()
            generate(project, target)
            click.echo(f"dbt docs generate: {time.perf_counter() - started:.1f}s")
        report = finish_site(target, project, shown.to_json() if shown else None)
        if not skip_generate:
            quarantined = write_quarantine_page(get_spark(settings), target)
            click.echo(f"quarantine page: {quarantined} quarantined record(s)")
    except DocsSiteError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"docs site in {target}: {report.raw_models_documented} raw feed models documented, "
        f"lineage of {report.lineage_nodes} nodes / {report.lineage_edges} column edges; "
        f"{report.mart_columns_complete}/{report.mart_columns} mart columns traced to a source"
    )
    if shown is not None:
        on_branch = shown.on_branch()
        click.echo(
            f"environment {shown.name}: {len(on_branch)} table(s) on branch {shown.branch} "
            f"({', '.join(on_branch) or 'none'}), {len(shown.tables) - len(on_branch)} "
            "read from main"
        )
    if no_serve:
        return
    server = serve(target, host, port)
    url = f"http://{host}:{server.server_address[1]}/"
    click.echo(
        f"serving {url} (column lineage: {url}lineage.html, quarantine: "
        f"{url}quarantine.html); Ctrl-C stops"
    )
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        pass
    finally:
        server.shutdown()

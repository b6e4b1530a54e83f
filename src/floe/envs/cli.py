"""`floe env create|list|status|diff|publish|drop NAME` (docs/envs.md)."""

from __future__ import annotations

import json
import sys
from typing import Any

import click


def _session() -> tuple[Any, Any]:
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    return get_spark(settings), settings


def _fail(exc: Exception) -> None:
    click.echo(f"floe env: {exc}", err=True)
    sys.exit(1)


@click.group()
def env() -> None:
    """Environments on Iceberg branches: build with FLOE_ENV=NAME dbt build."""


@env.command()
@click.argument("name")
def create(name: str) -> None:
    """Create environment NAME (no data is copied; tables branch on first write)."""
    from floe.envs import EnvError
    from floe.envs import create as create_env

    spark, settings = _session()
    try:
        made = create_env(spark, settings, name)
    except EnvError as exc:
        _fail(exc)
    click.echo(f"environment {name}: {len(made.base)} table(s) read from main until rebuilt")
    click.echo(f"build into it with: FLOE_ENV={name} dbt build -s <selector>")


@env.command(name="list")
def list_() -> None:
    """List environments with their changed tables."""
    from floe.envs import list_envs, status

    spark, settings = _session()
    envs = list_envs(settings)
    if not envs:
        click.echo("no environments")
    for item in envs:
        st = status(spark, settings, item.name)
        state = " [publish unfinished: run floe env publish]" if st.publishing else ""
        click.echo(
            f"{item.name}  created {item.created_at}  changed: "
            f"{', '.join(st.changed) or 'nothing'}{state}"
        )


@env.command(name="status")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def status_(name: str, as_json: bool) -> None:
    """Tables NAME changed, tables whose main moved since it was created."""
    from floe.envs import EnvError, status

    spark, settings = _session()
    try:
        st = status(spark, settings, name)
    except EnvError as exc:
        _fail(exc)
    data = {
        "env": name,
        "branch": st.env.branch,
        "changed": st.changed,
        "moved": st.moved,
        "created": [t.table for t in st.tables if t.created] + st.views_created,
        "publishing": st.publishing,
    }
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    for key, value in data.items():
        click.echo(f"{key}: {value}")


@env.command()
@click.argument("name")
@click.option("--examples", default=5, show_default=True, help="Example keys per kind of change.")
@click.option("--key", "keys", multiple=True, help="table=col1,col2 when dbt declares none.")
@click.option("--manifest", type=click.Path(dir_okay=False), help="dbt manifest with the keys.")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def diff(
    name: str, examples: int, keys: tuple[str, ...], manifest: str | None, as_json: bool
) -> None:
    """Rows added, removed and changed per changed table, against main."""
    from pathlib import Path

    from floe.envs import EnvError
    from floe.envs.diff import diff_env, keys_from_manifest, render

    spark, settings = _session()
    path = Path(manifest) if manifest else settings.dbt_project_dir() / "target" / "manifest.json"
    declared = keys_from_manifest(path)
    for item in keys:
        table, _, cols = item.partition("=")
        declared[table] = [c.strip() for c in cols.split(",") if c.strip()]
    try:
        result = diff_env(spark, settings, name, declared, examples=examples)
    except EnvError as exc:
        _fail(exc)
    if as_json:
        click.echo(json.dumps([d.to_json() for d in result], indent=2, default=str))
    else:
        click.echo(render(result))


@env.command()
@click.argument("name")
@click.option("--allow-moved", is_flag=True, help="Publish although main moved since create.")
@click.option(
    "--rebuild",
    is_flag=True,
    help="If main moved since create: rebuild the environment's models on top of it "
    "(dbt build with their data tests), then publish.",
)
@click.option(
    "--select",
    "select",
    multiple=True,
    help="With --rebuild: what to rebuild (default: the changed models and their children).",
)
@click.option("--manifest", type=click.Path(dir_okay=False), help="dbt manifest (model names).")
def publish(
    name: str, allow_moved: bool, rebuild: bool, select: tuple[str, ...], manifest: str | None
) -> None:
    """Fast-forward main of every changed table to NAME's branch, then end NAME."""
    from pathlib import Path

    from floe.envs import EnvError
    from floe.envs import publish as publish_env
    from floe.envs.rebuild import publish_rebuilt

    if rebuild and allow_moved:
        _fail(EnvError("--rebuild and --allow-moved exclude each other: choose one"))
    spark, settings = _session()
    try:
        if rebuild:
            path = (
                Path(manifest)
                if manifest
                else settings.dbt_project_dir() / "target" / "manifest.json"
            )
            plan = publish_rebuilt(
                spark,
                settings,
                name,
                _dbt_build_in(name, settings),
                select=select,
                manifest=path,
                on_step=click.echo,
            )
        else:
            plan = publish_env(spark, settings, name, allow_moved=allow_moved, on_step=click.echo)
    except EnvError as exc:
        _fail(exc)
    click.echo(f"environment {name}: published {len(plan)} table(s); environment ended")


def _dbt_build_in(name: str, settings: Any) -> Any:
    """`dbt build --select ...` in-process with FLOE_ENV=name (this command is the edge
    that sets it: the adapter reads FLOE_ENV when dbt opens its connection)."""
    import os

    from floe.dbt_runner import run_dbt
    from floe.envs.rebuild import RebuildFailed

    def build(selection: list[str]) -> None:
        previous = settings.env  # this command's FLOE_ENV, as its edge read it
        os.environ["FLOE_ENV"] = name
        try:
            run = run_dbt(["build", "--select", *selection], settings=settings)
        finally:
            if previous is None:
                os.environ.pop("FLOE_ENV", None)
            else:
                os.environ["FLOE_ENV"] = previous
        if not run.success:
            raise RebuildFailed(
                f"environment {name}: the rebuild on top of main failed, nothing was "
                f"published (main is untouched): {run.failures or run.exception}. Fix it, "
                f"then `FLOE_ENV={name} dbt build --select {' '.join(selection)}` and "
                f"`floe env publish {name}`"
            )

    return build


@env.command()
@click.argument("name")
def drop(name: str) -> None:
    """Drop NAME: its branches, its own tables and views (main is untouched)."""
    from floe.envs import EnvError
    from floe.envs import drop as drop_env

    spark, settings = _session()
    try:
        removed = drop_env(spark, settings, name)
    except EnvError as exc:
        _fail(exc)
    for line in removed:
        click.echo(f"removed {line}")
    click.echo(f"environment {name} dropped")

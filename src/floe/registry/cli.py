"""``floe registry``: check schemas like a linter, sync them to a registry, show versions."""

from __future__ import annotations

from pathlib import Path

import click

from floe.registry.backends import (
    BACKENDS,
    DEFAULT_REGISTRY,
    FileRegistry,
    open_registry,
    stable_uuid,
)
from floe.registry.compat import IncompatibleSchemaError
from floe.registry.layout import SchemaSource, load_sources
from floe.runtime.settings import Settings

BACKEND_CHOICE = click.Choice(sorted(BACKENDS))


_path_option = click.option(
    "--path",
    type=click.Path(path_type=Path, file_okay=False),
    default=None,
    help="Schema directory (default: schemas/ of the dbt project).",
)


def _sources(path: Path | None, settings: Settings) -> list[SchemaSource]:
    root = path or settings.schemas_dir
    try:
        return load_sources(root)
    except FileNotFoundError as exc:
        raise click.ClickException(str(exc)) from exc


def _report(sources: list[SchemaSource]) -> int:
    """Print every violation (file: message); return how many there were."""
    count = 0
    for source in sources:
        for path, violation in source.check():
            click.echo(f"{path}: {violation}", err=True)
            count += 1
    return count


@click.group()
def registry() -> None:
    """Schemas as code (schemas/<registry>/<schema>/): check, sync, show."""


@registry.command()
@_path_option
def check(path: Path | None) -> None:
    """Check every schema's version chain against its compatibility mode."""
    sources = _sources(path, Settings.from_env())
    failures = _report(sources)
    if failures:
        click.echo(f"{failures} violation(s) in {len(sources)} schema(s)", err=True)
        raise SystemExit(1)
    for source in sources:
        click.echo(
            f"ok  {source.key:<32} {source.data_format:<4} {source.compatibility.value:<12} "
            f"{len(source.definitions)} version(s)"
        )
    click.echo(f"{len(sources)} schema(s) compatible")


@registry.command()
@click.option("--backend", type=BACKEND_CHOICE, default="local", show_default=True)
@_path_option
def sync(backend: str, path: Path | None) -> None:
    """Register new schema versions (after the check passes); re-running registers nothing."""
    settings = Settings.from_env()
    sources = _sources(path, settings)
    if _report(sources):
        click.echo("check failed: nothing registered", err=True)
        raise SystemExit(1)
    reg = open_registry(backend, settings)
    new = unchanged = 0
    for source in sources:
        known = {v.uuid for v in reg.versions(source.name, source.registry)}
        for number, schema_def in enumerate(source.schema_defs(), start=1):
            try:
                version_id = reg.register_version(schema_def)
            except IncompatibleSchemaError as exc:
                # The repo chain is fine but the registry holds a different history.
                click.echo(f"{source.key} v{number}: {exc}", err=True)
                raise SystemExit(1) from exc
            state = "unchanged" if version_id in known else "registered"
            new += state == "registered"
            unchanged += state == "unchanged"
            click.echo(f"{state:<10} {source.key} v{number} {version_id}")
    click.echo(f"{new} new version(s), {unchanged} unchanged ({backend})")


@registry.command()
@click.argument("schema")
@click.option("--backend", type=BACKEND_CHOICE, default="local", show_default=True)
@_path_option
def show(schema: str, backend: str, path: Path | None) -> None:
    """Print each version of SCHEMA ([registry/]name) with its UUID."""
    registry_name, _, name = schema.rpartition("/")
    registry_name = registry_name or DEFAULT_REGISTRY
    settings = Settings.from_env()
    reg = open_registry(backend, settings)
    versions = reg.versions(name, registry_name)
    if versions:
        click.echo(f"{registry_name}/{name} ({versions[0].data_format}, {backend})")
        for v in versions:
            click.echo(f"  v{v.version_number}  {v.uuid}")
        return
    if isinstance(reg, FileRegistry):
        # Local UUIDs are derived, so they are known before a sync.
        for source in _sources(path, settings):
            if (source.registry, source.name) == (registry_name, name) and source.definitions:
                click.echo(
                    f"{source.key} ({source.data_format}, from {source.directory}, not synced)"
                )
                for number, schema_def in enumerate(source.schema_defs(), start=1):
                    uid = stable_uuid(source.registry, source.name, number, schema_def.canonical)
                    click.echo(f"  v{number}  {uid}")
                return
    raise click.ClickException(f"no schema {registry_name}/{name} in the {backend} registry")

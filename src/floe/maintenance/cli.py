"""`floe maintain`: per-table Iceberg maintenance by the policy each table carries."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from floe.runtime.session import SCHEMAS

if TYPE_CHECKING:
    from floe.runtime import Settings


@click.command()
@click.option(
    "--schema",
    "schemas",
    multiple=True,
    help=f"Schema to maintain (repeatable; default: {', '.join(SCHEMAS)}).",
)
@click.option("--table", "tables", multiple=True, help="Only this schema.table (repeatable).")
def maintain(schemas: tuple[str, ...], tables: tuple[str, ...]) -> None:
    """Compact, rewrite manifests, expire snapshots and remove orphan files.

    Each table's policy comes from its properties (set from the model's
    `meta.maintenance` in YAML). Holds the warehouse's writer lock: builds, streams
    and erasures wait for it (docs/reliability.md).
    """
    from floe.runtime import Settings
    from floe.runtime.locking import WriterLockTimeout, writer_lock

    settings = Settings.from_env()
    try:
        with writer_lock(settings, "floe maintain"):
            _maintain(settings, schemas, tables)
    except WriterLockTimeout as exc:
        raise click.ClickException(str(exc)) from exc


def _maintain(settings: Settings, schemas: tuple[str, ...], tables: tuple[str, ...]) -> None:
    from floe.maintenance.core import maintain_table, tables_in
    from floe.runtime import get_spark

    spark = get_spark(settings)
    targets = list(tables) or tables_in(spark, schemas or SCHEMAS)
    if not targets:
        click.echo("no Iceberg tables found")
        return
    failed = []
    for i, table in enumerate(targets, 1):
        click.echo(f"[{i}/{len(targets)}] {table} ...", err=True)
        try:
            click.echo(maintain_table(spark, table, catalog=settings.catalog_name).line())
        except Exception as exc:  # one table's failure must not stop the others
            failed.append(table)
            click.echo(f"{table}: FAILED {type(exc).__name__}: {exc}", err=True)
    if failed:
        click.echo(f"maintenance failed for: {', '.join(failed)}", err=True)
        sys.exit(1)

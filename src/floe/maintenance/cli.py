"""`floe maintain`: per-table Iceberg maintenance by the policy each table carries."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import click

from floe.runtime.session import SCHEMAS

if TYPE_CHECKING:
    from floe.maintenance.core import PeerReferences
    from floe.runtime import Settings


@click.command()
@click.option(
    "--schema",
    "schemas",
    multiple=True,
    help=f"Schema to maintain (repeatable; default: {', '.join(SCHEMAS)}).",
)
@click.option("--table", "tables", multiple=True, help="Only this schema.table (repeatable).")
@click.option(
    "--env-max-age-days",
    type=float,
    default=14.0,
    show_default=True,
    help="Drop environments (floe env) with no build for this long; 0 keeps them all.",
)
def maintain(schemas: tuple[str, ...], tables: tuple[str, ...], env_max_age_days: float) -> None:
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
            _expire_envs(settings, env_max_age_days)
            _maintain(settings, schemas, tables)
    except WriterLockTimeout as exc:
        raise click.ClickException(str(exc)) from exc


def _expire_envs(settings: Settings, max_age_days: float) -> None:
    """Abandoned environments go first, so expiry can reclaim their snapshots."""
    from floe.envs import expire_abandoned, list_envs
    from floe.runtime import get_spark

    if max_age_days <= 0 or not list_envs(settings):
        return
    for name in expire_abandoned(get_spark(settings), settings, max_age_days):
        click.echo(f"environment {name}: no build for {max_age_days:g} days, dropped")


def _maintain(settings: Settings, schemas: tuple[str, ...], tables: tuple[str, ...]) -> None:
    from floe.maintenance.core import maintain_table
    from floe.runtime import get_spark
    from floe.runtime.tables import tables_in

    spark = get_spark(settings)
    peers = _peers(settings)
    targets = list(tables) or tables_in(spark, schemas or SCHEMAS)
    if not targets:
        click.echo("no Iceberg tables found")
        return
    failed = []
    for i, table in enumerate(targets, 1):
        click.echo(f"[{i}/{len(targets)}] {table} ...", err=True)
        try:
            report = maintain_table(spark, table, catalog=settings.catalog_name, peers=peers)
            click.echo(report.line())
        except Exception as exc:  # one table's failure must not stop the others
            failed.append(table)
            click.echo(f"{table}: FAILED {type(exc).__name__}: {exc}", err=True)
    if failed:
        click.echo(f"maintenance failed for: {', '.join(failed)}", err=True)
        sys.exit(1)


def _peers(settings: Settings) -> PeerReferences | None:
    """What the other catalogs on this warehouse reference (``floe catalog migrate``'s
    sources), kept by maintenance; None when there are none."""
    from floe.maintenance.core import peer_references
    from floe.runtime.catalog import CatalogDatabase, open_catalog_at
    from floe.runtime.catalog_migration import peer_catalogs

    uris = peer_catalogs(CatalogDatabase.of(settings), settings.catalog_name)
    if not uris:
        return None
    catalogs = []
    try:
        for uri in uris:
            database = CatalogDatabase(uri, settings.catalog_user, settings.catalog_password)
            try:
                catalogs.append(
                    open_catalog_at(database, settings.warehouse, settings.catalog_name)
                )
            except Exception as exc:
                raise click.ClickException(
                    f"cannot read the catalog {database.display}, which shares this warehouse "
                    f"(a source of `floe catalog migrate`): {exc}. Maintenance would delete "
                    "files it still references, so nothing was maintained; make it readable, "
                    "or remove its row from floe_catalog_peers once nothing reads it "
                    '(docs/cluster.md, "Catalog migration").'
                ) from exc
        refs = peer_references(catalogs)
    finally:
        for catalog in catalogs:
            catalog.close()
    click.echo(
        f"keeping what {len(uris)} other catalog(s) on this warehouse reference: "
        f"{len(refs.files)} files",
        err=True,
    )
    return refs

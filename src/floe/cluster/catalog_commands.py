"""``floe catalog migrate | fingerprint`` (``docs/cluster.md``, "Catalog migration")."""

from __future__ import annotations

import json

import click

from floe.runtime.settings import SQLITE_URI_PARAMS, Settings


@click.group()
def catalog() -> None:
    """The Iceberg catalog: move it to PostgreSQL, fingerprint its tables."""


@catalog.command()
@click.option(
    "--to",
    "to_uri",
    required=True,
    help="Target catalog JDBC URI, e.g. jdbc:postgresql://host:5432/floe.",
)
@click.option(
    "--from",
    "from_uri",
    help="Source catalog JDBC URI [FLOE_CATALOG_URI when it is SQLite, "
    "else $FLOE_HOME/catalog.db].",
)
@click.option(
    "--user", help="Target user [FLOE_CATALOG_USER]; the password is FLOE_CATALOG_PASSWORD."
)
@click.option("--dry-run", is_flag=True, help="Say what would be copied; write nothing.")
def migrate(to_uri: str, from_uri: str | None, user: str | None, dry_run: bool) -> None:
    """Copy the catalog's table and view entries into another database.

    The warehouse files stay where they are: only the pointers to each table's current
    metadata move. Idempotent; refuses (writing nothing) if the target holds another
    version of a table. Afterwards pyiceberg loads every table from the target.
    """
    from floe.runtime.catalog import CatalogDatabase, CatalogUriError
    from floe.runtime.catalog_migration import CatalogMigrationError, migrate_catalog

    settings = Settings.from_env()
    if from_uri is None:
        from_uri = (
            settings.catalog_uri
            if settings.is_sqlite
            else f"jdbc:sqlite:{settings.home / 'catalog.db'}?{SQLITE_URI_PARAMS}"
        )
    source = CatalogDatabase(from_uri)
    target = CatalogDatabase(to_uri, user or settings.catalog_user, settings.catalog_password)
    try:
        report = migrate_catalog(
            source,
            target,
            catalog_name=settings.catalog_name,
            warehouse=settings.warehouse,
            dry_run=dry_run,
        )
    except (CatalogMigrationError, CatalogUriError) as exc:
        raise click.ClickException(str(exc)) from exc
    verb = "would copy" if dry_run else "copied"
    click.echo(f"{report.source} -> {report.target}")
    click.echo(f"{verb} {len(report.copied)} entries, {len(report.namespaces_copied)} namespaces")
    for name in report.copied:
        click.echo(f"  + {name}")
    if report.already_present:
        click.echo(f"already there (same metadata): {len(report.already_present)}")
    if not dry_run:
        click.echo(f"verified with pyiceberg: {len(report.verified)} tables")


@catalog.command()
@click.option("--json", "json_path", type=click.Path(dir_okay=False), help="Also write JSON here.")
def fingerprint(json_path: str | None) -> None:
    """Rows and an order-independent checksum of every table (pyiceberg, no Spark).

    Volatile columns (load timestamps, run ids, snapshot ids) are left out, so two
    builds of the same landed files print the same lines.
    """
    from floe.runtime.tables import lakehouse_fingerprints

    prints = lakehouse_fingerprints(Settings.from_env())
    for name, fp in prints.items():
        click.echo(f"{name:<48} {fp.rows:>10}  {fp.checksum:016x}")
    if json_path:
        with open(json_path, "w") as out:
            json.dump({k: v.to_json() for k, v in prints.items()}, out, indent=2, sort_keys=True)

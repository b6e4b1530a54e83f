"""`floe build`: demo data for feeds with nothing landed, `dbt build`, a summary."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from floe.runtime import SCHEMAS, Settings

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _missing_feeds(settings: Settings) -> list[str]:
    """Declared feeds with nothing landed yet (ids, e.g. ``streams.ventilator``)."""
    from floe.feeds import load_feeds
    from floe.runtime import Settings

    def landed(folder: Path) -> bool:
        return folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))

    return [
        f.id
        for f in load_feeds(Settings.from_env().dbt_project_dir())
        if not landed(settings.landing / f.landing)
    ]


def table_summary(spark: SparkSession) -> list[tuple[str, int, int | None]]:
    """(schema.table, rows, current snapshot id) for every table in floe's schemas."""
    rows = []
    for schema in SCHEMAS:
        for table in spark.sql(f"show tables in {schema}").collect():
            if table.isTemporary:
                continue
            name = f"{schema}.{table.tableName}"
            count = spark.sql(f"select count(*) from {name}").collect()[0][0]
            snap = spark.sql(
                f"select snapshot_id from {name}.snapshots order by committed_at desc limit 1"
            ).collect()
            rows.append((name, count, snap[0][0] if snap else None))
    return rows


@click.command()
@click.option("--days", default=5, show_default=True, help="Demo days, if generating.")
@click.option("--scale", default=1000, show_default=True, help="Demo scale, if generating.")
@click.option("--select", "-s", multiple=True, help="dbt selection (default: everything).")
@click.option("--full-refresh", is_flag=True, help="Rebuild incremental models from scratch.")
@click.option(
    "--unit-tests/--no-unit-tests",
    default=False,
    show_default=True,
    help="Also run the project's dbt unit tests (they check SQL logic on fixtures, not the "
    "data; `make test` and a plain `dbt build` run them).",
)
def build(
    days: int, scale: int, select: tuple[str, ...], full_refresh: bool, unit_tests: bool
) -> None:
    """Generate demo data if the landing zone is empty, then dbt build on `local`.

    The pipeline run: models and their data tests, without the dbt unit tests unless
    asked (dbt's advice for production builds; docs/decisions/0018-nothing-new-memo.md).
    """
    from functools import partial

    from floe.dbt import run_dbt
    from floe.generator import GenerateOptions, generate
    from floe.lineage.openlineage import after_dbt
    from floe.runtime import get_spark
    from floe.runtime.locking import WriterLockTimeout, writer_lock

    settings = Settings.from_env()
    missing = _missing_feeds(settings)
    if missing:
        opts = GenerateOptions(landing=settings.landing, days=days, scale=scale)
        report = generate(opts, missing)
        click.echo(f"generated {len(report.written)} demo files for {', '.join(missing)}")
    started = time.perf_counter()
    spark = get_spark(settings)
    click.echo(
        f"Spark ready in {time.perf_counter() - started:.1f}s (catalog {settings.catalog_uri})"
    )
    args = ["build"]
    for sel in select:
        args += ["--select", sel]
    if full_refresh:
        args.append("--full-refresh")
    if not unit_tests:
        args += ["--exclude-resource-type", "unit_test"]
    # Held across dbt; the adapter's own acquisition re-enters it.
    try:
        with writer_lock(settings, "floe build"):
            warn = partial(click.echo, err=True)
            emit = after_dbt(settings.catalog_name, warn, settings.dbt_project_dir())
            run = run_dbt(args, settings=settings, finish=emit)
    except WriterLockTimeout as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"dbt build: {run.seconds:.1f}s, first node after "
        f"{run.first_node_seconds or 0:.1f}s, {'ok' if run.success else 'FAILED'}"
    )
    click.echo(f"\n{'table':<48} {'rows':>10}  snapshot")
    for name, count, snap in table_summary(spark):
        click.echo(f"{name:<48} {count:>10}  {snap}")
    if not run.success:
        for failure in run.failures:
            click.echo(f"FAILED {failure}", err=True)
        if run.exception:
            click.echo(f"dbt error: {run.exception}", err=True)
        raise SystemExit(1)

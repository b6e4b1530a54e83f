"""`floe build`: demo data for feeds with nothing landed, `dbt build`, a summary."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import click

from floe.dbt_runner import run_dbt
from floe.feeds import load_feeds
from floe.generator import GenerateOptions, default_jobs, generate
from floe.lineage.openlineage import after_dbt
from floe.runtime import SCHEMAS, Settings, get_spark, open_catalog
from floe.runtime.locking import WriterLockTimeout, writer_lock

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _missing_feeds(settings: Settings) -> list[str]:
    """Declared feeds with nothing landed yet (ids, e.g. ``streams.ventilator``)."""

    def landed(folder: Path) -> bool:
        return folder.is_dir() and any(p.is_file() for p in folder.rglob("*"))

    return [
        f.id
        for f in load_feeds(settings.dbt_project_dir())
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


@dataclass(frozen=True)
class FeedIntake:
    """What a feed's ledger says it took in: records loaded and quarantined, and the
    quarantine's most frequent error codes (code, records), most frequent first."""

    feed: str
    loaded: int
    quarantined: int
    top_codes: tuple[tuple[str, int], ...]

    def line(self) -> str:
        codes = ", ".join(f"{code} {n}" for code, n in self.top_codes) or "-"
        return f"{self.feed:<32} {self.loaded:>10} {self.quarantined:>11}  {codes}"


def intake_summary(spark: SparkSession, top: int = 3) -> list[FeedIntake]:
    """Per feed, from ``raw.landed_files`` and ``raw.quarantine``: loaded, quarantined and
    the ``top`` error codes (empty when nothing was ingested yet)."""
    from pyspark.sql import functions as F

    from floe.feeds.ledger import LANDED_FILES, QUARANTINE

    if not spark.catalog.tableExists(LANDED_FILES):
        return []
    totals = (
        spark.table(LANDED_FILES)
        .groupBy("feed")
        .agg(F.sum("loaded").alias("loaded"), F.sum("quarantined").alias("quarantined"))
        .collect()
    )
    codes: dict[str, list[tuple[str, int]]] = {}
    if spark.catalog.tableExists(QUARANTINE):
        for row in (
            spark.table(QUARANTINE)
            .groupBy("feed", F.coalesce("error_code", F.lit("unknown")).alias("code"))
            .count()
            .collect()
        ):
            codes.setdefault(row.feed, []).append((row.code, int(row["count"])))
    return [
        FeedIntake(
            feed=row.feed,
            loaded=int(row.loaded or 0),
            quarantined=int(row.quarantined or 0),
            top_codes=tuple(sorted(codes.get(row.feed, []), key=lambda c: (-c[1], c[0]))[:top]),
        )
        for row in sorted(totals, key=lambda r: r.feed)
    ]


def intake_lines(intakes: list[FeedIntake]) -> list[str]:
    """The build summary's intake table: one line per feed, then the totals."""
    if not intakes:
        return []
    lines = [f"\n{'feed':<32} {'loaded':>10} {'quarantined':>11}  top error codes"]
    lines += [i.line() for i in intakes]
    loaded = sum(i.loaded for i in intakes)
    quarantined = sum(i.quarantined for i in intakes)
    lines.append(f"{'(all feeds)':<32} {loaded:>10} {quarantined:>11}  see raw.quarantine")
    return lines


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
    settings = Settings.from_env()
    missing = _missing_feeds(settings)
    if missing:
        opts = GenerateOptions.for_settings(
            settings, days=days, scale=scale, jobs=default_jobs(scale)
        )
        report = generate(opts, missing)
        click.echo(f"generated {len(report.written)} demo files for {', '.join(missing)}")
    args = ["build"]
    for sel in select:
        args += ["--select", sel]
    if full_refresh:
        args.append("--full-refresh")
    if not unit_tests:
        args += ["--exclude-resource-type", "unit_test"]
    # Held across the session start (it creates the fixed schemas: a catalog write) and
    # dbt; the adapter's own acquisition re-enters it (docs/reliability.md).
    try:
        with writer_lock(settings, "floe build"):
            started = time.perf_counter()
            spark = get_spark(settings)
            click.echo(
                f"Spark ready in {time.perf_counter() - started:.1f}s "
                f"(catalog {settings.catalog_uri})"
            )
            warn = partial(click.echo, err=True)
            emit = after_dbt(
                settings.catalog_name,
                warn,
                settings.dbt_project_dir(),
                catalog_loader=partial(open_catalog, settings),
            )
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
    for line in intake_lines(intake_summary(spark)):
        click.echo(line)
    if not run.success:
        for failure in run.failures:
            click.echo(f"FAILED {failure}", err=True)
        if run.exception:
            click.echo(f"dbt error: {run.exception}", err=True)
        raise SystemExit(1)

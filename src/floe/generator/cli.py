"""`floe generate`: write demo landing files."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import click

from floe.feeds import FeedError
from floe.generator import GenerateOptions, LandingConflictError, default_jobs
from floe.generator import generate as run
from floe.runtime import Settings


@click.command()
@click.option("--days", default=3, show_default=True, help="Number of load dates.")
@click.option("--scale", default=1000, show_default=True, help="Customers (rows) per domain.")
@click.option("--seed", default=42, show_default=True, help="Random seed (same seed, same bytes).")
@click.option("--start", default="2022-07-01", show_default=True, help="First load date.")
@click.option(
    "--bad-share", default=0.01, show_default=True, help="Share of deliberately bad records."
)
@click.option(
    "--only",
    multiple=True,
    help="Generate only these feeds: a source (streams), a feed (ventilator) or an id "
    "(streams.ventilator); repeatable. Default: every declared feed.",
)
@click.option("--landing", type=click.Path(), help="Landing root (default $FLOE_LANDING).")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    help="Feeds written side by side, one process each (default: one per core from "
    "--scale 50000 up, else 1). The files are the same whatever the value.",
)
def generate(
    days: int,
    scale: int,
    seed: int,
    start: str,
    bad_share: float,
    only: tuple[str, ...],
    landing: str | None,
    jobs: int | None,
) -> None:
    """Write deterministic landing files for DAYS load dates at SCALE."""
    settings = Settings.from_env()
    opts = GenerateOptions.for_settings(
        settings,
        days=days,
        scale=scale,
        seed=seed,
        start=date.fromisoformat(start),
        bad_share=bad_share,
        jobs=jobs or default_jobs(scale),
    )
    if landing:
        opts = replace(opts, landing=Path(landing))
    root = opts.landing
    try:
        report = run(opts, list(only))
    except (LandingConflictError, FeedError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"landing {root}: {len(report.written)} files written, "
        f"{len(report.unchanged)} already landed"
    )

"""`floe dq`: suggest checks from a profile, validate a migration, run checks ad hoc."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import yaml

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _resolve_table(spark: SparkSession, name: str) -> str:
    """`schema.table` as given, or the one fixed schema holding a table called `name`."""
    if "." in name:
        return name
    from floe.runtime import SCHEMAS

    found = [f"{s}.{name}" for s in SCHEMAS if spark.catalog.tableExists(f"{s}.{name}")]
    if len(found) != 1:
        where = ", ".join(found) if found else "no schema"
        raise click.ClickException(f"model {name!r} found in {where}; pass schema.table")
    return found[0]


@click.group()
def dq() -> None:
    """Data quality: Deequ-style checks, profiles and migration validation."""


@dq.command()
@click.argument("model")
@click.option("--low-cardinality", default=10, show_default=True, help="Max values for IN-lists.")
def suggest(model: str, low_cardinality: int) -> None:
    """Profile MODEL (a model name or schema.table) and print checks YAML to paste."""
    from floe.quality.suggest import suggest_checks, suggestion_yaml
    from floe.runtime import Settings, get_spark

    spark = get_spark(Settings.from_env())
    table = _resolve_table(spark, model)
    checks, prof = suggest_checks(spark.table(table), low_cardinality=low_cardinality)
    click.echo(suggestion_yaml(table, checks, prof), nl=False)


@dq.command()
@click.argument("source")
@click.argument("target")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["table", "csv", "parquet", "json", "orc"]),
    help="Format of a path argument (default: from the file suffix; names are tables).",
)
@click.option("--source-format", type=click.Choice(["table", "csv", "parquet", "json", "orc"]))
@click.option("--name", "table_name", help="table_name in the result (default: target's name).")
@click.option("--no-store", is_flag=True, help="Do not append to dq.migration_validation_result.")
def compare(
    source: str,
    target: str,
    fmt: str | None,
    source_format: str | None,
    table_name: str | None,
    no_store: bool,
) -> None:
    """Validate a migration: profile SOURCE and TARGET (tables or landed files), compare.

    Writes dq.migration_validation_result and prints the seed's two summaries. Exits 1
    when any column does not match.
    """
    from floe.quality.migration import SourceNotFoundError, load, summary, validate_migration
    from floe.runtime import Settings, get_spark

    spark = get_spark(Settings.from_env())
    try:
        src = load(spark, source, source_format or (fmt if Path(source).exists() else None))
        tgt = load(spark, target, fmt)
    except SourceNotFoundError as exc:
        raise click.ClickException(str(exc)) from exc
    name = table_name or Path(target.rstrip("/")).stem.split(".")[-1]
    rows = validate_migration(spark, src, tgt, table_name=name, store=not no_store)
    totals = summary(rows)
    click.echo("\t".join(["table_name", *totals]))
    click.echo("\t".join([name, *(str(v) for v in totals.values())]))
    click.echo("")
    header = (
        "col_name",
        "src_datatype",
        "tgt_datatype",
        "src_completeness",
        "tgt_completeness",
        "src_approx_distinct_values",
        "tgt_approx_distinct_values",
        "status",
    )
    click.echo("\t".join(header))
    for r in rows:
        click.echo("\t".join("" if getattr(r, h) is None else str(getattr(r, h)) for h in header))
    if totals["non-matching columns"]:
        sys.exit(1)


@dq.command()
@click.argument("model")
@click.option(
    "--checks",
    "checks_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="YAML: a list of checks, or a mapping with `floe_checks:` (e.g. suggest's output).",
)
@click.option("--no-store", is_flag=True, help="Do not append to dq.metrics / dq.check_results.")
def run(model: str, checks_file: Path, no_store: bool) -> None:
    """Run checks on MODEL now; exit 1 if an error-severity check fails."""
    from floe.quality.verification import verify
    from floe.runtime import Settings, get_spark

    spark = get_spark(Settings.from_env())
    table = _resolve_table(spark, model)
    checks = _checks_from_yaml(yaml.safe_load(checks_file.read_text()))
    result = verify(spark, table, checks, store=not no_store)
    for r in result.results:
        click.echo(f"{r.status.upper():5} {r.message}")
    if result.errors:
        sys.exit(1)


def _checks_from_yaml(doc: Any) -> list[Any]:
    """The check list wherever it sits: a list, `floe_checks:`, or under config/meta."""
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in ("floe_checks", "meta", "config"):
            if key in doc:
                return _checks_from_yaml(doc[key])
    raise click.ClickException("no checks found (expected a list or a `floe_checks:` key)")

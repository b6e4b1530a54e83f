"""``floe forget``, ``floe rectify`` and ``floe privacy scan|read|log|keygen``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from floe.privacy.erasure import Outcome

MANIFEST_HELP = "manifest.json to read the tags from (default: `dbt parse` of the project)."


def _fail(exc: Exception) -> click.ClickException:
    return click.ClickException(f"{type(exc).__name__}: {exc}")


def _errors() -> tuple[type[Exception], ...]:
    from floe.privacy.erasure import ErasureError
    from floe.privacy.masking import MaskingError
    from floe.privacy.secrets import PrivacyConfigError
    from floe.privacy.subject import SubjectError
    from floe.privacy.tags import PrivacyTagError

    return (SubjectError, PrivacyTagError, PrivacyConfigError, MaskingError, ErasureError)


def _progress(message: str) -> None:
    click.echo(message, err=True)


def _emit(outcome: Outcome, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(outcome.as_dict(), indent=2, sort_keys=True, default=str))
    else:
        click.echo(outcome.render())


def _session(manifest: Path | None) -> tuple[Any, Any, Any]:
    from floe.privacy.follow import load_tags_followed
    from floe.runtime import Settings, get_spark

    settings = Settings.from_env()
    # subject keys reach every table that copies them, through column lineage
    tags, _followed = load_tags_followed(settings, manifest)
    return settings, tags, get_spark(settings)


@click.command()
@click.option("--subject", required=True, help="<subject key>=<value>, e.g. customer_id=42.")
@click.option("--dry-run", is_flag=True, help="List what would be removed; change nothing.")
@click.option(
    "--include-landing",
    is_flag=True,
    help="Also rewrite the landed files holding the subject (without it they are only listed).",
)
@click.option(
    "--include-untagged",
    is_flag=True,
    help="Also erase from tables whose column is named like a subject column but untagged.",
)
@click.option(
    "--no-landing-scan",
    is_flag=True,
    help="List only the landed files the raw rows name (skip scanning every landed file).",
)
@click.option(
    "--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), help=MANIFEST_HELP
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def forget(
    subject: str,
    dry_run: bool,
    include_landing: bool,
    include_untagged: bool,
    no_landing_scan: bool,
    manifest: Path | None,
    as_json: bool,
) -> None:
    """Erase a data subject from every table, snapshot and (optionally) landed file.

    Deletes the subject's rows from raw, quarantine, staging tables, marts and SCD2
    history, then rewrites merge-on-read files, expires snapshots and removes orphan
    files of every touched table, and records the erasure in audit.erasure_log.
    Re-running finishes an interrupted erasure; after a complete one it changes nothing.
    Run it while nothing else writes the lakehouse (docs/privacy.md).
    """
    from floe.privacy.erasure import forget as run_forget
    from floe.privacy.subject import Subject

    try:
        parsed = Subject.parse(subject)
        settings, tags, spark = _session(manifest)
        outcome = run_forget(
            spark,
            settings,
            tags,
            parsed,
            dry_run=dry_run,
            include_landing=include_landing,
            include_untagged=include_untagged,
            scan_landing=not no_landing_scan,
            progress=_progress,
        )
    except _errors() as exc:
        raise _fail(exc) from exc
    _emit(outcome, as_json)


@click.command()
@click.option("--subject", required=True, help="<subject key>=<value>, e.g. customer_id=51936.")
@click.option(
    "--set",
    "sets",
    multiple=True,
    required=True,
    help="<column>=<value> to write on every row of the subject (repeatable).",
)
@click.option("--dry-run", is_flag=True, help="List what would change; change nothing.")
@click.option("--include-untagged", is_flag=True, help="Also tables matched by column name only.")
@click.option(
    "--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), help=MANIFEST_HELP
)
@click.option("--json", "as_json", is_flag=True, help="Print the outcome as JSON.")
def rectify(
    subject: str,
    sets: tuple[str, ...],
    dry_run: bool,
    include_untagged: bool,
    manifest: Path | None,
    as_json: bool,
) -> None:
    """Correct a data subject's values everywhere (e.g. --set phonenumber='000').

    Every table holding the subject and the column is updated (masked twins get the
    masked value); old values are then purged from every snapshot as in an erasure.
    """
    from floe.privacy.erasure import parse_sets
    from floe.privacy.erasure import rectify as run_rectify
    from floe.privacy.subject import Subject

    try:
        parsed = Subject.parse(subject)
        changes = parse_sets(sets)
        settings, tags, spark = _session(manifest)
        outcome = run_rectify(
            spark,
            settings,
            tags,
            parsed,
            changes,
            dry_run=dry_run,
            include_untagged=include_untagged,
            progress=_progress,
        )
    except _errors() as exc:
        raise _fail(exc) from exc
    _emit(outcome, as_json)


@click.group()
def privacy() -> None:
    """PII tags, scans, masked reads and the erasure log (docs/privacy.md)."""


@privacy.command()
@click.option(
    "--static",
    "static_only",
    is_flag=True,
    help="Column names only: no warehouse needed (what `make lint` runs).",
)
@click.option("--sample", default=1000, show_default=True, help="Rows sampled per table.")
@click.option(
    "--fail-on",
    type=click.Choice(["feeds+marts", "marts", "all", "none"]),
    default="feeds+marts",
    show_default=True,
    help="Layers where an untagged finding fails the scan (feeds: the raw layer).",
)
@click.option(
    "--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), help=MANIFEST_HELP
)
def scan(static_only: bool, sample: int, fail_on: str, manifest: Path | None) -> None:
    """Find columns that look like PII (by name, and by sampled values) but are untagged."""
    from floe.privacy.follow import follow_subject_keys, lineage_for_manifest
    from floe.privacy.scan import FAIL_LAYERS, scan_names, scan_values
    from floe.privacy.tags import PrivacyTagError, PrivacyTags, load_manifest
    from floe.runtime import SCHEMAS, Settings, open_catalog

    settings = Settings.from_env()
    data = load_manifest(settings, manifest)
    try:
        tags = PrivacyTags.from_manifest(data)
    except PrivacyTagError as exc:
        raise _fail(exc) from exc
    # a column copying a tagged subject key downstream is tagged through lineage
    follow_subject_keys(tags, lineage_for_manifest(data, settings.dbt_project_dir()))
    feed_cols, unread = _feed_columns(data, settings)
    findings = scan_names(tags, feed_cols)
    if not static_only:
        findings += scan_values(open_catalog(settings), tags, SCHEMAS, sample)
    layers = {
        "feeds+marts": FAIL_LAYERS,
        "marts": ("marts",),
        "all": tuple(SCHEMAS),
        "none": (),
    }[fail_on]
    failing = [f for f in findings if f.fails(layers)]
    for finding in findings:
        if not finding.tagged:
            click.echo(("FAIL " if finding.fails(layers) else "warn ") + finding.line())
    tagged = sum(1 for f in findings if f.tagged)
    click.echo(
        f"privacy scan: {len(findings)} column(s) look personal, {tagged} tagged, "
        f"{len(findings) - tagged} untagged ({len(failing)} failing in {', '.join(layers) or 'no layer'})"
    )
    for problem in unread:  # a feed whose columns could not be read was not scanned
        click.echo(f"FAIL {problem}")
    if unread:
        raise click.ClickException(
            f"{len(unread)} feed problem(s) kept columns from the scan: fix them (above)"
        )
    if failing:
        raise click.ClickException(
            f"{len(failing)} untagged personal column(s) in {', '.join(layers)}: add the "
            "proposed tags to their YAML (docs/privacy.md), or `pii: false` where a column "
            "is not personal"
        )


def _feed_columns(
    manifest: dict[str, Any], settings: Any
) -> tuple[dict[str, list[str]], list[str]]:
    """raw.<feed> -> every column its raw model has (declared, registry fields,
    provenance), and the problems that kept a feed's columns from being read."""
    from floe.feeds.docs import raw_model_docs
    from floe.feeds.sources import feed_from_node
    from floe.lineage.feeds import feed_columns

    project = settings.dbt_project_dir()
    out: dict[str, list[str]] = {}
    problems: list[str] = []
    for node in manifest.get("sources", {}).values():
        feed = feed_from_node(node)
        if feed is not None:
            columns = {c.name for c in feed.columns}
            # a stream's fields are its registry schema's, not its YAML's
            fields, unread = feed_columns(feed, project)
            columns |= set(fields)
            problems += [f"{feed.raw_table}: {problem}" for problem in unread]
            try:
                columns |= set(raw_model_docs(feed, project)[1])
            except (OSError, ValueError) as exc:
                if not unread:  # the same missing schema, said once
                    problems.append(f"{feed.raw_table}: its raw model's columns: {exc}")
            out[feed.raw_table] = sorted(columns)
    return out, problems


@privacy.command()
def keygen() -> None:
    """Print a fresh FLOE_PRIVACY_SALT and FLOE_PRIVACY_KEY (put them in your secret store)."""
    from floe.privacy.secrets import KEY_VAR, SALT_VAR, new_key, new_salt

    click.echo(f"{SALT_VAR}={new_salt()}")
    click.echo(f"{KEY_VAR}={new_key()}")


@privacy.command("read")
@click.argument("table")
@click.option("--limit", default=20, show_default=True, help="Rows to print.")
@click.option(
    "--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), help=MANIFEST_HELP
)
def read_table(table: str, limit: int, manifest: Path | None) -> None:
    """Print TABLE (schema.name) as an analyst sees it: sensitive and private columns masked."""
    from floe.privacy.access import MaskedReader
    from floe.runtime import Settings

    try:
        arrow = MaskedReader.open(Settings.from_env(), manifest=manifest).read(table, limit=limit)
    except _errors() as exc:
        raise _fail(exc) from exc
    for row in arrow.to_pylist():
        click.echo(json.dumps(row, default=str, ensure_ascii=False))


@privacy.command("log")
@click.option("--limit", default=20, show_default=True, help="Most recent rows to print.")
def show_log(limit: int) -> None:
    """Print the most recent rows of audit.erasure_log (hashed subjects only)."""
    from floe.privacy.log import LOG_TABLE
    from floe.runtime import Settings, open_catalog

    catalog = open_catalog(Settings.from_env())
    if not catalog.table_exists(tuple(LOG_TABLE.split("."))):
        click.echo(f"{LOG_TABLE} does not exist yet: no erasure has run")
        return
    rows = catalog.load_table(tuple(LOG_TABLE.split("."))).scan().to_arrow().to_pylist()
    rows.sort(key=lambda r: r["requested_at"], reverse=True)
    for row in rows[:limit]:
        tables = ", ".join(f"{t['table_name']}:{t['rows']}" for t in row["tables"] or [])
        click.echo(
            f"{row['requested_at']} {row['operation']} {row['subject_key']}#{row['subject_hash'][:12]} "
            f"{row['status']} id={row['erasure_id']} [{tables}]"
        )
    sys.stdout.flush()

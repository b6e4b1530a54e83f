"""The `floe` command line: one entry point, one subcommand per room.

Subcommands are imported lazily so that `floe registry ...` does not pay for
importing PySpark, and a broken room does not take the whole CLI down.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import partial
from typing import Any

import click

from floe import DISTRIBUTION, __version__, privacy
from floe.runtime import add_session_hook

# name -> ("module:attribute" of a click command or group, one-line help).
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "generate": ("floe.generator.cli:generate", "Write deterministic demo landing files."),
    "build": ("floe.build:build", "Generate demo data if needed, dbt build, summarize tables."),
    "registry": ("floe.registry.cli:registry", "Schemas as code: check, sync, show."),
    "dq": ("floe.quality.cli:dq", "Data quality: suggest, compare, run."),
    "maintain": ("floe.maintenance.cli:maintain", "Compact, expire, clean Iceberg tables."),
    "produce": (
        "floe.streaming.cli:produce",
        "Frame JSON records with a feed's schema; send to its topic, stream or landing.",
    ),
    "stream": ("floe.streaming.cli:stream", "Continuous decode of landed streams (micro-batches)."),
    "consume": (
        "floe.streaming.cli:consume",
        "Consume kafka / kinesis feeds exactly once (micro-batches).",
    ),
    "docs": ("floe.docsite.cli:docs", "Build the docs site (dbt docs + column lineage), serve it."),
    "lineage": ("floe.lineage.cli:lineage", "Column lineage: <model>.<column>, diff, coverage."),
    "cluster": (
        "floe.cluster.cli:cluster",
        "Loopback cluster: PostgreSQL catalog, Spark master, worker.",
    ),
    "catalog": (
        "floe.cluster.catalog_commands:catalog",
        "Catalog: migrate SQLite to PostgreSQL, fingerprint.",
    ),
    "privacy": ("floe.privacy.cli:privacy", "PII tags: scan, masked reads, erasure log, keys."),
    "forget": ("floe.privacy.cli:forget", "Erase a data subject everywhere (GDPR erasure)."),
    "rectify": ("floe.privacy.cli:rectify", "Correct a data subject's values everywhere."),
    "dev": ("floe.dev.cli:dev", "Warm session plain `dbt ...` reuses; watch: rebuild on save."),
    "env": ("floe.envs.cli:env", "Environments on Iceberg branches: create, diff, publish, drop."),
    "docs-coverage": (
        "floe.docsite.coverage:docs_coverage",
        "Fail on undocumented models, columns, sources and macros.",
    ),
}


# floe's own commands that commit to tables: each run is an OpenLineage run whose outputs
# are the tables it committed to (docs/lineage.md, "OpenLineage").
LINEAGE_COMMANDS = ("consume", "stream", "maintain", "forget", "rectify")


def _with_lineage(name: str, invoke: Callable[[click.Context], Any]) -> Callable[..., Any]:
    def traced(ctx: click.Context) -> Any:
        if ctx.params.get("dry_run"):
            return invoke(ctx)
        from floe.lineage.openlineage import command_run
        from floe.runtime import Settings, open_catalog

        try:
            settings = Settings.from_env()
        except Exception:  # the command reports a bad environment itself
            return invoke(ctx)
        with command_run(
            name,
            catalog_name=settings.catalog_name,
            catalog_loader=partial(open_catalog, settings),
            warn=partial(click.echo, err=True),
        ):
            return invoke(ctx)

    return traced


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = SUBCOMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr = entry[0].split(":")
        command: click.Command = getattr(importlib.import_module(module_name), attr)
        if cmd_name in LINEAGE_COMMANDS and not getattr(command, "_floe_lineage", False):
            # the instance attribute shadows the method: only this command is traced
            setattr(command, "invoke", _with_lineage(cmd_name, command.invoke))  # noqa: B010
            setattr(command, "_floe_lineage", True)  # noqa: B010
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # From the static table: `floe --help` imports no room (and no Spark).
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUBCOMMANDS[name][1]) for name in self.list_commands(ctx)])


@click.group(cls=LazyGroup)
@click.version_option(__version__, package_name=DISTRIBUTION, prog_name="floe")
def main() -> None:
    """floe — dbt + Spark + Iceberg lakehouse, embedded or on a cluster."""
    # Every session a command starts gets the privacy SQL functions (the runtime knows no
    # room above it: docs/runtime.md, "Session hooks").
    add_session_hook(privacy.session_hook)


if __name__ == "__main__":
    main()

"""A cold ``dbt`` command starts Spark while dbt parses (ADR 0043, docs/dev.md).

Called from the adapter plug-in (``dbt/adapters/floe/__init__.py``) right after
:func:`floe.dev.client.forward_dbt_cli` found no warm session: dbt has parsed its
command line, and still has to import its adapters, read the project, parse it and
plan the run before it opens its first connection, which used to start the JVM only
then. :func:`prestart_for_dbt_cli` starts the JVM and SparkSession in a background
thread (:func:`floe.runtime.session.prestart`) so the two overlap on the machine's
cores; the connection then waits for that session and goes on as before (writer lock,
schemas, hooks).
"""

from __future__ import annotations

import sys

from floe.dev import client
from floe.runtime.session import prestart
from floe.runtime.settings import Settings

# dbt commands (``flags.WHICH``) that open a connection, so start Spark. ``parse``,
# ``ls``, ``deps``, ``clean``, ``docs serve``, ``init`` never do: starting a JVM for
# them would only cost.
CONNECTING_COMMANDS = frozenset(
    {
        "build",
        "run",
        "compile",
        "show",
        "test",
        "seed",
        "snapshot",
        "retry",
        "clone",
        "run-operation",
        "debug",
        "generate",  # docs generate
        "freshness",  # source freshness
    }
)


def dbt_command() -> str | None:
    """The command of this dbt process (``flags.WHICH``), once dbt parsed its arguments."""
    try:
        from dbt.flags import get_flags

        return getattr(get_flags(), "WHICH", None)
    except ImportError:
        return None


def prestart_for_dbt_cli(settings: Settings | None = None) -> bool:
    """Start Spark in the background when this is a cold ``dbt`` command that connects.

    Nothing happens in the warm server, outside dbt's command line (floe's own
    in-process dbt runs start their session themselves), for a command that opens no
    connection, or with ``FLOE_SPARK_PRESTART=false``. ``settings`` default to the
    environment's: this is the edge of a plain ``dbt`` process, where the adapter's
    connections read them too. Returns whether a start was begun.
    """
    if client.SERVING or not sys.argv or not client.is_dbt_cli(sys.argv[0]):
        return False
    if dbt_command() not in CONNECTING_COMMANDS:
        return False
    if settings is None:
        try:
            settings = Settings.from_env()
        except ValueError:
            return False  # the connection reports the bad setting, as before
    if not settings.spark_prestart:
        return False
    return prestart(settings)

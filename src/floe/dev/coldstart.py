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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

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
    return prestart_for_command(dbt_command(), settings)


def prestart_for_command(command: str | None, settings: Settings | None = None) -> bool:
    """Start Spark in the background for the cold dbt ``command``, if it connects.

    floe's ``dbt`` entry (:mod:`floe.dev.entry`) calls it with the subcommand of its
    command line *before* importing dbt (1-2 s of CPU), so the JVM starts while dbt
    imports, not after; the adapter plug-in's later call then finds it started and does
    nothing. Returns whether a start was begun.
    """
    if client.SERVING or command not in CONNECTING_COMMANDS:
        return False
    if settings is None:
        try:
            settings = Settings.from_env()
        except ValueError:
            return False  # the connection reports the bad setting, as before
    if not settings.spark_prestart:
        return False
    return prestart(settings)


def _option(argv: Sequence[str], name: str) -> str | None:
    """The value of ``--name value`` / ``--name=value`` on a dbt command line."""
    for index, arg in enumerate(argv):
        if arg == name and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    return None


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError):
        return None


def uses_floe_profile(argv: Sequence[str], env: Mapping[str, str], cwd: Path) -> bool:
    """Whether the dbt project this command line runs uses a floe profile.

    Read cheaply, before dbt is imported, as dbt finds them: the project in
    ``--project-dir``, ``DBT_PROJECT_DIR`` or ``cwd``; its profile in ``profiles.yml``
    of ``--profiles-dir``, ``DBT_PROFILES_DIR``, the project or ``~/.dbt``. True when
    one of that profile's outputs is ``type: floe``; False when anything is unclear
    (the adapter plug-in then prestarts a little later, as before).
    """
    project_dir = Path(_option(argv, "--project-dir") or env.get("DBT_PROJECT_DIR") or cwd)
    project = _yaml(project_dir.expanduser() / "dbt_project.yml")
    name = project.get("profile") if isinstance(project, dict) else None
    if not isinstance(name, str) or "{" in name:
        return False
    given = _option(argv, "--profiles-dir") or env.get("DBT_PROFILES_DIR")
    dirs = [Path(given)] if given else [project_dir, Path("~/.dbt")]
    for directory in dirs:
        path = directory.expanduser() / "profiles.yml"
        if path.is_file():
            profiles = _yaml(path)
            profile = profiles.get(name) if isinstance(profiles, dict) else None
            outputs = profile.get("outputs") if isinstance(profile, dict) else None
            if not isinstance(outputs, dict):
                return False
            return any(
                isinstance(output, dict) and output.get("type") == "floe"
                for output in outputs.values()
            )
    return False


def prestart_for_entry(
    command: str | None, argv: Sequence[str], env: Mapping[str, str], cwd: Path
) -> bool:
    """floe's ``dbt`` entry: prestart for ``command`` if the project uses floe."""
    if command not in CONNECTING_COMMANDS or not uses_floe_profile(argv, env, cwd):
        return False
    return prestart_for_command(command)

"""floe's ``dbt`` entry: ask the warm session before importing dbt at all.

dbt's own ``dbt`` script imports dbt (1-2 s of CPU, several seconds on a busy machine)
before floe's adapter plug-in can forward the command (:func:`floe.dev.client.
forward_dbt_cli`). This entry asks first, imports only floe's settings and the client,
and falls back to dbt's CLI unchanged (the plug-in then stays silent: it already
asked). ``floe dev install-entry`` writes it as the environment's ``bin/dbt``
(docs/dev.md, "The fast entry").
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

# dbt subcommands that open the project's profile (and so would reach the plug-in).
FORWARDED = frozenset(
    {"build", "run", "compile", "show", "test", "seed", "snapshot", "ls", "list", "parse",
     "docs", "run-operation", "retry", "clone", "source", "debug"}
)  # fmt: skip


def subcommand(argv: list[str]) -> str | None:
    """The dbt subcommand of a command line (the first word not an option)."""
    for arg in argv:
        if not arg.startswith("-"):
            return arg
    return None


def main() -> int:
    from floe.dev import client

    argv = sys.argv[1:]
    if subcommand(argv) in FORWARDED and not {"-h", "--help"} & set(argv):
        client.CHECKED = True
        code = client.try_forward(argv)
        if code is not None:
            return code
        # Cold: the JVM starts now, while dbt imports (docs/decisions/0043-cold-start.md).
        from floe.dev.coldstart import prestart_for_entry
        from floe.runtime.settings import child_environment

        prestart_for_entry(subcommand(argv), argv, child_environment({}), Path.cwd())
    from dbt.cli.main import cli

    sys.argv[0] = sys.argv[0].removesuffix(".exe")
    try:
        code = int(cli() or 0)
    except SystemExit as exc:  # dbt's CLI (click) ends with sys.exit
        code = exit_status(exc.code)
    exit_now(code)
    return code  # not reached


def exit_status(value: object) -> int:
    """The process status of ``sys.exit(value)`` (a message is printed and means 1)."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    print(value, file=sys.stderr)
    return 1


def exit_now(code: int) -> None:
    """End the process once dbt is done, without the interpreter's teardown.

    dbt has written its artifacts and logs and released the writer lock by now; what
    the interpreter would still do is collect every object, and each py4j object it
    drops asks the JVM to forget it over the gateway: 0.7 s of a 7 s cold `dbt run`
    (docs/dev.md, "A cold command"). Exit handlers and logging are flushed first; the
    JVM ends on its own when its stdin closes with this process, as before.
    """
    import atexit
    import logging
    import os

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)


SCRIPT = """#!{python}
# floe's dbt entry (floe dev install-entry): asks a warm `floe dev` session first,
# else runs dbt's own CLI. `pip install --force-reinstall dbt-core` puts dbt's back.
import sys
from floe.dev.entry import main
if __name__ == "__main__":
    sys.exit(main())
"""

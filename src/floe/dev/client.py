"""Clients of the warm session: the dbt CLI hook, ``floe dev watch``, status and stop.

:func:`forward_dbt_cli` runs in every ``dbt`` process whose profile uses the floe
adapter, when dbt imports the plug-in (``dbt/adapters/floe/__init__.py``): that is after
dbt parsed its arguments and before it parses the project or starts Spark. If a warm
session serves this lakehouse, the command runs there and this process exits with its
exit code; otherwise dbt goes on cold, after a one-line hint on stderr.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from floe.dev.protocol import (
    EXIT_ERROR,
    LineReader,
    ServerInfo,
    read_server_info,
    send,
)
from floe.runtime.settings import Settings, child_environment

# True in the server process: its own dbt invocations never forward.
SERVING = False
# True once this process asked (floe's dbt entry, then the adapter plug-in: ask once).
CHECKED = False
EXIT_INTERRUPTED = 130
HINT_PREFIX = "floe:"


class Refused(Exception):
    """The warm session cannot run this command (the reason says why); run it cold."""


class ServerGone(Exception):
    """The connection to the warm session broke while a command ran."""


def is_alive(info: ServerInfo) -> bool:
    """Whether something listens on the port a state file names."""
    try:
        with info.connect(timeout=1.0):
            return True
    except OSError:
        return False


def run_in_server(
    info: ServerInfo,
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    out: TextIO,
    err: TextIO | None = None,
) -> int:
    """Run ``dbt <argv>`` in the warm session, writing its output to ``out``; its exit code.

    Raises :class:`Refused` when the server declines or cannot be reached (nothing ran),
    :class:`ServerGone` when it died while the command ran.
    """
    try:
        sock = info.connect()
    except OSError as exc:
        raise Refused(f"the warm session (pid {info.pid}) does not answer: {exc}") from exc
    with sock:
        sock.settimeout(None)
        try:
            send(
                sock,
                {
                    "token": info.token,
                    "op": "dbt",
                    "argv": list(argv),
                    "cwd": cwd,
                    "env": dict(env),
                },
            )
        except OSError as exc:
            raise Refused(f"the warm session (pid {info.pid}) does not answer: {exc}") from exc
        started = False
        try:
            for message in LineReader(sock):
                kind = message.get("t")
                if kind == "out":
                    started = True
                    out.write(str(message.get("d", "")))
                    out.flush()
                elif kind == "wait":
                    print(f"{HINT_PREFIX} {message.get('d')}", file=err or sys.stderr, flush=True)
                elif kind == "refuse":
                    raise Refused(str(message.get("reason")))
                elif kind == "exit":
                    return int(message.get("code", EXIT_ERROR))
        except (OSError, ValueError) as exc:
            raise ServerGone(str(exc)) from exc
    if not started:
        raise Refused(f"the warm session (pid {info.pid}) closed the connection")
    raise ServerGone(f"the warm session (pid {info.pid}) ended during the command")


def request(info: ServerInfo, op: str) -> dict[str, Any]:
    """A ``status`` or ``stop`` request; the server's status."""
    with info.connect() as sock:
        send(sock, {"token": info.token, "op": op})
        for message in LineReader(sock):
            if message.get("t") == "status":
                return message
            if message.get("t") == "refuse":
                raise Refused(str(message.get("reason")))
    raise Refused(f"the warm session (pid {info.pid}) closed the connection")


def is_dbt_cli(argv0: str) -> bool:
    """Whether this process is dbt's command line (``dbt ...``, ``python -m dbt.cli.main``)."""
    path = Path(argv0)
    return path.name == "dbt" or path.as_posix().endswith(("dbt/cli/main.py", "dbt/__main__.py"))


def forward_dbt_cli() -> None:
    """Run this ``dbt`` command in the warm session and exit, if one serves the lakehouse.

    Returns (the cold path) when this is not dbt's CLI, when no server is announced or
    it declines the command; prints a one-line hint on stderr then.
    """
    global CHECKED
    if SERVING or CHECKED or not sys.argv or not is_dbt_cli(sys.argv[0]):
        return
    CHECKED = True
    code = try_forward(sys.argv[1:])
    if code is None:
        return
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


def try_forward(argv: Sequence[str]) -> int | None:
    """``dbt <argv>``'s exit code from the warm session; None: run it cold (hint printed)."""
    try:
        settings = Settings.from_env()
    except ValueError:
        return None  # the cold path reports the bad setting
    info = read_server_info(settings)
    if info is None:
        _hint("no warm session for this lakehouse, running cold (`floe dev` starts one)")
        return None
    try:
        return run_in_server(info, argv, cwd=os.getcwd(), env=child_environment({}), out=sys.stdout)
    except Refused as exc:
        _hint(f"running cold: {exc}")
        return None
    except ServerGone as exc:
        _hint(
            f"{exc}; every model commits in one Iceberg commit, so nothing is half-done: "
            "run the command again"
        )
        return EXIT_ERROR
    except KeyboardInterrupt:
        _hint("interrupted: the command goes on in the warm session until it ends")
        return EXIT_INTERRUPTED


def _hint(message: str) -> None:
    print(f"{HINT_PREFIX} {message}", file=sys.stderr, flush=True)

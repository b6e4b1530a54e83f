"""Where a warm session announces itself, and the lines it speaks (docs/dev.md).

A running server writes ``$FLOE_HOME/state/dev/server.json`` (mode 0600): its pid,
loopback port, a random token and the project it serves. A client connects to
``127.0.0.1:<port>``, sends one JSON line (the token and its request), and reads JSON
lines back until an ``exit`` (or ``refuse``) message. The token keeps other local users
from running commands in the session; the file is removed when the server stops, and a
file left by a killed server is recognised as stale (nobody listens on its port).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from floe.runtime.settings import Settings

STATE_SUBDIR = "dev"
INFO_FILE = "server.json"
# Seconds a client waits to connect to a server that its state file names.
CONNECT_TIMEOUT = 2.0
# dbt's CLI exit codes (dbt.cli.main): 0 success, 1 a node failed, 2 an error.
EXIT_OK, EXIT_FAILED, EXIT_ERROR = 0, 1, 2


class DevServerError(RuntimeError):
    """The warm session cannot be started, reached or used; the message says what to do."""


@dataclass(frozen=True)
class ServerInfo:
    """What a running server writes about itself."""

    pid: int
    port: int
    token: str
    project_dir: str
    home: str
    started_at: str

    def connect(self, timeout: float = CONNECT_TIMEOUT) -> socket.socket:
        """A connection to the server (raises OSError when nobody listens)."""
        return socket.create_connection(("127.0.0.1", self.port), timeout=timeout)


def state_dir(settings: Settings) -> Path:
    """The folder of the warm session's state file (under ``$FLOE_HOME/state``)."""
    return settings.state_dir / STATE_SUBDIR


def info_path(settings: Settings) -> Path:
    return state_dir(settings) / INFO_FILE


def read_server_info(settings: Settings) -> ServerInfo | None:
    """The server announced for this lakehouse, if a state file names one."""
    try:
        raw = json.loads(info_path(settings).read_text())
        return ServerInfo(**raw)
    except (OSError, ValueError, TypeError):
        return None


def write_server_info(settings: Settings, info: ServerInfo) -> None:
    """Announce ``info`` atomically, readable by this user only (the token is a secret)."""
    path = info_path(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(json.dumps(asdict(info)) + "\n")
    tmp.replace(path)


def remove_server_info(settings: Settings, pid: int) -> None:
    """Remove the state file if it still names server ``pid``."""
    info = read_server_info(settings)
    if info is not None and info.pid == pid:
        with contextlib.suppress(OSError):
            info_path(settings).unlink()


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    sock.sendall((json.dumps(message) + "\n").encode())


class LineReader:
    """JSON messages, one a line, from a socket."""

    def __init__(self, sock: socket.socket) -> None:
        self._file = sock.makefile("rb")

    def __iter__(self) -> LineReader:
        return self

    def __next__(self) -> dict[str, Any]:
        line = self._file.readline()
        if not line:
            raise StopIteration
        message = json.loads(line)
        if not isinstance(message, dict):
            raise ValueError(f"not a message: {line[:80]!r}")
        return message

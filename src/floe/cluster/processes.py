"""Start detached services, know them again later, and stop exactly them.

A service is identified by its pid *and* the kernel's start time of that pid
(``/proc/<pid>/stat``), so a recycled pid is never mistaken for one of ours. Each
Spark daemon is started in a new session, so it leads its own process group: the
executors a worker starts stay in the worker's group and are stopped with it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from floe.runtime.settings import child_environment


class ClusterError(RuntimeError):
    """The loopback cluster cannot be started, reached or stopped; the message says why."""


@dataclass(frozen=True)
class ProcessRef:
    """A process we started: pid plus the kernel's start time of that pid."""

    pid: int
    start_ticks: int

    @classmethod
    def of(cls, pid: int) -> ProcessRef | None:
        ticks = start_ticks(pid)
        return None if ticks is None else cls(pid, ticks)

    def alive(self) -> bool:
        """Running, and the same process (not a recycled pid), and not a zombie."""
        return start_ticks(self.pid) == self.start_ticks and not _zombie(self.pid)

    def to_json(self) -> dict[str, int]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | None) -> ProcessRef | None:
        if not data:
            return None
        return cls(int(data["pid"]), int(data["start_ticks"]))


def _stat_fields(pid: int) -> list[str] | None:
    try:
        raw = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) is parenthesised and may hold spaces.
    return raw[raw.rindex(")") + 2 :].split()


def start_ticks(pid: int) -> int | None:
    """The start time of ``pid`` in clock ticks since boot, or None if there is no such pid."""
    fields = _stat_fields(pid)
    return int(fields[19]) if fields else None  # field 22 of stat, 20 after the name


def _zombie(pid: int) -> bool:
    fields = _stat_fields(pid)
    return fields is not None and fields[0] == "Z"


def group_members(pgid: int) -> list[int]:
    """Live (non-zombie) processes in process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        fields = _stat_fields(int(entry.name))
        if fields and fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(1.0)
        return sock.connect_ex((host, port)) == 0


def start_detached(
    argv: Sequence[str], log: Path, env: Mapping[str, str], cwd: Path | None = None
) -> ProcessRef:
    """Start ``argv`` in its own session with output appended to ``log``; return its ref."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=child_environment(env),
            cwd=cwd,
            start_new_session=True,
        )
    ref = ProcessRef.of(proc.pid)
    if ref is None:
        raise ClusterError(f"{argv[0]} exited at once; see {log}")
    return ref


def stop_group(ref: ProcessRef, timeout: float = 30.0) -> bool:
    """SIGTERM the process group ``ref`` leads, wait, then SIGKILL what is left.

    Only a group whose leader is still ``ref`` (same start time), or whose leader has
    exited leaving members behind, is signalled. Returns True if something was stopped.
    """
    if ref.alive():
        if os.getpgid(ref.pid) != ref.pid:
            raise ClusterError(f"pid {ref.pid} no longer leads its own process group")
    elif not group_members(ref.pid):
        return False
    _signal_group(ref.pid, signal.SIGTERM)
    if not wait_until(lambda: not group_members(ref.pid), timeout):
        _signal_group(ref.pid, signal.SIGKILL)
        wait_until(lambda: not group_members(ref.pid), 10.0)
    _reap(ref.pid)
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, sig)


def _reap(pid: int) -> None:
    """Collect the exit status of a child of this process (no zombie left behind)."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def wait_until(condition: Callable[[], bool], timeout: float, interval: float = 0.5) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` seconds pass; return whether it held."""
    deadline = time.monotonic() + timeout
    while True:
        if condition():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def get_json(url: str, timeout: float = 5.0) -> Any | None:
    """GET ``url`` and parse JSON; None when nothing answers (yet)."""
    import json

    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return json.loads(response.read().decode())
    except (OSError, urllib.error.URLError, ValueError):
        return None


def log_tail(log: Path, lines: int = 20) -> str:
    try:
        text = log.read_text(errors="replace").splitlines()
    except OSError:
        return f"(no log at {log})"
    return "\n".join(text[-lines:])

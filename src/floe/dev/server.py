"""The warm session: one SparkSession and dbt's programmatic runner in a long-lived process.

``floe dev`` runs :class:`DevServer`. It starts Spark on the lakehouse's catalog once,
parses the project once (dbt's partial parsing then does the rest), and runs each dbt
command a client sends it through ``dbtRunner`` in its main thread, one command at a
time, with the client's working directory, environment and arguments, writing dbt's
console output back to the client. What it does per command to see what a cold run
would (docs/dev.md, "Correct, not just fast"):

- before: drop Spark's cached data and temporary views, restore the session's SQL
  settings and current namespace as they were at start, and clear floe's in-process
  caches (a schema version added to ``schemas/`` is read again); Iceberg's catalog
  caching is off in floe's runtime, so every statement loads the table's current
  metadata, and dbt makes a new adapter (and relation cache) per invocation;
- the writer lock is taken and released by the adapter per command, exactly as in a
  cold run (floe.runtime.locking); after the command the server lets go of any dbt
  owner still holding it, so a failed command cannot keep it;
- a failing command is one dbt result (exit code 1 or 2); the session goes on.

A killed server loses nothing: each model commits (or not) in one Iceberg commit, the
writer lock is a ``flock`` the kernel releases, and the JVM exits with its Python parent.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import queue
import secrets
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from floe.dev import client
from floe.dev.protocol import (
    EXIT_ERROR,
    EXIT_FAILED,
    EXIT_OK,
    DevServerError,
    LineReader,
    ServerInfo,
    read_server_info,
    remove_server_info,
    send,
    write_server_info,
)
from floe.runtime.settings import Settings, child_environment

# The profile target the warm session's local SparkSession serves.
LOCAL_TARGET = "local"
# How long a queued command's client is told it waits before the busy notice.
BUSY_NOTICE_SECONDS = 0.5


@dataclass
class _Job:
    conn: socket.socket
    argv: list[str]
    cwd: str
    env: dict[str, str]
    stream: _ClientStream
    done: threading.Event = field(default_factory=threading.Event)


class _ClientStream(io.TextIOBase):
    """dbt's console output, sent to the client as ``out`` messages.

    The client's own dbt process already printed dbt's version line before it found
    the server, so the first one the server's dbt prints is dropped.
    """

    def __init__(self, conn: socket.socket, drop_version_line: bool) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._drop_version = drop_version_line
        self.gone = False
        self.started = False

    def finish(self, code: int) -> None:
        """The ``exit`` message: the command's exit code, the last thing sent."""
        with self._lock, contextlib.suppress(OSError):
            send(self._conn, {"t": "exit", "code": code})

    def notice(self, text: str) -> None:
        """A ``wait`` message, unless the command's output has begun."""
        with self._lock:
            if not self.started and not self.gone:
                try:
                    send(self._conn, {"t": "wait", "d": text})
                except OSError:
                    self.gone = True

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if self._drop_version and "Running with dbt=" in text:
            self._drop_version = False
            return len(text)
        with self._lock:
            self.started = True
            if not self.gone:
                try:
                    send(self._conn, {"t": "out", "d": text})
                except OSError:
                    # The client went away (Ctrl-C): the command still completes, so
                    # its commits and the writer lock end as in a cold run.
                    self.gone = True
        return len(text)


def exit_code(result: Any) -> int:
    """dbt's CLI exit code for a dbtRunner result (as dbt.cli.main's ``cli``)."""
    if result.success:
        return EXIT_OK
    return EXIT_ERROR if result.exception is not None else EXIT_FAILED


def target_of(argv: Sequence[str], env: Mapping[str, str]) -> str:
    """The profile target a dbt command line asks for (``--target``, ``FLOE_TARGET``)."""
    for index, arg in enumerate(argv):
        if arg in ("--target", "-t") and index + 1 < len(argv):
            return argv[index + 1]
        if arg.startswith("--target="):
            return arg.split("=", 1)[1]
    return env.get("DBT_TARGET") or env.get("FLOE_TARGET") or LOCAL_TARGET


def _lakehouse(settings: Settings) -> Settings:
    # The project may differ per command (dbt finds it from cwd/--project-dir); the
    # lakehouse (catalog, warehouse, landing, Spark) may not.
    return dataclasses.replace(settings, project_dir=None)


def refusal(server: Settings, argv: Sequence[str], env: Mapping[str, str]) -> str | None:
    """Why this command must run cold instead of in the warm session, if it must."""
    target = target_of(argv, env)
    if target != LOCAL_TARGET:
        return f"the warm session runs the {LOCAL_TARGET!r} target, not {target!r}"
    try:
        theirs = Settings.from_env(env)
    except ValueError as exc:
        return f"the command's floe settings are invalid ({exc})"
    if _lakehouse(theirs) != _lakehouse(server):
        mine, other = dataclasses.asdict(_lakehouse(server)), dataclasses.asdict(_lakehouse(theirs))
        differ = sorted(k for k in mine if mine[k] != other[k])
        return f"the warm session runs with other floe settings ({', '.join(differ)})"
    return None


@contextlib.contextmanager
def _environment(env: Mapping[str, str]) -> Iterator[None]:
    """This process's environment is ``env`` for the block (dbt reads os.environ)."""
    saved = child_environment({})
    for key in saved.keys() - env.keys():
        os.environ.pop(key, None)
    os.environ.update(env)
    try:
        yield
    finally:
        for key in env.keys() - saved.keys():
            os.environ.pop(key, None)
        os.environ.update(saved)


@contextlib.contextmanager
def _cwd(path: str) -> Iterator[None]:
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


@contextlib.contextmanager
def _console(stream: TextIO) -> Iterator[None]:
    out, err = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = stream
    try:
        yield
    finally:
        sys.stdout, sys.stderr = out, err


class DevServer:
    """One warm SparkSession running dbt commands for clients on loopback."""

    def __init__(self, settings: Settings, *, console: TextIO | None = None) -> None:
        self.settings = settings
        self.console = console or sys.stdout
        self.token = secrets.token_hex(16)
        self.commands = 0
        self.current: str | None = None
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._stopping = threading.Event()
        self._listener: socket.socket | None = None
        self._spark: Any = None
        self._baseline_conf: dict[str, str] = {}
        self._baseline_namespace: tuple[str, str] = ("", "")

    # -- start and stop

    def start(self) -> ServerInfo:
        """Start Spark and dbt, listen on loopback, announce the server; its info."""
        running = read_server_info(self.settings)
        if running is not None and client.is_alive(running):
            raise DevServerError(
                f"a warm session already runs for {self.settings.home} (pid {running.pid}, "
                f"port {running.port}): use it, or stop it with `floe dev stop`"
            )
        client.SERVING = True
        started = time.perf_counter()
        from floe.runtime.session import get_spark

        self._spark = get_spark(self.settings)
        self._log(f"Spark ready in {time.perf_counter() - started:.1f} s")
        self._baseline_conf = self._sql_conf()
        self._baseline_namespace = (
            self._spark.catalog.currentCatalog(),
            self._spark.catalog.currentDatabase(),
        )
        self._warm_dbt()
        self._log(f"dbt ready in {time.perf_counter() - started:.1f} s")
        self._listener = socket.create_server(("127.0.0.1", 0))
        info = ServerInfo(
            pid=os.getpid(),
            port=self._listener.getsockname()[1],
            token=self.token,
            project_dir=str(self.settings.dbt_project_dir()),
            home=str(self.settings.home),
            started_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        )
        write_server_info(self.settings, info)
        threading.Thread(target=self._accept_loop, name="floe-dev-accept", daemon=True).start()
        self._log(
            f"warm session ready: pid {info.pid}, 127.0.0.1:{info.port}, lakehouse "
            f"{self.settings.home}; plain `dbt ...` in the project now runs here (Ctrl-C stops)"
        )
        return info

    def serve_forever(self) -> None:
        """Run queued commands in this (the main) thread until stopped."""
        try:
            while not self._stopping.is_set():
                try:
                    job = self._jobs.get(timeout=0.5)
                except queue.Empty:
                    continue
                if job is None:
                    break
                try:
                    self._run_job(job)
                finally:
                    job.done.set()
        finally:
            self._refuse_queued()
            self.close()

    def _refuse_queued(self) -> None:
        """Clients still queued when the server stops run their command cold."""
        while True:
            try:
                job = self._jobs.get_nowait()
            except queue.Empty:
                return
            if job is not None:
                with contextlib.suppress(OSError):
                    send(job.conn, {"t": "refuse", "reason": "the warm session stopped"})
                job.done.set()

    def stop(self) -> None:
        """Stop after the running command (if any); safe in a signal handler."""
        self._stopping.set()

    def close(self) -> None:
        remove_server_info(self.settings, os.getpid())
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.close()
            self._listener = None
        if self._spark is not None:
            with contextlib.suppress(Exception):
                self._spark.stop()
            self._spark = None

    # -- connections

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _addr = self._listener.accept()
            except OSError:
                return
            threading.Thread(
                target=self._handle, args=(conn,), name="floe-dev-conn", daemon=True
            ).start()

    def _handle(self, conn: socket.socket) -> None:
        try:
            request = next(LineReader(conn), None)
            if not isinstance(request, dict) or request.get("token") != self.token:
                send(conn, {"t": "refuse", "reason": "wrong or missing token"})
                return
            op = request.get("op")
            if op == "status":
                send(conn, {"t": "status", **self.status()})
            elif op == "stop":
                send(conn, {"t": "status", **self.status()})
                self.stop()
            elif op == "dbt":
                self._queue_dbt(conn, request)
            else:
                send(conn, {"t": "refuse", "reason": f"unknown request {op!r}"})
        except (OSError, ValueError):
            pass
        finally:
            with contextlib.suppress(OSError):
                conn.close()

    def _queue_dbt(self, conn: socket.socket, request: dict[str, Any]) -> None:
        argv = [str(arg) for arg in request.get("argv") or []]
        env = {str(k): str(v) for k, v in (request.get("env") or {}).items()}
        cwd = str(request.get("cwd") or self.settings.dbt_project_dir())
        reason = refusal(self.settings, argv, env)
        if reason is not None:
            send(conn, {"t": "refuse", "reason": reason})
            return
        job = _Job(conn, argv, cwd, env, _ClientStream(conn, drop_version_line=True))
        busy = self.current
        self._jobs.put(job)
        if busy is not None and not job.done.wait(BUSY_NOTICE_SECONDS):
            job.stream.notice(f"waiting for the warm session to finish `{busy}`")
        job.done.wait()

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "home": str(self.settings.home),
            "commands": self.commands,
            "running": self.current,
            "rss_mb": _rss_mb(os.getpid()),
        }

    # -- commands

    def _run_job(self, job: _Job) -> None:
        from dbt.cli.main import dbtRunner

        command = "dbt " + " ".join(job.argv)
        self.current = command
        stream = job.stream
        started = time.perf_counter()
        code = EXIT_ERROR
        try:
            self.refresh()
            with _environment(job.env), _cwd(job.cwd), _console(stream):  # type: ignore[arg-type]
                try:
                    result = dbtRunner().invoke(list(job.argv))
                    code = exit_code(result)
                    if result.exception is not None and not result.success:
                        print(f"floe dev: {type(result.exception).__name__}: {result.exception}")
                finally:
                    self._after_command()
        except Exception as exc:  # the session must survive whatever a command does
            stream.write(f"floe dev: the command failed: {type(exc).__name__}: {exc}\n")
        finally:
            self.commands += 1
            self.current = None
            stream.finish(code)
            self._log(f"{command} -> exit {code} ({time.perf_counter() - started:.2f} s)")

    def refresh(self) -> None:
        """Leave nothing from earlier commands that a cold run would not see."""
        spark = self._spark
        spark.catalog.clearCache()
        spark._jsparkSession.sessionState().catalog().clearTempTables()
        current = self._sql_conf()
        for key, value in current.items():
            if self._baseline_conf.get(key) != value:
                with contextlib.suppress(Exception):
                    if key in self._baseline_conf:
                        spark.conf.set(key, self._baseline_conf[key])
                    else:
                        spark.conf.unset(key)
        catalog, database = self._baseline_namespace
        if (spark.catalog.currentCatalog(), spark.catalog.currentDatabase()) != (
            catalog,
            database,
        ):
            spark.catalog.setCurrentCatalog(catalog)
            spark.catalog.setCurrentDatabase(database)
        _clear_floe_caches()

    def _after_command(self) -> None:
        from floe.adapter import DBT_LOCK_OWNER
        from floe.runtime.locking import release

        # dbt releases the lock when it cleans its connections up; a command that
        # failed before that must not keep it.
        release(DBT_LOCK_OWNER)

    def _warm_dbt(self) -> None:
        """Import dbt and the adapter, and parse the project once (partial parsing)."""
        from dbt.cli.main import dbtRunner

        project = self.settings.dbt_project_dir()
        sink = io.StringIO()
        with _cwd(str(project)), _console(sink):
            result = dbtRunner().invoke(["parse", "--quiet"])
        if not result.success:
            self._log(f"dbt parse at start failed (commands will show why): {sink.getvalue()}")

    def _sql_conf(self) -> dict[str, str]:
        return {row[0]: row[1] for row in self._spark.sql("SET").collect()}

    def _log(self, message: str) -> None:
        stamp = datetime.now(UTC).strftime("%H:%M:%S")
        print(f"{stamp} floe dev: {message}", file=self.console, flush=True)


def _clear_floe_caches() -> None:
    """Empty floe's in-process memo caches (a cold process starts with them empty)."""
    for name, module in list(sys.modules.items()):
        if not name.startswith("floe.") or module is None:
            continue
        for value in list(vars(module).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == name:
                clear()


def _rss_mb(pid: int) -> float | None:
    """Resident memory of process ``pid`` in MiB (Linux), if readable."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def serve(settings: Settings, console: TextIO | None = None) -> None:
    """Run a warm session in this process until stopped (SIGTERM, Ctrl-C, ``floe dev stop``)."""
    import signal

    server = DevServer(settings, console=console)
    server.start()

    def on_signal(signum: int, frame: Any) -> None:
        server.stop()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    server.serve_forever()

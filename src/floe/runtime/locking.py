"""One writer at a time per floe warehouse: the writer lock (docs/reliability.md).

Everything that writes a warehouse takes it: ``dbt build`` / ``run`` / ``seed`` /
``snapshot`` / ``retry`` / ``clone`` (the adapter, when its first connection opens),
``floe stream``, ``floe maintain`` and erasure (``floe privacy forget`` / ``rectify``
and the ``privacy_*`` run-operations). Readers (pyiceberg, ``dbt show`` / ``compile``
/ ``docs generate`` / ``ls`` / ``parse``) never take it and never wait.

Two backends behind one interface, chosen by the catalog:

* SQLite catalog (one machine): an exclusive ``fcntl.flock`` on
  ``$FLOE_HOME/state/writer.lock``, with the holder's pid, host, command and start
  time in ``writer.lock.json`` beside it;
* PostgreSQL catalog (the cluster target, several machines): a session-level
  ``pg_advisory_lock`` in the catalog database on a key derived from the database and
  catalog name, held on a dedicated connection, with the holder in the table
  ``floe_writer_lock`` of that database.

Either lock is released by the operating system or the database server when its
process dies (a closed file, a closed connection): a killed writer never blocks the
next one. A second writer waits up to ``FLOE_LOCK_TIMEOUT`` seconds, then fails with
:class:`WriterLockTimeout` naming the holder.

The lock is re-entrant within one process: every holder names itself (an *owner*),
and the lock is released when the last owner lets go, so ``floe build`` (which runs
dbt in-process) and the adapter share one acquisition.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

from floe.runtime.catalog import CatalogDatabase
from floe.runtime.settings import Settings

LOCK_FILE = "writer.lock"
HOLDER_FILE = "writer.lock.json"
HOLDER_TABLE = "floe_writer_lock"
POLL_SECONDS = 0.25
# pg_advisory_lock(int4, int4): the first key says "floe writer" ("floe" in ASCII).
PG_LOCK_CLASS = 0x666C6F65


class WriterLockTimeout(RuntimeError):
    """Another process held the writer lock for longer than ``FLOE_LOCK_TIMEOUT``."""


@dataclass(frozen=True)
class Holder:
    """Who holds (or last held) the writer lock."""

    pid: int
    host: str
    command: str
    started_at: str

    def describe(self) -> str:
        return (
            f"pid {self.pid} on host {self.host}, running `{self.command}` since {self.started_at}"
        )


def this_process(command: str | None = None) -> Holder:
    """A holder record for this process (``command``: default its command line)."""
    if command is None:
        argv = [Path(sys.argv[0]).name, *sys.argv[1:]] if sys.argv else ["python"]
        command = " ".join(argv)
    return Holder(
        pid=os.getpid(),
        host=socket.gethostname(),
        command=command[:300],
        started_at=datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
    )


class LockBackend(Protocol):
    """One place a writer lock can live."""

    @property
    def key(self) -> str:
        """Identifies the lock (two backends with one key are the same lock)."""

    @property
    def where(self) -> str:
        """The lock, as a message names it."""

    def try_acquire(self, holder: Holder) -> bool:
        """Take the lock without waiting; True if taken."""

    def holder(self) -> Holder | None:
        """The recorded holder, if any."""

    def release(self) -> None:
        """Let the lock go."""

    def advice(self, holder: Holder | None) -> str:
        """What to do when the lock is not released."""


class FileLock:
    """``fcntl.flock`` on ``<state>/writer.lock`` (SQLite catalog: one machine)."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / LOCK_FILE
        self.holder_path = state_dir / HOLDER_FILE
        self._handle: Any = None

    @property
    def key(self) -> str:
        return f"file:{self.path}"

    @property
    def where(self) -> str:
        return str(self.path)

    def try_acquire(self, holder: Holder) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle = self.path.open("a+")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        self._handle = handle
        tmp = self.holder_path.with_name(f"{self.holder_path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(asdict(holder)) + "\n")
        tmp.replace(self.holder_path)
        return True

    def holder(self) -> Holder | None:
        try:
            return Holder(**json.loads(self.holder_path.read_text()))
        except (OSError, ValueError, TypeError):
            return None

    def release(self) -> None:
        if self._handle is None:
            return
        with contextlib.suppress(OSError):
            self.holder_path.unlink()
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None

    def advice(self, holder: Holder | None) -> str:
        return (
            "wait for it to finish, or stop it; the lock is released when its process "
            f"ends (a stale {self.holder_path.name} does not hold it)"
        )


class PostgresLock:
    """``pg_advisory_lock`` in the PostgreSQL catalog database (several machines)."""

    def __init__(self, settings: Settings) -> None:

        self.database = CatalogDatabase.of(settings)
        url = self.database.url()
        self.catalog = f"{url.host}:{url.port or 5432}/{url.database}/{settings.catalog_name}"
        digest = hashlib.sha256(self.catalog.encode()).digest()
        self.keys = (PG_LOCK_CLASS, int.from_bytes(digest[:4], "big") & 0x7FFFFFFF)
        self._conn: Any = None

    @property
    def key(self) -> str:
        return f"postgresql:{self.catalog}"

    @property
    def where(self) -> str:
        return f"advisory lock {self.keys} in {self.database.display}"

    def _connect(self) -> Any:
        import psycopg2

        url = self.database.url()
        conn = psycopg2.connect(
            host=url.host,
            port=url.port or 5432,
            dbname=url.database,
            user=url.username,
            password=url.password,
            application_name="floe writer lock",
            **dict(url.query),
        )
        conn.autocommit = True
        return conn

    def try_acquire(self, holder: Holder) -> bool:
        if self._conn is None:
            self._conn = self._connect()
        with self._conn.cursor() as cur:
            cur.execute("select pg_try_advisory_lock(%s, %s)", self.keys)
            if not cur.fetchone()[0]:
                return False
            self._record(cur, holder)
        return True

    def _record(self, cur: Any, holder: Holder) -> None:
        cur.execute(
            f"create table if not exists {HOLDER_TABLE} (catalog text primary key, "
            "pid integer, host text, command text, started_at text)"
        )
        cur.execute(
            f"insert into {HOLDER_TABLE} values (%s, %s, %s, %s, %s) on conflict (catalog) "
            "do update set pid = excluded.pid, host = excluded.host, "
            "command = excluded.command, started_at = excluded.started_at",
            (self.catalog, holder.pid, holder.host, holder.command, holder.started_at),
        )

    def holder(self) -> Holder | None:
        import psycopg2

        own = self._conn is None
        try:
            conn = self._connect() if own else self._conn
        except psycopg2.Error:
            return None
        try:
            with conn.cursor() as cur:
                cur.execute(
                    f"select pid, host, command, started_at from {HOLDER_TABLE} where catalog = %s",
                    (self.catalog,),
                )
                row = cur.fetchone()
        except psycopg2.Error:
            return None
        finally:
            if own:
                conn.close()
        return Holder(*row) if row else None

    def release(self) -> None:
        if self._conn is None:
            return
        with contextlib.suppress(Exception), self._conn.cursor() as cur:
            cur.execute("select pg_advisory_unlock(%s, %s)", self.keys)
        with contextlib.suppress(Exception):
            self._conn.close()
        self._conn = None

    def advice(self, holder: Holder | None) -> str:
        return (
            "wait for it to finish, or stop it; the lock is released when its database "
            "connection closes (select pid from pg_locks where locktype = 'advisory' "
            f"and classid = {self.keys[0]} and objid = {self.keys[1]} names the backend "
            "to pg_terminate_backend if its host is gone)"
        )


def backend_for(settings: Settings) -> LockBackend:
    """The writer lock of the warehouse ``settings`` point at."""
    if settings.is_sqlite:
        return FileLock(settings.state_dir)
    if settings.catalog_uri.startswith("jdbc:postgresql:"):
        return PostgresLock(settings)
    raise WriterLockTimeout(
        f"floe has no writer lock for catalog {settings.catalog_uri!r}: "
        "use a SQLite or PostgreSQL catalog (docs/reliability.md)"
    )


@dataclass
class _Held:
    backend: LockBackend
    owners: set[str] = field(default_factory=set)


_STATE = threading.RLock()
_HELD: dict[str, _Held] = {}


def _waiting_notice(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def acquire(
    settings: Settings,
    owner: str,
    *,
    command: str | None = None,
    timeout: float | None = None,
    notify: Callable[[str], None] = _waiting_notice,
) -> None:
    """Take the writer lock for ``owner`` (idempotent per owner; re-entrant across owners).

    Waits up to ``timeout`` (default ``settings.lock_timeout``) seconds for another
    process to let it go, then raises :class:`WriterLockTimeout` naming the holder.
    """
    backend = backend_for(settings)
    with _STATE:
        held = _HELD.get(backend.key)
        if held is not None:
            held.owners.add(owner)
            return
        limit = settings.lock_timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        me = this_process(command)
        told = False
        while not backend.try_acquire(me):
            if time.monotonic() >= deadline:
                holder = backend.holder()
                who = holder.describe() if holder else "a process that left no record"
                raise WriterLockTimeout(
                    f"another floe writer holds the writer lock ({backend.where}): {who}. "
                    f"Waited {limit:g} s (FLOE_LOCK_TIMEOUT). {backend.advice(holder)}; "
                    "then run this command again (docs/reliability.md)."
                )
            if not told:
                holder = backend.holder()
                who = holder.describe() if holder else "another process"
                notify(f"floe: waiting up to {limit:g} s for the writer lock held by {who}")
                told = True
            time.sleep(POLL_SECONDS)
        _HELD[backend.key] = _Held(backend, {owner})


def release(owner: str, settings: Settings | None = None) -> None:
    """``owner`` lets go of the writer lock (of ``settings``'s warehouse, else of every
    warehouse it holds); the lock is released when its last owner lets go."""
    with _STATE:
        keys = [backend_for(settings).key] if settings is not None else list(_HELD)
        for key in keys:
            held = _HELD.get(key)
            if held is None or owner not in held.owners:
                continue
            held.owners.discard(owner)
            if not held.owners:
                del _HELD[key]
                held.backend.release()


def is_held(settings: Settings) -> bool:
    """Whether this process holds the writer lock of ``settings``'s warehouse."""
    with _STATE:
        return backend_for(settings).key in _HELD


@contextlib.contextmanager
def writer_lock(
    settings: Settings, command: str | None = None, *, timeout: float | None = None
) -> Iterator[None]:
    """Hold the writer lock for the block (re-entrant within this process)."""
    owner = f"block-{uuid.uuid4().hex}"
    acquire(settings, owner, command=command, timeout=timeout)
    try:
        yield
    finally:
        release(owner, settings)

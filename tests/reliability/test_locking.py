"""The writer lock (floe.runtime.locking): one writer per warehouse, on both backends.

A holder is a real second process (no Spark: the lock is plain Python); the
PostgreSQL backend runs against a real PostgreSQL (floe.cluster's own, on loopback).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from floe.runtime import Settings
from floe.runtime.locking import (
    FileLock,
    PostgresLock,
    WriterLockTimeout,
    acquire,
    is_held,
    release,
    writer_lock,
)
from tests.helpers import loopback_postgres

HOLDER = """
import sys, time
from floe.runtime import Settings
from floe.runtime.locking import acquire
acquire(Settings.from_env(), "holder", command="holder for a test")
print("held", flush=True)
time.sleep(600)
"""


def _env(settings_env: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOE_")}
    return {**env, **settings_env}


@pytest.fixture
def holder_process() -> Iterator:
    """Start a process holding the lock of the given environment; killed at the end."""
    started: list[subprocess.Popen] = []

    def start(settings_env: dict[str, str]) -> subprocess.Popen:
        proc = subprocess.Popen(
            [sys.executable, "-c", HOLDER],
            env=_env(settings_env),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        started.append(proc)
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.strip() == "held", proc.stderr.read() if proc.stderr else ""
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def _exercise(settings: Settings, settings_env: dict[str, str], start) -> None:
    """What both backends must do: wait then fail naming the holder; free on SIGKILL."""
    holder = start(settings_env)
    notices: list[str] = []
    with pytest.raises(WriterLockTimeout) as failure:
        acquire(settings, "second", timeout=0.6, notify=notices.append)
    message = str(failure.value)
    assert f"pid {holder.pid}" in message
    assert "holder for a test" in message
    assert "FLOE_LOCK_TIMEOUT" in message
    assert notices and f"pid {holder.pid}" in notices[0]
    assert not is_held(settings)
    # A killed holder never blocks the next writer: the OS / server releases the lock.
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    acquire(settings, "second", timeout=30)
    try:
        assert is_held(settings)
    finally:
        release("second", settings)
    assert not is_held(settings)


def test_file_lock_waits_names_the_holder_and_survives_a_killed_holder(tmp_path, holder_process):
    env = {"FLOE_HOME": str(tmp_path / "floe")}
    settings = Settings.from_env(env)
    assert settings.lock_timeout == 600
    _exercise(settings, env, holder_process)
    # The holder record of the killed process is stale, and names it no more once taken.
    lock = FileLock(settings.state_dir)
    with writer_lock(settings, "third"):
        holder = lock.holder()
        assert holder is not None and holder.pid == os.getpid() and holder.command == "third"


def test_the_lock_is_reentrant_within_a_process(tmp_path, holder_process):
    env = {"FLOE_HOME": str(tmp_path / "floe")}
    settings = Settings.from_env(env)
    acquire(settings, "dbt")
    acquire(settings, "dbt")  # the adapter opens many connections: one owner
    with writer_lock(settings, "floe build"), writer_lock(settings, "nested"):
        assert is_held(settings)
    assert is_held(settings)  # "dbt" still holds it
    release("dbt")
    assert not is_held(settings)
    # Released for real: another process takes it at once.
    holder_process(env)


def test_lock_timeout_is_a_setting():
    assert Settings.from_env({"FLOE_LOCK_TIMEOUT": "2.5"}).lock_timeout == 2.5
    from floe.runtime.settings import SettingsError

    with pytest.raises(SettingsError, match="FLOE_LOCK_TIMEOUT"):
        Settings.from_env({"FLOE_LOCK_TIMEOUT": "soon"})


@pytest.fixture(scope="module")
def postgres() -> Iterator[dict[str, str]]:
    """A loopback PostgreSQL (floe.cluster's), as the catalog database of a settings env."""
    with loopback_postgres("floe-lock-test-") as pg:
        yield {
            "FLOE_HOME": str(pg.root / "floe"),
            "FLOE_CATALOG_URI": pg.uri,
            "FLOE_CATALOG_USER": pg.user,
            "FLOE_CATALOG_PASSWORD": pg.password,
        }


def test_postgres_advisory_lock_waits_names_the_holder_and_survives_a_killed_holder(
    postgres, holder_process
):
    settings = Settings.from_env(postgres)
    lock = PostgresLock(settings)
    assert lock.key.endswith("/floe/lake")
    # Another catalog name in the same database is another lock.
    other = PostgresLock(dataclasses.replace(settings, catalog_name="other"))
    assert other.keys != lock.keys
    _exercise(settings, postgres, holder_process)


@pytest.mark.integration
def test_dbt_readers_never_wait_and_writers_name_the_holder(
    lakehouse, dbt, holder_process, monkeypatch
):
    holder = holder_process({"FLOE_HOME": str(lakehouse.home)})
    monkeypatch.setenv("FLOE_LOCK_TIMEOUT", "1")
    shown = dbt(["show", "--inline", "select 1 as one"])  # a reader: no wait, no failure
    assert shown.success
    run = dbt(["run", "-s", "stg_reference__product_priority"], expect_success=False)
    assert not run.success
    said = f"{run.exception} {run.failures}"
    assert f"pid {holder.pid}" in said and "holder for a test" in said, said
    assert not is_held(lakehouse)

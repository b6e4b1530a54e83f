"""`floe env publish` SIGKILLed at random moments, then resumed (docs/envs.md, "Publish").

After each kill: every table's main is either where it was before the publish or on its
branch head, and a table already moved is listed in the journal (no half-published
environment without the journal saying so). Resuming ends with every table on its
branch state. The normal suite kills twice; ``FLOE_ENV_KILLS`` (under ``-m chaos``)
more.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "env_project"
CHANGED = ("marts.env_child", "marts.env_mart", "marts.env_new")


def _main(spark, table: str) -> int | None:
    rows = spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").collect()
    return rows[0][0] if rows else None


def _publish_process(log: Path) -> subprocess.Popen:
    env = {**os.environ, "FLOE_DRIVER_MEMORY": "1g", "FLOE_SPARK_CORES": "1"}
    env.pop("FLOE_ENV", None)
    out = log.open("w")
    return subprocess.Popen(
        [sys.executable, "-u", "-m", "floe.cli", "env", "publish", "pr"],
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def _wait_for(log: Path, proc: subprocess.Popen, text: str, limit: float = 300) -> bool:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if text in log.read_text():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def _kill(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@pytest.mark.parametrize("kills", [int(os.environ.get("FLOE_ENV_KILLS", "2"))])
def test_publish_killed_at_random_moments_resumes_to_the_branch_state(
    spark, lakehouse, dbt_target_path, monkeypatch, tmp_path, kills
):
    from floe.envs import create, publish, status

    def build(env: str | None, **vars) -> None:
        if env:
            monkeypatch.setenv("FLOE_ENV", env)
        else:
            monkeypatch.delenv("FLOE_ENV", raising=False)
        run = run_dbt(
            ["build"],
            vars=vars,
            project=FIXTURE,
            target_path=dbt_target_path / "envcrash",
            quiet=True,
        )
        monkeypatch.delenv("FLOE_ENV", raising=False)
        assert run.success, run.failures or run.exception

    build(None)
    create(spark, lakehouse, "pr")
    build("pr", env_factor=5, env_new_model=True)
    st = status(spark, lakehouse, "pr")
    heads = {t.table: t.branch for t in st.tables if t.branch is not None}
    assert set(heads) == set(CHANGED)
    before = {t: _main(spark, t) for t in CHANGED}
    journal = lakehouse.home / "envs" / "pr.publish.json"

    rng = random.Random(int(os.environ.get("FLOE_CHAOS_SEED", "29")))
    for attempt in range(kills):
        log = tmp_path / f"publish-{attempt}.log"
        proc = _publish_process(log)
        # A random moment once the process works on the catalog: right after it
        # journaled (or resumed), up to a little past its last fast-forward.
        started = _wait_for(log, proc, "journal" if attempt == 0 else "resuming")
        assert started or proc.returncode == 0, log.read_text()[-3000:]
        time.sleep(rng.uniform(0.0, 1.5))
        _kill(proc)
        for table in CHANGED:
            main = _main(spark, table)
            assert main in (before[table], heads[table]), (table, main)
            if main != before[table]:
                # Moved: the journal must exist (or the publish finished entirely).
                assert journal.exists() or not (lakehouse.home / "envs" / "pr.json").exists()
        if not journal.exists():
            break
        planned = json.loads(journal.read_text())["tables"]
        assert {t: p["to"] for t, p in planned.items()} == heads

    if (lakehouse.home / "envs" / "pr.json").exists():
        publish(spark, lakehouse, "pr")
    for table in CHANGED:
        assert _main(spark, table) == heads[table]
        names = {r.name for r in spark.sql(f"select name from {table}.refs").collect()}
        assert names == {"main"}
    assert not journal.exists()
    assert spark.sql("select max(amount) from marts.env_mart").first()[0] == 5 * 199

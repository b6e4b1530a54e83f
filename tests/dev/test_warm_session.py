"""The warm session against a real `floe dev` server process on loopback (docs/dev.md).

Plain `dbt` command lines (dbt's own CLI, as an analyst types them) run in the server;
what they see is what a cold run would see: a file landed while the server runs is
ingested by the next warm build, a table rewritten by another process (pyiceberg) is
read fresh, the writer lock is taken and released per command, a failed command leaves
the session usable, and a server killed in the middle of a build leaves nothing
half-done.
"""

from __future__ import annotations

import csv
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pytest

from floe.dev.cli import start_detached
from floe.dev.client import is_alive, request
from floe.dev.protocol import read_server_info
from floe.runtime.settings import Settings, child_environment

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
DBT = str(Path(sys.executable).parent / "dbt")
FEED_DIR = Path("customers") / "customer_master"
DAY_1, DAY_2, DAY_3 = (f"load_date=2022-07-0{day}" for day in (1, 2, 3))
RAW_MODEL = "raw_customers__master"


@dataclass
class Warm:
    settings: Settings
    env: dict[str, str]
    source: Path  # generated landing files, copied into the landing zone day by day
    tmp: Path

    def dbt(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DBT, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def land(self, day: str) -> None:
        shutil.copytree(self.source / FEED_DIR / day, self.settings.landing / FEED_DIR / day)

    def commands_run(self) -> int:
        info = read_server_info(self.settings)
        assert info is not None
        return int(request(info, "status")["commands"])


def _start(settings: Settings, env: dict[str, str]) -> int:
    # start_detached passes this process's environment on: run it with the test's.
    saved = child_environment({})
    os.environ.update(env)
    try:
        pid, _log = start_detached(settings)
    finally:
        for key in env.keys() - saved.keys():
            os.environ.pop(key, None)
        os.environ.update(saved)
    return pid


def _stop(settings: Settings) -> None:
    info = read_server_info(settings)
    if info is None:
        return
    os.kill(info.pid, signal.SIGTERM)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and is_alive(info):
        time.sleep(0.2)


@pytest.fixture(scope="module")
def warm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Warm]:
    tmp = tmp_path_factory.mktemp("warm")
    env = child_environment(
        {
            "FLOE_HOME": str(tmp / "floe"),
            "FLOE_SETTLE_SECONDS": "0",
            "FLOE_LOCK_TIMEOUT": "3",
            "FLOE_DRIVER_MEMORY": "1g",
            "DBT_PROFILES_DIR": str(ROOT / "profiles"),
            "DBT_PROJECT_DIR": str(ROOT),
            "DBT_TARGET_PATH": str(tmp / "target"),
            "DBT_LOG_PATH": str(tmp / "logs"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        }
    )
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI", "FLOE_TARGET"):
        env.pop(var, None)
    settings = Settings.from_env(env)
    source = tmp / "generated"
    subprocess.run(
        [sys.executable, "-m", "floe.cli", "generate", "--only", "customer_master", "--days",
         "3", "--scale", "40", "--bad-share", "0", "--landing", str(source)],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    state = Warm(settings, env, source, tmp)
    state.land(DAY_1)
    _start(settings, env)
    yield state
    _stop(settings)


def _csv_rows(root: Path) -> int:
    rows = 0
    for path in sorted(root.rglob("*.csv")):
        with path.open(newline="") as handle:
            rows += sum(1 for _ in csv.DictReader(handle))
    return rows


def _csv_files(root: Path) -> int:
    return len(list(root.rglob("*.csv")))


def _raw_rows(settings: Settings) -> tuple[int, int]:
    """(rows, distinct source files) of raw.customer_master, read with pyiceberg."""
    from floe.runtime import open_catalog

    table = open_catalog(settings).load_table("raw.customer_master").scan().to_arrow()
    return table.num_rows, len(set(table["_source_file"].to_pylist()))


def _landed(settings: Settings) -> tuple[int, int]:
    """(data rows, files) of the CSVs landed for the feed: every row loaded once."""
    root = settings.landing / FEED_DIR
    return _csv_rows(root), _csv_files(root)


def test_plain_dbt_runs_in_the_warm_session(warm: Warm) -> None:
    before = warm.commands_run()
    done = warm.dbt("build", "-s", RAW_MODEL)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no warm session" not in done.stderr
    assert "OK created python incremental model raw.customer_master" in done.stdout
    assert done.stdout.count("Running with dbt=") <= 1  # never the banner twice
    assert warm.commands_run() == before + 1
    assert _raw_rows(warm.settings) == _landed(warm.settings)


def test_a_file_landed_while_the_server_runs_is_ingested_by_the_next_warm_build(
    warm: Warm,
) -> None:
    first = warm.dbt("build", "-s", RAW_MODEL)
    assert first.returncode == 0, first.stdout
    before = _raw_rows(warm.settings)
    warm.land(DAY_2)
    second = warm.dbt("build", "-s", RAW_MODEL)
    assert second.returncode == 0, second.stdout + second.stderr
    assert _raw_rows(warm.settings) == _landed(warm.settings)
    assert _raw_rows(warm.settings) > before


def test_a_table_rewritten_by_pyiceberg_is_read_fresh(warm: Warm) -> None:
    from floe.runtime import open_catalog

    catalog = open_catalog(warm.settings)
    schema = pa.schema([pa.field("id", pa.int64())])
    table = catalog.create_table("marts.dev_probe", schema=schema)
    table.append(pa.table({"id": [1, 2, 3]}, schema=schema))
    query = "select count(*) as probe_rows from marts.dev_probe"
    shown = warm.dbt("show", "--inline", query)
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "|          3 |" in shown.stdout, shown.stdout
    table.overwrite(pa.table({"id": [1, 2, 3, 4, 5]}, schema=schema))
    again = warm.dbt("show", "--inline", query)
    assert again.returncode == 0, again.stdout
    assert "|          5 |" in again.stdout, again.stdout


def test_the_writer_lock_is_taken_and_released_per_command(warm: Warm) -> None:
    from floe.runtime.locking import acquire, release

    acquire(warm.settings, "test-holder", command="test holds the lock", timeout=0)
    try:
        blocked = warm.dbt("run", "-s", "stg_customers__master")
        reader = warm.dbt("show", "--inline", "select 1 as one")
    finally:
        release("test-holder", warm.settings)
    assert blocked.returncode != 0
    assert "another floe writer holds the writer lock" in blocked.stdout
    assert "test holds the lock" in blocked.stdout
    assert reader.returncode == 0, reader.stdout  # readers never wait
    # The failed command left the session usable and the lock free.
    done = warm.dbt("run", "-s", "stg_customers__master")
    assert done.returncode == 0, done.stdout + done.stderr
    acquire(warm.settings, "test-after", timeout=0)  # released by the warm run
    release("test-after", warm.settings)


def test_a_failing_command_leaves_the_session_usable(warm: Warm) -> None:
    failed = warm.dbt("show", "--inline", "select * from marts.no_such_table_here")
    assert failed.returncode == 2, failed.stdout + failed.stderr  # dbt's code for an error
    assert "no_such_table_here" in failed.stdout
    assert "running cold" not in failed.stderr
    ok = warm.dbt("show", "--inline", "select 41 + 1 as answer")
    assert ok.returncode == 0 and "42" in ok.stdout, ok.stdout


def test_floes_dbt_entry_asks_the_warm_session_without_importing_dbt(warm: Warm) -> None:
    bin_dir = warm.tmp / "entry-bin"
    subprocess.run(
        [sys.executable, "-m", "floe.cli", "dev", "install-entry", "--bin-dir", str(bin_dir)],
        env=warm.env, check=True, capture_output=True,
    )  # fmt: skip
    before = warm.commands_run()
    shown = subprocess.run(
        [str(bin_dir / "dbt"), "show", "--inline", "select 6 * 7 as answer"],
        cwd=ROOT, env=warm.env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stdout + shown.stderr
    assert "42" in shown.stdout and "running cold" not in shown.stderr
    assert warm.commands_run() == before + 1


TINY_PROJECT = """name: floe_dev_watch_fixture
version: "0.1.0"
config-version: 2
profile: floe
model-paths: ["models"]
models:
  floe_dev_watch_fixture:
    +materialized: view
"""
TINY_MODELS = """version: 2
models:
  - name: dev_one
    description: A one-row view the watch test edits.
    columns:
      - name: id
        description: Its only column.
        data_tests: [not_null]
"""


def test_watch_rebuilds_a_saved_model_and_goes_on_after_a_syntax_error(warm: Warm) -> None:
    import io
    import threading

    from floe.dev.watch import watch_project

    project = warm.tmp / "tiny"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(TINY_PROJECT)
    (project / "models" / "_models.yml").write_text(TINY_MODELS)
    model = project / "models" / "dev_one.sql"
    model.write_text("select 1 as id\n")
    out = io.StringIO()
    stop = threading.Event()
    watcher = threading.Thread(
        target=watch_project,
        kwargs={"project": project, "interval": 0.2, "out": out, "should_stop": stop.is_set,
                "env": warm.env, "settings": warm.settings},
    )  # fmt: skip
    watcher.start()

    def wait_for(text: str, count: int = 1, timeout: float = 300) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if out.getvalue().count(text) >= count:
                return out.getvalue()
            time.sleep(0.2)
        raise AssertionError(f"no {text!r} (x{count}) in watch output:\n{out.getvalue()}")

    try:
        wait_for("floe dev watch: watching models")
        model.write_text("select 2 as id\n")
        shown = wait_for("floe dev watch: OK")
        assert "floe dev watch: dbt build -s dev_one" in shown
        assert "OK created sql view model default.dev_one" in shown
        assert "PASS not_null_dev_one_id" in shown
        model.write_text("select 1 as id,, 2\n")  # a syntax error
        shown = wait_for("floe dev watch: FAILED (exit 1)")
        assert "ERROR creating sql view model default.dev_one" in shown
        assert "PARSE_SYNTAX_ERROR" in shown, shown
        model.write_text("select 3 as id\n")  # fixed: the loop went on
        wait_for("floe dev watch: OK", count=2)
    finally:
        stop.set()
        watcher.join(timeout=60)
    query = "select id from default.dev_one"
    shown_row = warm.dbt("show", "--inline", query)
    assert "|  3 |" in shown_row.stdout, shown_row.stdout


def test_a_killed_server_leaves_nothing_half_done(warm: Warm) -> None:
    from floe.runtime.locking import acquire, release

    first = warm.dbt("build", "-s", RAW_MODEL)  # what landed so far is in
    assert first.returncode == 0, first.stdout + first.stderr
    # A fresh day's file, and the server killed while the build that ingests it runs.
    before_rows, before_files = _raw_rows(warm.settings)
    warm.land(DAY_3)
    info = read_server_info(warm.settings)
    assert info is not None
    client = subprocess.Popen(
        [DBT, "build", "-s", f"{RAW_MODEL}+"],
        cwd=ROOT, env=warm.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert client.stdout is not None
    for line in client.stdout:
        if "START python incremental model raw.customer_master" in line:
            break
    os.kill(info.pid, signal.SIGKILL)
    _out, err = client.communicate(timeout=120)
    assert client.returncode == 2
    assert "nothing is half-done" in err
    acquire(warm.settings, "after-kill", timeout=5)  # the kernel released the dead holder's lock
    release("after-kill", warm.settings)
    # Day 3's file is in the raw table whole or not at all; a new session finishes it.
    rows, files = _raw_rows(warm.settings)
    assert (rows, files) in (_landed(warm.settings), (before_rows, before_files))
    _start(warm.settings, warm.env)
    again = warm.dbt("build", "-s", RAW_MODEL)
    assert again.returncode == 0, again.stdout + again.stderr
    assert _raw_rows(warm.settings) == _landed(warm.settings)

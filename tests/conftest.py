"""Shared fixtures: one SparkSession for the whole run, a fresh lakehouse per scenario.

- `spark`: the session, configured by floe.runtime exactly as dbt and the CLI are.
- `lakehouse`: a fresh FLOE_HOME (catalog, warehouse, landing) for one test,
  switched to inside the same SparkSession (floe.runtime.use_settings); the dbt adapter
  opens its connections with the session's settings, and the environment names the same
  lakehouse for the CLI commands tests run in-process.

The fixtures are an edge (docs/runtime.md, "Settings"): they build Settings and pass
them down, and register the session hooks the CLI and the adapter register.
- `dbt`: runs `dbt <args>` in-process against the project, sharing the session.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import LOCATION_VARS, use_lakehouse

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def _session_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("floe_session")
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        os.environ.pop(var, None)
    os.environ["FLOE_HOME"] = str(home)
    os.environ.setdefault("FLOE_DRIVER_MEMORY", "3g")
    # Tests ingest files they just wrote: no settle time (tests of it set their own).
    os.environ.setdefault("FLOE_SETTLE_SECONDS", "0")
    return home


@pytest.fixture(scope="session", autouse=True)
def _runtime_filter_on_small_tables() -> Iterator[None]:
    """Every runtime-filtered MERGE takes the filtered path, whatever its table's size.

    In production Spark adds the filter only to tables of at least 32 MB; the tests'
    tables are far smaller, and the oracle and equality tests must cover that path
    (docs/decisions/0020-runtime-filtered-merges.md).
    """
    from floe.runtime.statements import STATEMENT_SETTINGS

    key = "spark.sql.optimizer.runtime.bloomFilter.applicationSideScanSizeThreshold"
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(STATEMENT_SETTINGS["runtime_filter"], key, "0")
        yield


@pytest.fixture(scope="session")
def spark(_session_home: Path):
    from floe import privacy
    from floe.runtime import Settings, add_session_hook, get_spark

    add_session_hook(privacy.session_hook)
    session = get_spark(Settings.from_env())
    yield session
    session.stop()


@pytest.fixture
def lakehouse(spark, tmp_path: Path) -> Iterator[Any]:
    """A fresh, empty lakehouse (catalog + warehouse + landing) for one test."""
    from floe.runtime import Settings

    previous = {k: os.environ.get(k) for k in LOCATION_VARS}
    settings = Settings.from_env({"FLOE_HOME": str(tmp_path / "floe"), "FLOE_SETTLE_SECONDS": "0"})
    use_lakehouse(spark, settings)
    yield settings
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


@pytest.fixture(scope="session")
def dbt_target_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # One target dir for the run, so dbt's partial parsing is reused between invocations.
    return tmp_path_factory.mktemp("dbt_target")


@pytest.fixture
def dbt(spark, dbt_target_path: Path) -> Callable[..., Any]:
    """`dbt(["build", "-s", "x"], vars={...}, expect_success=True)` in-process."""
    from floe.dbt_runner import run_dbt

    def invoke(args: list[str], *, vars: dict | None = None, expect_success: bool = True):
        run = run_dbt(args, vars=vars, project=ROOT, target_path=dbt_target_path, quiet=True)
        if expect_success and not run.success:
            raise AssertionError(f"dbt {' '.join(args)} failed: {run.failures or run.exception}")
        return run

    return invoke

"""dbt's adapter test suite (dbt-tests-adapter) against floe's adapter.

Runs the way dbt-spark runs its `spark_session` profile: adapter type `floe`, method
`session`, in this pytest process and its one SparkSession (tests/conftest.py `spark`;
dbt's session method reuses the active session). Every test class gets dbt's own
fixtures (a temporary project, a unique schema dropped afterwards) from
dbt.tests.fixtures.project, and the whole suite writes to one fresh lakehouse of its
own, selected again before each class (other tests point the session elsewhere).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from dbt.tests.fixtures.project import *  # noqa: F403 - dbt's project fixtures, as a plugin would

HERE = Path(__file__).parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Everything here runs dbt on Spark: `integration`, and `adapter` to run it alone.

    The whole catalogue (floe's core classes and every dbt-tests-adapter class dbt-spark
    or dbt-databricks runs) is part of `make test`: about 4 minutes on a quiet 2-core
    machine, since every class shares this process's SparkSession and runs dbt in-process.
    """
    for item in items:
        if HERE in Path(str(item.path)).parents:
            item.add_marker(pytest.mark.integration)
            item.add_marker(pytest.mark.adapter)


@pytest.fixture(scope="session")
def adapter_lakehouse(spark, tmp_path_factory: pytest.TempPathFactory) -> Any:
    from floe.runtime import Settings

    return Settings.from_env({"FLOE_HOME": str(tmp_path_factory.mktemp("adapter_suite"))})


@pytest.fixture(scope="class", autouse=True)
def _adapter_suite_lakehouse(request: pytest.FixtureRequest) -> Iterator[None]:
    """Point the shared session at the suite's lakehouse for each class, then back."""
    spark = request.getfixturevalue("spark")
    settings = request.getfixturevalue("adapter_lakehouse")
    from floe.runtime import Settings, use_settings
    from tests.helpers import LOCATION_VARS, use_lakehouse

    previous = {key: os.environ.get(key) for key in LOCATION_VARS}
    use_lakehouse(spark, settings)
    yield
    for key, value in previous.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value
    if previous["FLOE_HOME"]:
        use_settings(spark, Settings.from_env())


@pytest.fixture(scope="class")
def dbt_profile_target() -> dict[str, Any]:
    return {"type": "floe", "method": "session", "host": "localhost", "threads": 1}


@pytest.fixture(scope="class")
def profiles_yml(profiles_root: Any, dbt_profile_data: dict) -> Iterator[dict]:
    """dbt's fixture, restoring DBT_PROFILES_DIR (the Makefile sets it for the project)."""
    previous = os.environ.get("DBT_PROFILES_DIR")
    os.environ["DBT_PROFILES_DIR"] = str(profiles_root)
    Path(profiles_root, "profiles.yml").write_text(yaml.safe_dump(dbt_profile_data))
    yield dbt_profile_data
    if previous is None:
        os.environ.pop("DBT_PROFILES_DIR", None)
    else:
        os.environ["DBT_PROFILES_DIR"] = previous

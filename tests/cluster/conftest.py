"""One loopback cluster for tests/cluster, started and stopped by the real CLI.

Everything runs in child processes (`floe cluster ...`, `dbt build --target ...`): a
JVM's Spark master cannot change, and this pytest process may already hold a local
SparkSession (tests/conftest.py).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cluster.support import BIN, Cluster, child_env, run


@pytest.fixture(scope="session")
def cluster_root() -> Iterator[Path]:
    # Not under pytest's tmp (mode 0700): as root, PostgreSQL runs as the 'postgres'
    # user, which must be able to enter the folders above its data directory.
    root = Path(tempfile.mkdtemp(prefix="floe-cluster-test-"))
    root.chmod(0o711)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def cluster(cluster_root: Path) -> Iterator[Cluster]:
    home = cluster_root / "cluster-home"
    env = child_env(FLOE_HOME=str(home), FLOE_CLUSTER_CORES="2", FLOE_CLUSTER_MEMORY="1536m")
    try:
        run(["floe", "cluster", "up"], env, timeout=900)
        values = json.loads(run(["floe", "cluster", "env", "--json"], env).stdout)
        yield Cluster(cluster_root, home, values)
    finally:
        # Safety net; test_down_leaves_no_process_behind checks the real stop.
        subprocess.run(
            [str(BIN / "floe"), "cluster", "down"], env=env, capture_output=True, check=False
        )

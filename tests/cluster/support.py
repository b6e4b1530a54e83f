"""Helpers of tests/cluster: child environments, running the venv's floe/dbt, process scans."""

from __future__ import annotations

import base64
import json
import os
import secrets
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
# Small on purpose: CI has two cores; every feed, model and test still runs.
DRIVER_MEMORY = "1g"
# One masking salt and key for both builds of a test run, so the masked marts of the
# local and the cluster build agree (the cluster target never invents secrets).
PRIVACY_SECRETS = {
    "FLOE_PRIVACY_SALT": secrets.token_urlsafe(32),
    "FLOE_PRIVACY_KEY": base64.b64encode(secrets.token_bytes(64)).decode(),
}


def child_env(**overrides: str) -> dict[str, str]:
    """This environment without any FLOE_*/DBT_* setting of the test session, plus ``overrides``."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("FLOE_", "DBT_", "SPARK_")) and k != "PYSPARK_PYTHON"
    }
    env.update(
        DBT_PROFILES_DIR=str(ROOT / "profiles"),
        DBT_PROJECT_DIR=str(ROOT),
        DBT_SEND_ANONYMOUS_USAGE_STATS="false",
        PYSPARK_PYTHON=sys.executable,
        FLOE_DRIVER_MEMORY=DRIVER_MEMORY,
        **PRIVACY_SECRETS,
    )
    env.update(overrides)
    return env


def run(
    argv: list[str], env: Mapping[str, str], timeout: float = 1800
) -> subprocess.CompletedProcess:
    """Run a floe/dbt command of this venv; fail the test with its output on a non-zero exit."""
    done = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]],
        env=dict(env),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(argv)} exited {done.returncode}\n"
            f"{done.stdout[-6000:]}\n{done.stderr[-4000:]}"
        )
    return done


def processes_under(root: Path) -> list[str]:
    """Live processes whose command line or working directory is inside ``root``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        if str(root) in cmdline or cwd.startswith(str(root)):
            found.append(f"{entry.name}: {cmdline[:160]}")
    return found


@dataclass
class Cluster:
    root: Path
    home: Path
    env: dict[str, str]  # `floe cluster env --json`: the cluster target's variables

    def state(self) -> dict:
        return json.loads((self.home / "cluster" / "state.json").read_text())

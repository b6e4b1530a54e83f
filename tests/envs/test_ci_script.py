"""ci/env-ci.sh, the write-audit-publish CI script, run as CI runs it (docs/envs.md, "CI").

A copy of the fixture project stands for the pull request's checkout; production is
built in-process first. The script's floe and dbt are the real command-line tools, each
its own process.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from floe.dbt_runner import run_dbt

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "env_project"


def _script(project: Path, tmp: Path, publish: bool, *vars: str) -> subprocess.CompletedProcess:
    bin_dir = Path(sys.executable).parent
    env = {
        **os.environ,
        "FLOE_CI_ENV": "pr_7",
        "FLOE_CI_SELECT": "env_mart+",
        "FLOE_CI_PUBLISH": "1" if publish else "0",
        "FLOE_CI_DIFF": str(tmp / "env-diff.txt"),
        "FLOE_CI_MANIFEST": str(project / "target" / "manifest.json"),
        "FLOE_BIN": str(bin_dir / "floe"),
        "DBT_BIN": str(bin_dir / "dbt"),
        "FLOE_DRIVER_MEMORY": "1g",
    }
    env.pop("FLOE_ENV", None)
    args = ["--project-dir", str(project), "--profiles-dir", str(ROOT / "profiles")]
    args += ["--vars", "{" + ", ".join(vars) + "}"]
    return subprocess.run(
        ["bash", str(ROOT / "ci" / "env-ci.sh"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_ci_script_audits_then_publishes_or_leaves_main_untouched(spark, lakehouse, tmp_path):
    project = tmp_path / "pr"
    shutil.copytree(FIXTURE, project, ignore=shutil.ignore_patterns("target", "logs"))
    prod = run_dbt(["build"], project=project, target_path=tmp_path / "prod", quiet=True)
    assert prod.success, prod.failures or prod.exception
    main = spark.sql("select snapshot_id from marts.env_mart.refs where name = 'main'").first()

    failing = _script(project, tmp_path, True, "env_factor: 4", "env_audit_fails: true")
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "main is untouched" in failing.stderr
    now = spark.sql("select snapshot_id from marts.env_mart.refs where name = 'main'").first()
    assert now == main

    passing = _script(project, tmp_path, True, "env_factor: 4")
    assert passing.returncode == 0, passing.stdout + passing.stderr
    diff = (tmp_path / "env-diff.txt").read_text()
    assert "marts.env_mart (key id)" in diff and "amount (199)" in diff
    assert spark.sql("select max(amount) from marts.env_mart").first()[0] == 4 * 199
    refs = {r[0] for r in spark.sql("select name from marts.env_mart.refs").collect()}
    assert refs == {"main"}

"""A cold `dbt` starts Spark while dbt parses (docs/decisions/0043-cold-start.md).

The prestart must change nothing but the time: it touches no catalog before the
connection took the writer lock, the first connection gets the very session it started
(active in the connecting thread, schemas created then), a cold `dbt` command with it
builds what one without it builds, and a command that fails before connecting still
exits with dbt's code.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from floe.dev import client, coldstart
from floe.runtime.settings import Settings, child_environment

ROOT = Path(__file__).resolve().parents[2]
DBT = str(Path(sys.executable).parent / "dbt")


def _settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"FLOE_HOME": str(tmp_path / "floe"), **env})


def test_only_a_cold_dbt_command_that_connects_prestarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Settings] = []

    def prestart(settings: Settings) -> bool:
        started.append(settings)
        return True

    monkeypatch.setattr(coldstart, "prestart", prestart)
    settings = _settings(tmp_path)

    monkeypatch.setattr(sys, "argv", ["/usr/bin/python", "-m", "pytest"])
    monkeypatch.setattr(coldstart, "dbt_command", lambda: "run")
    assert not coldstart.prestart_for_dbt_cli(settings)  # not dbt's command line

    monkeypatch.setattr(sys, "argv", ["/venv/bin/dbt", "parse"])
    for which in ("parse", "ls", "deps", "clean", "serve", None):
        monkeypatch.setattr(coldstart, "dbt_command", lambda w=which: w)
        assert not coldstart.prestart_for_dbt_cli(settings), which

    monkeypatch.setattr(coldstart, "dbt_command", lambda: "run")
    assert not coldstart.prestart_for_dbt_cli(_settings(tmp_path, FLOE_SPARK_PRESTART="false"))
    monkeypatch.setattr(client, "SERVING", True)  # the warm server's own dbt runs
    assert not coldstart.prestart_for_dbt_cli(settings)
    monkeypatch.setattr(client, "SERVING", False)
    assert started == []

    for which in ("run", "build", "compile", "show", "test", "seed", "snapshot", "debug"):
        monkeypatch.setattr(coldstart, "dbt_command", lambda w=which: w)
        assert coldstart.prestart_for_dbt_cli(settings), which
    assert started == [settings] * 8


def test_floes_dbt_entry_prestarts_by_the_subcommand_before_importing_dbt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[Settings] = []
    monkeypatch.setattr(coldstart, "prestart", lambda s: started.append(s) or True)
    settings = _settings(tmp_path)
    for command in ("parse", "ls", "deps", "clean", "docs", None):
        assert not coldstart.prestart_for_command(command, settings), command
    assert not coldstart.prestart_for_command("run", _settings(tmp_path, FLOE_SPARK_PRESTART="0"))
    monkeypatch.setattr(client, "SERVING", True)
    assert not coldstart.prestart_for_command("run", settings)
    monkeypatch.setattr(client, "SERVING", False)
    assert started == []
    assert coldstart.prestart_for_command("build", settings)
    assert started == [settings]


def test_the_entry_prestarts_only_for_a_project_whose_profile_uses_floe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, profiles, home = tmp_path / "p", tmp_path / "profiles", tmp_path / "home"
    for directory in (project, profiles, home / ".dbt"):
        directory.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    (project / "dbt_project.yml").write_text("name: p\nprofile: mine\n")
    floe_profile = "mine:\n  target: x\n  outputs:\n    x: {type: floe, method: session}\n"
    duck_profile = "mine:\n  target: x\n  outputs:\n    x: {type: duckdb}\n"
    (profiles / "profiles.yml").write_text(floe_profile)
    (home / ".dbt" / "profiles.yml").write_text(duck_profile)

    uses = coldstart.uses_floe_profile
    assert uses([], {"DBT_PROFILES_DIR": str(profiles)}, project)
    assert uses(["run", "--profiles-dir", str(profiles)], {}, tmp_path / "elsewhere" / "x") is False
    assert uses(["run", f"--project-dir={project}", "--profiles-dir", str(profiles)], {}, tmp_path)
    assert uses([], {"DBT_PROJECT_DIR": str(project), "DBT_PROFILES_DIR": str(profiles)}, tmp_path)
    assert not uses([], {}, project)  # ~/.dbt's profile of that name is duckdb's
    (project / "profiles.yml").write_text(floe_profile)
    assert uses([], {}, project)  # the project's own profiles.yml comes before ~/.dbt
    (project / "dbt_project.yml").write_text("name: p\nprofile: \"{{ env_var('P') }}\"\n")
    assert not uses([], {"DBT_PROFILES_DIR": str(profiles)}, project)  # unclear: no
    (project / "dbt_project.yml").write_text("name: p\nprofile: [broken\n")
    assert not uses([], {"DBT_PROFILES_DIR": str(profiles)}, project)

    started: list[str] = []
    monkeypatch.setattr(coldstart, "prestart_for_command", lambda c: started.append(c) or True)
    (project / "dbt_project.yml").write_text("name: p\nprofile: mine\n")
    env = {"DBT_PROFILES_DIR": str(profiles)}
    assert not coldstart.prestart_for_entry("parse", ["parse"], env, project)
    assert coldstart.prestart_for_entry("run", ["run"], env, project)
    assert not coldstart.prestart_for_entry("run", ["run"], {}, tmp_path)  # no project here
    assert started == ["run"]


def test_the_setting_defaults_on_and_reads_booleans(tmp_path: Path) -> None:
    assert _settings(tmp_path).spark_prestart is True
    assert _settings(tmp_path, FLOE_SPARK_PRESTART="0").spark_prestart is False


PROBE = r"""
import json, sys, threading
from pathlib import Path
from pyspark.sql import SparkSession
from floe.runtime import session
from floe.runtime.settings import Settings

settings = Settings.from_env()
catalog = Path(settings.home) / "catalog.db"
assert session.prestart(settings)
assert not session.prestart(settings)  # one start at a time
session._PRESTART.join()
touched_before = catalog.exists()
prestarted = session._PRESTARTED[0]
spark = session.get_spark(settings)
namespaces = sorted(r[0] for r in spark.sql("show namespaces").collect())
active = SparkSession.getActiveSession()
print(json.dumps({
    "catalog_touched_by_prestart": touched_before,
    "same_session": spark is prestarted,
    "active_here": active is not None and active._jsparkSession.equals(spark._jsparkSession),
    "namespaces": namespaces,
    "again": session.prestart(settings),
    "one": spark.sql("select 1 as x").collect()[0].x,
}))
"""


def _probe(tmp_path: Path, script: str) -> dict:
    """The JSON last printed by ``script``, run in a fresh Python on a fresh lakehouse."""
    env = child_environment(
        {
            "FLOE_HOME": str(tmp_path / "floe"),
            "FLOE_DRIVER_MEMORY": "1g",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        }
    )
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI"):
        env.pop(var, None)
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.integration
def test_the_first_connection_gets_the_prestarted_session_and_the_catalog_waits(
    tmp_path: Path,
) -> None:
    seen = _probe(tmp_path, PROBE)
    assert seen["catalog_touched_by_prestart"] is False
    assert seen["same_session"] and seen["active_here"]
    assert {"raw", "staging", "marts", "default"} <= set(seen["namespaces"])
    assert seen["again"] is False  # a running session is never started twice
    assert seen["one"] == 1


def _project(root: Path, view_sql: str) -> Path:
    project = root / "project"
    (project / "models").mkdir(parents=True)
    (project / "dbt_project.yml").write_text(
        "name: coldstart\nversion: '0.1.0'\nconfig-version: 2\nprofile: floe\n"
        "model-paths: ['models']\nmodels:\n  coldstart:\n    +materialized: table\n"
        "    +schema: staging\n    one_view:\n      +materialized: view\n"
    )
    (project / "macros").mkdir()
    (project / "macros" / "generate_schema_name.sql").write_text(
        "{% macro generate_schema_name(custom_schema_name, node) %}"
        "{{ custom_schema_name or target.schema }}{% endmacro %}\n"
    )
    (project / "models" / "base_table.sql").write_text("select id from range(5)\n")
    (project / "models" / "one_view.sql").write_text(view_sql)
    return project


@pytest.mark.integration
def test_cold_dbt_with_prestart_builds_and_a_parse_error_still_exits_2(tmp_path: Path) -> None:
    project = _project(tmp_path, "select id * 2 as twice from {{ ref('base_table') }}\n")
    env = child_environment(
        {
            "FLOE_HOME": str(tmp_path / "floe"),
            "FLOE_DRIVER_MEMORY": "1g",
            "DBT_PROFILES_DIR": str(ROOT / "profiles"),
            "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)]),
        }
    )
    for var in ("FLOE_LANDING", "FLOE_WAREHOUSE", "FLOE_CATALOG_URI", "FLOE_TARGET"):
        env.pop(var, None)
    env.pop("DBT_PROJECT_DIR", None)

    def dbt(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [DBT, *args], cwd=project, env=env, capture_output=True, text=True, timeout=900
        )

    built = dbt("build")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-2000:]
    shown = dbt("show", "-s", "one_view", "--limit", "10", "--output", "json")
    assert shown.returncode == 0, shown.stdout[-3000:]
    assert '"twice": 8' in shown.stdout
    # Built again, cold: dbt's relation cache now comes from the SQLite catalog, so no
    # statement opens a connection during planning and each node's first adapter call
    # (its inputs' fingerprints) must open it (the writer lock, the session, FLOE_ENV).
    again = dbt("build")
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-2000:]
    assert "PASS=2" in again.stdout

    (project / "models" / "one_view.sql").write_text("select {{ broken( from x\n")
    failed = dbt("run", "-s", "one_view")
    assert failed.returncode == 2, failed.stdout[-3000:]
    assert "Compilation Error" in failed.stdout or "Parsing Error" in failed.stdout

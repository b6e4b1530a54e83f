"""The warm session's decisions that need no server: routing, refusal, watch selection."""

from __future__ import annotations

import io
import os
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest

from floe.dev.client import Refused, is_dbt_cli, run_in_server
from floe.dev.protocol import ServerInfo, read_server_info, remove_server_info, write_server_info
from floe.dev.server import exit_code, refusal, target_of
from floe.dev.watch import changed, selection_for, watched_dirs
from floe.runtime.settings import Settings


def test_only_dbts_command_line_forwards() -> None:
    assert is_dbt_cli("/venv/bin/dbt")
    assert is_dbt_cli("/venv/lib/python3.11/site-packages/dbt/cli/main.py")
    assert not is_dbt_cli("/venv/bin/floe")  # floe build runs dbt in-process: never forwarded
    assert not is_dbt_cli("/venv/bin/pytest")


def test_exit_codes_are_dbts() -> None:
    assert exit_code(SimpleNamespace(success=True, exception=None)) == 0
    assert exit_code(SimpleNamespace(success=False, exception=None)) == 1
    assert exit_code(SimpleNamespace(success=False, exception=ValueError("x"))) == 2


def test_the_target_comes_from_the_command_line_then_the_environment() -> None:
    assert target_of(["run"], {}) == "local"
    assert target_of(["run", "--target", "cluster"], {}) == "cluster"
    assert target_of(["run", "-t", "cluster"], {"FLOE_TARGET": "local"}) == "cluster"
    assert target_of(["run", "--target=cluster"], {}) == "cluster"
    assert target_of(["run"], {"FLOE_TARGET": "cluster"}) == "cluster"


def test_a_command_for_another_lakehouse_or_target_runs_cold(tmp_path: Path) -> None:
    env = {"FLOE_HOME": str(tmp_path / "a")}
    server = Settings.from_env(env)
    assert refusal(server, ["run"], env) is None
    assert refusal(server, ["run"], {**env, "DBT_PROJECT_DIR": str(tmp_path)}) is None
    other = refusal(server, ["run"], {"FLOE_HOME": str(tmp_path / "b")})
    assert other is not None and "home" in other and "catalog_uri" in other
    assert "lock_timeout" in (refusal(server, ["run"], {**env, "FLOE_LOCK_TIMEOUT": "1"}) or "")
    assert "'cluster'" in (refusal(server, ["run", "--target", "cluster"], env) or "")
    assert "invalid" in (refusal(server, ["run"], {**env, "FLOE_SPARK_UI": "maybe"}) or "")


def test_the_state_file_is_private_and_only_its_server_removes_it(tmp_path: Path) -> None:
    settings = Settings.from_env({"FLOE_HOME": str(tmp_path)})
    assert read_server_info(settings) is None
    info = ServerInfo(pid=123, port=1, token="t", project_dir="p", home="h", started_at="s")
    write_server_info(settings, info)
    path = settings.state_dir / "dev" / "server.json"
    assert path.stat().st_mode & 0o777 == 0o600
    assert read_server_info(settings) == info
    remove_server_info(settings, pid=456)
    assert read_server_info(settings) == info
    remove_server_info(settings, pid=123)
    assert read_server_info(settings) is None


def test_a_stale_state_file_is_refused_not_hung_on(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    info = ServerInfo(pid=os.getpid(), port=port, token="t", project_dir="", home="",
                      started_at="")  # fmt: skip
    with pytest.raises(Refused, match="does not answer"):
        run_in_server(info, ["run"], cwd=str(tmp_path), env={}, out=io.StringIO())


def test_watch_selects_what_a_saved_file_defines(tmp_path: Path) -> None:
    (tmp_path / "dbt_project.yml").write_text("name: x\nmodel-paths: [models, python_models]\n")
    (tmp_path / "models" / "staging").mkdir(parents=True)
    (tmp_path / "python_models").mkdir()
    assert watched_dirs(tmp_path) == [tmp_path / "models", tmp_path / "python_models"]
    sql = tmp_path / "models" / "staging" / "stg_a__b.sql"
    assert selection_for(sql, tmp_path) == ["stg_a__b"]
    assert selection_for(tmp_path / "python_models" / "py_m.py", tmp_path) == ["py_m"]
    yml = tmp_path / "models" / "staging" / "_a__models.yml"
    yml.write_text(
        "version: 2\nmodels:\n  - name: stg_a__b\n  - name: stg_a__c\n"
        "sources:\n  - name: landing_a\n"
    )
    assert selection_for(yml, tmp_path) == ["stg_a__b", "stg_a__c", "source:landing_a+1"]
    yml.write_text("models: [\n  - broken")  # dbt reports the error: build the folder
    assert selection_for(yml, tmp_path) == ["path:models/staging"]


def test_watch_sees_added_and_modified_files_only() -> None:
    a, b, c = Path("a.sql"), Path("b.sql"), Path("c.sql")
    before = {a: (1.0, 10), b: (1.0, 10)}
    after = {a: (1.0, 10), b: (2.0, 11), c: (1.0, 1)}
    assert changed(before, after) == [b, c]
    assert changed(after, {a: (1.0, 10)}) == []  # deletions rebuild nothing


def test_floes_dbt_entry_asks_only_for_commands_that_open_the_profile() -> None:
    from floe.dev.entry import FORWARDED, subcommand

    assert subcommand(["--debug", "run", "-s", "x"]) == "run"
    assert subcommand(["--version"]) is None
    assert {"run", "build", "compile", "show", "test"} <= FORWARDED
    assert "deps" not in FORWARDED and "init" not in FORWARDED and "clean" not in FORWARDED


def test_the_entry_exits_with_dbts_status(capsys: pytest.CaptureFixture[str]) -> None:
    from floe.dev.entry import exit_status

    assert [exit_status(v) for v in (None, 0, 1, 2)] == [0, 0, 1, 2]
    assert exit_status("dbt failed: see above") == 1
    assert "dbt failed: see above" in capsys.readouterr().err

"""The remembered driver command line of a cold start (floe.runtime.launcher, ADR 0043)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from floe.runtime import Settings
from floe.runtime.launcher import launch_overlay, overlay_home, spark_home
from floe.runtime.settings import child_environment


def _submit(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = child_environment({})
    env.pop("SPARK_HOME", None)
    return subprocess.run(
        [str(home / "bin" / "spark-submit"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.integration
def test_the_launchers_command_is_remembered_replayed_and_a_bad_one_relaunched(tmp_path):
    home = overlay_home(tmp_path, spark_home())
    assert (home / "bin" / "spark-submit").stat().st_mode & 0o777 == 0o755
    first = _submit(home, "--version")
    assert first.returncode == 0, first.stderr[-2000:]
    assert "version" in first.stderr
    [cached] = list((tmp_path / "commands").iterdir())
    words = cached.read_bytes().split(b"\0")
    assert os.access(words[0].decode(), os.X_OK) and b"org.apache.spark.deploy.SparkSubmit" in words

    again = _submit(home, "--version")  # replayed: the same answer, no new entry
    assert again.returncode == 0 and again.stderr.count("version") == first.stderr.count("version")
    assert list((tmp_path / "commands").iterdir()) == [cached]

    other = _submit(home, "--conf", "spark.driver.memory=1g", "--version")  # other arguments
    assert other.returncode == 0
    assert len(list((tmp_path / "commands").iterdir())) == 2

    cached.write_bytes(b"not a command")  # anything unexpected: Spark's own launcher again
    healed = _submit(home, "--version")
    assert healed.returncode == 0 and "version" in healed.stderr
    assert cached.read_bytes().split(b"\0")[0] == words[0]


def test_the_overlay_is_seen_only_by_pyspark_s_launcher_while_launching(tmp_path):
    from pyspark import java_gateway

    real = str(spark_home())
    environment = child_environment({})
    with launch_overlay(tmp_path):
        overlay = Path(java_gateway._find_spark_home())
        assert overlay.parent == tmp_path / "home"  # one overlay per Spark install
        script = (overlay / "bin" / "spark-submit").read_text()
        assert f"export SPARK_HOME={real}" in script  # the real home, for the driver
        assert child_environment({}) == environment  # the environment is not touched
    assert java_gateway._find_spark_home() == real
    with launch_overlay(None):
        assert java_gateway._find_spark_home() == real


@pytest.mark.integration
def test_credentials_are_never_kept_and_a_truncated_command_is_not_replayed(tmp_path):
    home = overlay_home(tmp_path, spark_home())
    secret = _submit(home, "--conf", "spark.x.jdbc.password=hunter2", "--version")
    assert secret.returncode == 0
    assert not (tmp_path / "commands").exists() or not list((tmp_path / "commands").iterdir())

    assert _submit(home, "--version").returncode == 0
    [cached] = list((tmp_path / "commands").iterdir())
    whole = cached.read_bytes()
    cached.write_bytes(whole[: whole.rindex(b"\0", 0, len(whole) - 1) + 1])  # last word cut
    again = _submit(home, "--version")
    assert again.returncode == 0 and "version" in again.stderr
    assert cached.read_bytes() == whole  # launched anew and kept whole


def test_the_cache_setting_defaults_into_the_environment_and_turns_off():
    assert Settings.from_env({}).spark_launch_cache is not None
    assert Settings.from_env({"FLOE_SPARK_LAUNCH_CACHE": "off"}).spark_launch_cache is None
    chosen = Settings.from_env({"FLOE_SPARK_LAUNCH_CACHE": "/tmp/x"}).spark_launch_cache
    assert chosen == Path("/tmp/x")

"""Jar lookup: explicit override, then pip/Debian jars, then Maven only when allowed."""

from pathlib import Path

import pytest

from floe.runtime import jars
from floe.runtime.jars import JarNotFoundError, resolve_jars
from floe.runtime.settings import Settings


def _settings(tmp_path: Path, **env: str) -> Settings:
    return Settings.from_env({"FLOE_HOME": str(tmp_path), **env})


def test_environment_override_wins(tmp_path: Path) -> None:
    jar = tmp_path / "my-sqlite.jar"
    jar.write_bytes(b"PK")
    settings = _settings(tmp_path, FLOE_SQLITE_JDBC_JAR=str(jar))
    assert str(jar) in resolve_jars(("sqlite",), settings).paths


def test_override_to_a_missing_file_is_an_error(tmp_path: Path) -> None:
    settings = _settings(tmp_path, FLOE_ICEBERG_JAR=str(tmp_path / "nope.jar"))
    with pytest.raises(JarNotFoundError, match="FLOE_ICEBERG_JAR"):
        resolve_jars(("iceberg",), settings)


def test_missing_jar_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(jars, "_iceberg_candidates", lambda: ())
    with pytest.raises(JarNotFoundError) as err:
        resolve_jars(("iceberg",), _settings(tmp_path))
    assert "snowpark-connect-deps-iceberg==1.0.2" in str(err.value)
    assert "FLOE_ALLOW_MAVEN=1" in str(err.value)


def test_maven_coordinates_when_online_and_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(jars, "_iceberg_candidates", lambda: ())
    resolved = resolve_jars(("iceberg",), _settings(tmp_path, FLOE_ALLOW_MAVEN="1"))
    assert resolved.paths == ()
    assert resolved.maven == ("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0",)


def test_the_pip_and_debian_jars_are_found(tmp_path: Path) -> None:
    found = resolve_jars(("iceberg", "sqlite"), _settings(tmp_path))
    names = [Path(p).name for p in found.paths]
    assert names[0].startswith("iceberg-spark-runtime-3.5_2.12-")
    assert names[1] == "sqlite-jdbc.jar" and found.maven == ()

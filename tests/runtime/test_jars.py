import pytest

from floe.runtime import jars
from floe.runtime.jars import JarNotFoundError, resolve_jars


def test_environment_override_wins(tmp_path, monkeypatch):
    jar = tmp_path / "my-sqlite.jar"
    jar.write_bytes(b"PK")
    monkeypatch.setenv("FLOE_SQLITE_JDBC_JAR", str(jar))
    assert str(jar) in resolve_jars(("sqlite",)).paths


def test_override_to_a_missing_file_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FLOE_ICEBERG_JAR", str(tmp_path / "nope.jar"))
    with pytest.raises(JarNotFoundError, match="FLOE_ICEBERG_JAR"):
        resolve_jars(("iceberg",))


def test_missing_jar_says_how_to_get_it(monkeypatch):
    monkeypatch.delenv("FLOE_ICEBERG_JAR", raising=False)
    monkeypatch.delenv("FLOE_ALLOW_MAVEN", raising=False)
    monkeypatch.setattr(jars, "_iceberg_candidates", lambda: ())
    with pytest.raises(JarNotFoundError) as err:
        resolve_jars(("iceberg",))
    assert "snowpark-connect-deps-iceberg==1.0.2" in str(err.value)
    assert "FLOE_ALLOW_MAVEN=1" in str(err.value)


def test_maven_coordinates_when_online_and_allowed(monkeypatch):
    monkeypatch.delenv("FLOE_ICEBERG_JAR", raising=False)
    monkeypatch.setenv("FLOE_ALLOW_MAVEN", "1")
    monkeypatch.setattr(jars, "_iceberg_candidates", lambda: ())
    resolved = resolve_jars(("iceberg",))
    assert resolved.paths == ()
    assert resolved.maven == ("org.apache.iceberg:iceberg-spark-runtime-3.5_2.12:1.10.0",)

"""The driver JVM's class-data-sharing archive (floe.runtime.cds, ADR 0052).

`floe dev spark-archive` writes it; a session started with it loads Spark's classes
from it (the JVM's own class-load log says where each class came from); a session
given a corrupt archive starts as before and says nothing about it.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

pytestmark = pytest.mark.integration

# A child process starts floe's session with the archive and logs where classes load from.
CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from floe.runtime.session import session_builder
    from floe.runtime.settings import Settings

    home, archive, log = sys.argv[1:4]
    Path(home).mkdir(parents=True, exist_ok=True)
    settings = Settings.from_env({"FLOE_HOME": home, "FLOE_SPARK_CDS": archive})
    spark = session_builder(settings, f"-Xlog:class+load=info:file={log}").getOrCreate()
    spark.sql("create namespace if not exists staging")
    spark.sql("create table staging.t (a int) using iceberg")
    spark.sql("insert into staging.t values (1)")
    print("rows", spark.table("staging.t").count())
    spark.stop()
    """
)


def _start(tmp_path: Path, archive: Path, name: str) -> tuple[subprocess.CompletedProcess, str]:
    log = tmp_path / f"{name}-classes.log"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / name), str(archive), str(log)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done, log.read_text() if log.exists() else ""


def _source_of(log: str, cls: str) -> str:
    for line in log.splitlines():
        if f" {cls} source: " in line:
            return line.split(" source: ", 1)[1]
    raise AssertionError(f"{cls} not in the class-load log")


def test_the_archive_is_written_and_a_session_loads_spark_from_it(tmp_path):
    from floe.cli import main

    archive = tmp_path / "spark-cds.jsa"
    result = CliRunner().invoke(main, ["dev", "spark-archive", "--path", str(archive)])
    assert result.exit_code == 0, result.output
    assert archive.stat().st_size > 10 * 2**20  # Spark's and Iceberg's classes

    done, log = _start(tmp_path, archive, "with")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rows 1" in done.stdout
    # the dynamic archive is the "top" layer above the JDK's own base archive
    assert _source_of(log, "org.apache.spark.sql.SparkSession") == "shared objects file (top)"
    assert "shared objects file (top)" in _source_of(log, "org.apache.iceberg.spark.SparkCatalog")

    garbage = tmp_path / "garbage.jsa"
    garbage.write_bytes(bytes(range(256)) * 4096)
    done, log = _start(tmp_path, garbage, "garbage")
    assert done.returncode == 0, done.stderr[-2000:]
    assert "rows 1" in done.stdout
    assert "shared objects file (top)" not in log  # not used: loaded from the jars
    assert "cds" not in (done.stdout + done.stderr).lower()  # and silently so


def test_the_setting_names_the_archive_or_turns_it_off(tmp_path):
    from floe.runtime.session import spark_conf
    from floe.runtime.settings import Settings, default_cds_archive

    archive = tmp_path / "a.jsa"
    archive.write_bytes(b"x")
    home = {"FLOE_HOME": str(tmp_path)}
    options = spark_conf(Settings.from_env({**home, "FLOE_SPARK_CDS": str(archive)}))[
        "spark.driver.extraJavaOptions"
    ]
    assert f"-XX:SharedArchiveFile={archive}" in options
    assert "-Xlog:cds=off" in options
    off = spark_conf(Settings.from_env({**home, "FLOE_SPARK_CDS": "off"}))
    assert "SharedArchiveFile" not in off["spark.driver.extraJavaOptions"]
    missing = spark_conf(Settings.from_env({**home, "FLOE_SPARK_CDS": str(tmp_path / "no")}))
    assert "SharedArchiveFile" not in missing["spark.driver.extraJavaOptions"]
    assert Settings.from_env(home).spark_cds == default_cds_archive()

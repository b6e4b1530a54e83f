"""A class-data-sharing archive for the driver JVM: Spark starts in about half the time.

A cold floe command spends most of its start in the JVM loading and verifying the
classes of Spark, Iceberg and their libraries (about 7 s on this 2-core machine for a
session and its first statements). HotSpot's AppCDS keeps those classes, parsed and
verified, in an archive file that later JVMs map instead (JDK 13+:
``-XX:ArchiveClassesAtExit`` writes it when a JVM exits, ``-XX:SharedArchiveFile``
uses it). `make setup` writes one per environment (``floe dev spark-archive``) by
running a small representative workload (docs/decisions/0052-class-data-sharing-for-spark.md).

A JVM uses the archive only when its class path and JDK match the ones it was written
with; otherwise (another catalog's JDBC jar, a changed venv, a corrupt file) it starts
as before. ``-Xlog:cds=off`` keeps either case silent, so no output changes.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from floe.runtime.settings import Settings

# The JVM options that write the archive as the JVM exits (quietly).
_DUMP = "-XX:ArchiveClassesAtExit={path} -Xlog:cds=off -Xlog:cds+dynamic=off"


class ArchiveError(RuntimeError):
    """The archive could not be written; floe runs as well without one, only slower."""


def write_archive(archive: Path, timeout: float = 600.0) -> Path:
    """Write the archive for this environment at ``archive`` (atomically replacing one).

    A fresh Python process starts a session on a throw-away lakehouse with the dump
    option, runs the statements a build runs first (DDL, writes, a MERGE, views,
    queries, Arrow), stops, and waits for its JVM to exit: the JVM writes the archive
    as it exits.
    """
    archive.parent.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_name(f".{archive.name}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="floe-cds-") as home:
        done = subprocess.run(
            [sys.executable, "-m", "floe.runtime.cds", str(tmp), home],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    if done.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
        tmp.unlink(missing_ok=True)
        raise ArchiveError(
            f"the driver JVM wrote no class-data-sharing archive (exit {done.returncode}): "
            f"{done.stderr.strip()[-800:]}"
        )
    tmp.replace(archive)
    return archive


def _workload(settings: Settings, dump_to: Path) -> None:
    """Start a session that dumps its classes to ``dump_to`` at exit, run a build's
    first statements, and let the JVM exit."""
    from pyspark import SparkContext

    from floe.runtime.session import session_builder

    spark = session_builder(settings, _DUMP.format(path=dump_to)).getOrCreate()
    for statement in (
        "create namespace if not exists staging",
        "create table staging.cds_t (id bigint, name string, ts timestamp) using iceberg "
        "tblproperties ('format-version' = '2')",
        "insert into staging.cds_t values (1, 'a', current_timestamp()), (2, 'b', null)",
        "create or replace view staging.cds_v as select id, upper(name) as name from staging.cds_t",
        "merge into staging.cds_t t using (select 2 as id, 'c' as name) s on t.id = s.id "
        "when matched then update set t.name = s.name "
        "when not matched then insert (id, name, ts) values (s.id, s.name, null)",
        "delete from staging.cds_t where id = 1",
        "show tables in staging",
        "describe table extended staging.cds_t",
        "select * from staging.cds_t.snapshots",
    ):
        spark.sql(statement).collect()
    frame = spark.sql(
        "select id, name, count(*) over (partition by name) as n, "
        "row_number() over (order by id) as r from staging.cds_v"
    )
    frame.toPandas()
    spark.createDataFrame(frame.toPandas()).writeTo("staging.cds_t2").using("iceberg").create()
    spark.table("staging.cds_t2").groupBy("name").count().collect()
    gateway = SparkContext._gateway
    spark.stop()
    proc = getattr(gateway, "proc", None)
    if gateway is not None:
        gateway.shutdown()
    if proc is not None:  # the JVM exits when its stdin closes, writing the archive
        proc.stdin.close()
        proc.wait(timeout=300)


def main(argv: list[str]) -> int:
    """``python -m floe.runtime.cds <archive> <home>``: the edge of :func:`write_archive`.

    The session is floe's defaults on a throw-away lakehouse at ``home`` (the embedded
    catalog's class path, which every local command shares), with no archive in use.
    """
    from floe.runtime.settings import Settings

    settings = Settings.from_env({"FLOE_HOME": argv[1], "FLOE_SPARK_CDS": "off"})
    _workload(settings, Path(argv[0]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

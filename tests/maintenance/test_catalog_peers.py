"""After ``floe catalog migrate``, one warehouse, two catalogs, no divergence, no loss.

A table is built through the SQLite catalog and migrated into a real PostgreSQL
(floe.cluster's own, on loopback). Then, as a user could:

- on the old (SQLite) side, ``dbt run`` and ``floe maintain`` are refused, naming the
  new catalog (it is retired: the writer lock checks it);
- on the new side the table is written (three appends with pyiceberg) and ``floe
  maintain`` runs (a real process: Spark on the PostgreSQL catalog) with a policy that
  expires everything but the current snapshot, and with every file aged past the
  orphan cutoff;
- both sides still read every row they had: expiry kept the old side's snapshot (a
  tag) and orphan removal kept the old side's metadata file, which the new side's
  metadata log no longer lists (``write.metadata.previous-versions-max`` = 1).

docs/cluster.md, "Catalog migration".
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers import loopback_postgres

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
TABLE = "marts.peer_kept"


@pytest.fixture(scope="module")
def postgres() -> Iterator[tuple[str, str, str]]:
    """(JDBC URI, user, password) of a loopback PostgreSQL with an empty database."""
    with loopback_postgres("floe-peers-test-") as pg:
        yield pg.uri, pg.user, pg.password


def _rows(table) -> list[tuple]:
    return sorted(tuple(r.values()) for r in table.scan().to_arrow().to_pylist())


def test_the_old_catalog_is_retired_and_both_sides_still_read_after_maintenance(
    spark, lakehouse, dbt, postgres
):
    import pyarrow as pa
    from click.testing import CliRunner

    from floe.cli import main
    from floe.runtime.catalog import CatalogDatabase, open_catalog_at
    from floe.runtime.catalog_migration import migrate_catalog
    from floe.runtime.locking import CatalogRetired, acquire, is_held

    spark.sql(
        f"create table {TABLE} (id int, v string) using iceberg tblproperties ("
        "'format-version' = '2', 'history.expire.min-snapshots-to-keep' = '1', "
        "'history.expire.max-snapshot-age-ms' = '0', "
        "'write.metadata.previous-versions-max' = '1')"
    )
    for i in range(3):
        spark.sql(f"insert into {TABLE} values ({i}, 'old {i}')")
    old_rows = sorted(tuple(r) for r in spark.table(TABLE).collect())

    uri, user, password = postgres
    source = CatalogDatabase(lakehouse.catalog_uri)
    target = CatalogDatabase(uri, user, password)
    migrate_catalog(source, target, warehouse=lakehouse.warehouse)
    assert migrate_catalog(source, target, warehouse=lakehouse.warehouse).copied == []

    # -- the old side refuses floe's writers, naming the new catalog
    with pytest.raises(CatalogRetired, match="migrated to jdbc:postgresql://"):
        acquire(lakehouse, "a test writer")
    assert not is_held(lakehouse)
    run = dbt(["run", "-s", "stg_reference__product_priority"], expect_success=False)
    assert not run.success
    assert "retired" in f"{run.exception} {run.failures}"
    refused = CliRunner().invoke(main, ["maintain", "--table", TABLE])
    assert refused.exit_code != 0 and "retired" in refused.output, refused.output

    # -- the new side writes and maintains
    new_catalog = open_catalog_at(target, lakehouse.warehouse)
    new_table = new_catalog.load_table(tuple(TABLE.split(".")))
    arrow_schema = new_table.schema().as_arrow()
    for i in range(3, 6):
        new_table.append(pa.Table.from_pylist([{"id": i, "v": f"new {i}"}], schema=arrow_schema))
    new_table = new_catalog.load_table(tuple(TABLE.split(".")))
    old_metadata = open_catalog_at(source, lakehouse.warehouse).load_table(tuple(TABLE.split(".")))
    logged = {entry.metadata_file for entry in new_table.metadata.metadata_log}
    assert old_metadata.metadata_location not in logged  # only a peer still references it
    month_ago = time.time() - 30 * 86400
    for path in Path(lakehouse.warehouse.removeprefix("file:")).rglob("*"):
        if path.is_file():
            os.utime(path, (month_ago, month_ago))
    env = {k: v for k, v in os.environ.items() if not k.startswith("FLOE_")}
    env.update(
        FLOE_HOME=str(lakehouse.home),
        FLOE_WAREHOUSE=lakehouse.warehouse,
        FLOE_CATALOG_URI=uri,
        FLOE_CATALOG_USER=user,
        FLOE_CATALOG_PASSWORD=password,
        FLOE_SPARK_CORES="1",
        FLOE_DRIVER_MEMORY="1g",
    )
    done = subprocess.run(
        [str(BIN / "floe"), "maintain", "--table", TABLE],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    assert "other catalog(s) on this warehouse" in said and "expire_snapshots" in said, said

    # -- every table on each side still reads
    new_table = new_catalog.load_table(tuple(TABLE.split(".")))
    assert len(new_table.metadata.snapshots) <= 2  # the current one and the peer's (tagged)
    assert _rows(new_table) == sorted([*old_rows, *((i, f"new {i}") for i in range(3, 6))])
    old_catalog = open_catalog_at(source, lakehouse.warehouse)
    assert _rows(old_catalog.load_table(tuple(TABLE.split(".")))) == old_rows
    spark.catalog.clearCache()
    assert sorted(tuple(r) for r in spark.table(TABLE).collect()) == old_rows

"""`floe maintain` on a small table: compaction, expiry, orphans, idempotence."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_maintain_compacts_expires_cleans_and_is_idempotent(spark, lakehouse):
    from click.testing import CliRunner

    from floe.cli import main
    from floe.maintenance import maintain_table

    table = "marts.maint_small"
    spark.sql(
        f"create table {table} (id int, v string) using iceberg tblproperties ("
        "'format-version' = '2', 'history.expire.min-snapshots-to-keep' = '2', "
        "'history.expire.max-snapshot-age-ms' = '0', 'floe.maintain.compact-min-files' = '4')"
    )
    for i in range(6):
        spark.sql(f"insert into {table} values ({i}, 'v{i}'), ({i + 100}, 'w{i}')")
    spark.sql(f"delete from {table} where id = 3")
    rows = sorted(tuple(r) for r in spark.table(table).collect())

    location = spark.sql(f"describe table extended {table}").where("col_name = 'Location'")
    data_dir = Path(location.first().data_type.removeprefix("file:")) / "data"
    orphan = data_dir / "orphan-from-a-failed-write.parquet"
    orphan.write_bytes(b"not referenced by any snapshot")
    ten_days_ago = time.time() - 10 * 86400
    os.utime(orphan, (ten_days_ago, ten_days_ago))

    report = maintain_table(spark, table)
    assert report.before.data_files >= 6
    assert report.after.data_files == 1, report.line()
    assert report.after.snapshots == 2, report.line()
    assert report.expired_snapshots >= 5
    assert report.orphans_removed >= 1 and not orphan.exists()
    assert sorted(tuple(r) for r in spark.table(table).collect()) == rows

    snapshots = [r[0] for r in spark.sql(f"select snapshot_id from {table}.snapshots").collect()]
    result = CliRunner().invoke(main, ["maintain", "--table", table])
    assert result.exit_code == 0, result.output
    assert "nothing to do" in result.output and "data files 1 -> 1" in result.output
    again = [r[0] for r in spark.sql(f"select snapshot_id from {table}.snapshots").collect()]
    assert again == snapshots, "a second run commits nothing"


def test_table_names_are_checked_before_any_sql(spark):
    from floe.maintenance import maintain_table

    with pytest.raises(ValueError, match=r"is not schema\.table"):
        maintain_table(spark, "marts.t') ; drop table marts.x --")

"""A landed file's identity survives any name: spaces, quotes, %, non-ASCII, glob
characters, and a landing root whose own path contains ``streams/``."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from floe.feeds.files import key_of, spark_path, uri_path
from floe.generator import GenerateOptions, generate
from tests.helpers import ROOT, feed

WEIRD = "a b 'q' %41 %% \\n ü-é [x]{y}"


def test_key_is_relative_posix_path(tmp_path):
    landing = tmp_path / "streams" / WEIRD
    path = landing / "streams" / "orders" / f"{WEIRD}.jsonl"
    assert key_of(landing, path) == f"streams/orders/{WEIRD}.jsonl"
    with pytest.raises(ValueError, match="not inside the landing root"):
        key_of(landing, tmp_path / "elsewhere.csv")


def test_uri_decoding_is_exact():
    # what Spark/Hadoop print for '/x/a b/%41 ü.csv': spaces and % encoded, ü raw
    assert str(uri_path("file:///x/a%20b/%2541%20ü.csv")) == "/x/a b/%41 ü.csv"
    assert str(uri_path("file:/x/a%20b/%2541%20ü.csv")) == "/x/a b/%41 ü.csv"
    assert spark_path(Path("/x/[a]{b}*?.csv")) == "/x/\\[a\\]\\{b\\}\\*\\?.csv"


def _rename_all(folder, pattern, make_name):
    for path in sorted(folder.rglob(pattern)):
        path.rename(path.with_name(make_name(path.name)))


@pytest.mark.integration
def test_every_kind_ingests_files_with_hostile_names(spark, tmp_path):
    """Generate each kind's demo files under a hostile landing root, rename the files
    whose names the kind leaves free, ingest, and check keys, counts and reconciliation."""
    from floe.feeds import ledger
    from floe.feeds.ingest import ingest, reconcile_or_raise
    from floe.runtime import Settings, use_settings

    landing = tmp_path / "up streams" / "streams" / WEIRD  # the root itself holds streams/
    settings = Settings.from_env(
        {
            "FLOE_HOME": str(tmp_path / "home"),
            "FLOE_LANDING": str(landing),
            "FLOE_SETTLE_SECONDS": "0",
        }
    )
    use_settings(spark, settings)
    names = ["orders", "customer_master", "policies", "mlb_data", "product_priority"]
    generate(GenerateOptions(landing=landing, days=2, scale=80, bad_share=0.05), names)
    # kinds whose file names are free: give every file a hostile name
    _rename_all(landing / "streams", "*.jsonl", lambda n: f"{WEIRD} {n}")
    _rename_all(landing / "customers", "*.csv", lambda n: f"{WEIRD}.csv")
    _rename_all(landing / "reference", "*.csv", lambda n: f"{WEIRD} {n}")
    _rename_all(landing / "insurance", "*.csv", lambda n: f"{WEIRD} {n}")
    # a DMS folder name with the same characters (its file names follow DMS's pattern)
    dms = landing / "dms" / "dms_sample"
    shutil.move(dms / "mlb_data", tmp_path / "mlb")
    (dms / "mlb_data").mkdir()
    for f in (tmp_path / "mlb").iterdir():
        shutil.move(f, dms / "mlb_data" / f.name)

    for name in names:
        f = feed(name)
        result = ingest(spark, f, raw_exists=False, settings=settings, project_dir=ROOT)
        expected = {
            key_of(landing, p)
            for p in (landing / f.landing).rglob("*")
            if p.is_file() and p.suffix in (".jsonl", ".csv", ".parquet")
        }
        assert set(result.files) == expected, name
        result.rows.writeTo(f.raw_table).using("iceberg").create()
        assert reconcile_or_raise(spark, f, always=True) == 0
        in_raw = {
            r[0] for r in spark.table(f.raw_table).select("_source_file").distinct().collect()
        }
        assert in_raw <= expected and in_raw, name
        if name != "orders":  # file kinds: every file has rows
            assert in_raw == expected, name
        # the ledger now skips every file: a second ingest reads nothing
        again = ingest(spark, f, raw_exists=True, settings=settings, project_dir=ROOT)
        assert again.files == [], name
    weird_rows = spark.table(ledger.LANDED_FILES).where(f"_source_file like '%{'ü-é'}%'").count()
    assert weird_rows > 0

"""Feed kind csv_loads (the customer feeds): every malformed input fails naming the file."""

import json

import pytest

from floe.feeds import FeedError
from floe.feeds.kinds import csv_loads
from floe.feeds.kinds.base import IngestContext
from tests.helpers import feed

MASTER = feed("customer_master")


def discover_loads(landing, _folder=None):
    return csv_loads.discover(MASTER, landing)


def read_new_customer_files(spark, landing, _table, seen):
    from floe.runtime import Settings

    files = [f for f in csv_loads.discover(MASTER, landing) if f.key not in seen]
    ctx = IngestContext(
        Settings.from_env(
            {
                "FLOE_HOME": str(landing / ".home"),
                "FLOE_LANDING": str(landing),
                "FLOE_SETTLE_SECONDS": "0",
            }
        ),
        "2022-07-09 00:00:00",
        landing,
    )
    if not files:
        return csv_loads.empty(spark, MASTER, ctx)
    return csv_loads.read(spark, MASTER, files, ctx).rows


HEADER = "customer_id,first_name,last_name,employer_name,row_audit_ts"


def _load(landing, day, body, kind="full", table="customer_master", manifest=True):
    folder = landing / "customers" / table / f"load_date={day}"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "part-00000.csv").write_text(body)
    if manifest:
        (folder / "_manifest.json").write_text(json.dumps({"kind": kind}))
    return folder


def test_discovery_is_oldest_first_with_kind_and_ledger_key(tmp_path):
    _load(tmp_path, "2022-07-02", HEADER + ",rec_source_status\n", kind="changes")
    _load(tmp_path, "2022-07-01", HEADER + "\n1,a,b,c,2022-07-01 00:00:00\n")
    files = discover_loads(tmp_path, "customers/customer_master")
    assert [(f.attr("_load_date").isoformat(), f.attr("_load_kind")) for f in files] == [
        ("2022-07-01", "full"),
        ("2022-07-02", "changes"),
    ]
    assert files[0].key == "customers/customer_master/load_date=2022-07-01/part-00000.csv"


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        (None, "_manifest.json: missing"),
        ("{not json", "not a JSON object"),
        ('{"kind": "delta"}', "kind must be one of"),
    ],
)
def test_bad_or_missing_manifest_names_it(tmp_path, manifest, message):
    folder = _load(tmp_path, "2022-07-01", HEADER + "\n", manifest=False)
    if manifest is not None:
        (folder / "_manifest.json").write_text(manifest)
    with pytest.raises(FeedError, match=message) as err:
        discover_loads(tmp_path, "customers/customer_master")
    assert str(folder / "_manifest.json") in str(err.value)


def test_bad_folder_date_is_named(tmp_path):
    _load(tmp_path, "2022-13-01", HEADER + "\n")
    with pytest.raises(FeedError, match="load_date=2022-13-01"):
        discover_loads(tmp_path, "customers/customer_master")


@pytest.mark.integration
def test_wrong_header_is_named(spark, tmp_path):
    folder = _load(tmp_path, "2022-07-01", "id,first,last\n1,a,b\n")
    with pytest.raises(FeedError, match="does not match the contract") as err:
        read_new_customer_files(spark, tmp_path, "customer_master", set())
    assert str(folder / "part-00000.csv") in str(err.value)


@pytest.mark.integration
def test_unparsable_rows_and_bad_status_are_named_per_file(spark, tmp_path):
    _load(tmp_path, "2022-07-01", HEADER + "\n1,a,b,c,2022-07-01 00:00:00\nx,a,b,c,yesterday\n")
    _load(
        tmp_path,
        "2022-07-02",
        HEADER + ",rec_source_status\n1,a,b,c,2022-07-02 00:00:00,Q\n",
        kind="changes",
    )
    with pytest.raises(FeedError) as err:
        read_new_customer_files(spark, tmp_path, "customer_master", set())
    text = str(err.value)
    assert "load_date=2022-07-01/part-00000.csv: 1 unparsable row(s)" in text
    assert "load_date=2022-07-02/part-00000.csv: 0 unparsable row(s)" in text
    assert "1 row(s) with rec_source_status not in I/U/D" in text


@pytest.mark.integration
def test_rows_keep_their_provenance_and_ledger_skips_read_files(spark, tmp_path):
    _load(
        tmp_path,
        "2022-07-01",
        HEADER + "\n1,a,,c,2022-07-01 10:00:00\n2,d,e,f,2022-07-01 11:00:00\n",
    )
    _load(
        tmp_path,
        "2022-07-02",
        HEADER + ",rec_source_status\n2,d,e,g,2022-07-02 09:00:00,U\n",
        kind="changes",
    )
    rows = read_new_customer_files(spark, tmp_path, "customer_master", set()).collect()
    assert len(rows) == 3
    first = next(r for r in rows if r.customer_id == 1)
    assert first.last_name is None  # empty CSV field reads NULL
    assert first._load_kind == "full" and first._load_date.isoformat() == "2022-07-01"
    assert first.rec_source_status is None
    seen = {"customers/customer_master/load_date=2022-07-01/part-00000.csv"}
    new = read_new_customer_files(spark, tmp_path, "customer_master", seen).collect()
    assert [(r.customer_id, r.rec_source_status, r._load_kind) for r in new] == [
        (2, "U", "changes")
    ]

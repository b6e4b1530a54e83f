"""Adding a feed kind is one module and one registry line (docs/feeds.md, "Adding a feed kind").

The ``lines`` kind (tests/feeds/kinds/lines_kind.py) is registered in
``floe.feeds.kinds.KINDS`` and nowhere else; a feed declared with it validates its
options and is ingested by the one generic path, with quarantine and reconciliation.
"""

from __future__ import annotations

import pytest

from floe.feeds import FeedError
from floe.feeds.kinds import KINDS, FeedKind, feed_kind
from floe.feeds.sources import make_feed
from tests.feeds.kinds import lines_kind
from tests.helpers import ROOT


@pytest.fixture
def lines_registered(monkeypatch: pytest.MonkeyPatch) -> FeedKind:
    kind: FeedKind = lines_kind  # a module satisfying the protocol, as KINDS holds them
    monkeypatch.setitem(KINDS, "lines", kind)
    return kind


def test_an_unregistered_kind_is_refused_naming_the_known_ones():
    with pytest.raises(FeedError, match=r"meta.floe.kind must be one of .*stream.*'lines'"):
        make_feed("notes", "memos", {"kind": "lines"}, {})
    with pytest.raises(FeedError, match="unknown feed kind 'lines'; known: csv_loads"):
        feed_kind("lines")


def test_a_registered_kind_validates_its_own_options(lines_registered):
    feed = make_feed("notes", "memos", {"kind": "lines"}, {"min_length": 3})
    assert feed_kind(feed.kind) is lines_kind
    with pytest.raises(FeedError, match="min_length must be an integer"):
        make_feed("notes", "memos", {"kind": "lines"}, {"min_length": "three"})
    with pytest.raises(FeedError, match=r"unknown meta\.floe option"):
        make_feed("notes", "memos", {"kind": "lines"}, {"registry_schema": "x"})


@pytest.mark.integration
def test_a_registered_kind_ingests_and_reconciles(spark, lakehouse, lines_registered):
    from floe.feeds.ingest import ingest, reconcile_or_raise

    feed = make_feed("notes", "memos", {"kind": "lines"}, {})
    folder = lakehouse.landing / "notes" / "memos"
    folder.mkdir(parents=True)
    (folder / "a.txt").write_text("first\n\nsecond\n")
    (folder / "b.txt").write_text("third\n")

    result = ingest(spark, feed, raw_exists=False, settings=lakehouse, project_dir=ROOT)
    assert sorted(result.files) == ["notes/memos/a.txt", "notes/memos/b.txt"]
    result.rows.writeTo(feed.raw_table).using("iceberg").create()
    assert reconcile_or_raise(spark, feed, always=True) == 0
    lines = {(r.line, r._source_file) for r in spark.table(feed.raw_table).collect()}
    assert lines == {
        ("first", "notes/memos/a.txt"),
        ("second", "notes/memos/a.txt"),
        ("third", "notes/memos/b.txt"),
    }
    blank = spark.sql(
        "select _source_file, error_code from raw.quarantine where feed = 'memos'"
    ).collect()
    assert [(r._source_file, r.error_code) for r in blank] == [("notes/memos/a.txt", "blank_line")]

    again = ingest(spark, feed, raw_exists=True, settings=lakehouse, project_dir=ROOT)
    assert again.files == [] and again.rows.count() == 0  # nothing new: nothing read

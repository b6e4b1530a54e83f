"""Feed declarations: read once from the project's YAML, validated, the only list of feeds."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from floe.feeds import FeedError, find_feed, load_feeds
from floe.feeds.sources import feed_from_node
from tests.helpers import ROOT, project_feeds


def test_every_landed_feed_is_declared_once_with_its_kind():
    feeds = {f.id: f for f in project_feeds()}
    assert {f.kind for f in feeds.values()} == {
        "csv_loads",
        "dms",
        "flagged_csv",
        "stream",
        "reference",
    }
    assert len({f.name for f in feeds.values()}) == len(feeds)  # raw tables cannot collide
    mlb = feeds["dms.mlb_data"]
    assert mlb.landing == "dms/dms_sample/mlb_data"  # source-level template, table name
    assert mlb.key == ("mlb_id", "season")
    assert mlb.option("partition_by") == ["season"]
    assert feeds["streams.ventilator"].option("registry_schema") == "ventilator"
    assert feeds["customers.customer_master"].column_types()[0] == ("customer_id", "bigint")
    assert find_feed(project_feeds(), "streams.orders") is find_feed(project_feeds(), "orders")


def _project(tmp_path: Path, sources: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "dbt_project.yml").write_text("name: x\nmodel-paths: [models]\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "_sources.yml").write_text(textwrap.dedent(sources))
    return tmp_path


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ("{kind: parquet}", "kind must be one of"),
        ("{kind: stream}", "registry_schema"),
        ("{kind: stream, registry_schema: s, colour: red}", "unknown meta.floe option"),
        ("{kind: dms}", "primary key"),
        ("{kind: stream, registry_schema: s, landing: ../outside}", "inside the landing root"),
        ("{kind: stream, registry_schema: s, landing: /etc}", "inside the landing root"),
        ("{kind: reference, load_date_column: day}", "not a declared column"),
    ],
)
def test_a_bad_declaration_fails_naming_file_feed_and_fix(tmp_path, meta, message):
    project = _project(
        tmp_path,
        f"""
        version: 2
        sources:
          - name: src
            tables:
              - name: feed_a
                config: {{meta: {{floe: {meta}}}}}
                columns: [{{name: a, data_type: int}}]
        """,
    )
    with pytest.raises(FeedError, match=message) as err:
        load_feeds(project)
    assert "_sources.yml" in str(err.value) and "feed_a" in str(err.value)


def test_names_must_be_identifiers_and_raw_tables_unique(tmp_path):
    bad = _project(
        tmp_path / "a",
        """
        sources:
          - name: src
            tables:
              - name: "Bad Name"
                config: {meta: {floe: {kind: stream, registry_schema: s}}}
        """,
    )
    with pytest.raises(FeedError, match="lowercase identifier"):
        load_feeds(bad)
    twice = _project(
        tmp_path / "b",
        """
        sources:
          - name: one
            config: {meta: {floe: {kind: stream, registry_schema: s}}}
            tables: [{name: same}]
          - name: two
            config: {meta: {floe: {kind: stream, registry_schema: s}}}
            tables: [{name: same}]
        """,
    )
    with pytest.raises(FeedError, match=r"would both land in raw\.same"):
        load_feeds(twice)


def test_plain_sources_and_disabled_feeds_are_not_feeds(tmp_path):
    project = _project(
        tmp_path,
        """
        sources:
          - name: plain
            tables: [{name: t}]
          - name: s
            config: {meta: {floe: {kind: stream, registry_schema: x}}}
            tables:
              - name: kept
              - name: dropped
                config: {meta: {floe: {enabled: false}}}
        """,
    )
    assert [f.id for f in load_feeds(project)] == ["s.kept"]


def test_yaml_reader_and_dbt_graph_give_the_same_feeds():
    """The two readers (YAML for the CLI, dbt's graph for the raw models) agree."""
    from floe.docsite.coverage import parse_manifest

    manifest = parse_manifest(ROOT, ROOT / "profiles")
    from_graph = {
        f.id: f
        for f in (feed_from_node(node) for node in manifest["sources"].values())
        if f is not None
    }
    assert from_graph == {f.id: f for f in project_feeds()}
    # every feed has its raw model, named after it by floe's alias rule
    raw_models = {
        n["alias"]: n["sources"][0]
        for n in manifest["nodes"].values()
        if n["resource_type"] == "model" and n["schema"] == "raw"
    }
    assert {name: ".".join(src) for name, src in raw_models.items()} == {
        f.name: f.id for f in project_feeds()
    }


def test_no_second_list_of_feeds_in_the_package():
    """Only YAML lists feeds: no feed name appears as a string in floe's Python code.

    The hand-written demo content (floe.generator.demo) is named *from* the YAML
    (``demo: streams.ventilator``); it holds content, not a list that drives anything.
    """
    names = {f.name for f in project_feeds()} | {f.id for f in project_feeds()}
    offenders = []
    for path in sorted((ROOT / "src" / "floe").rglob("*.py")):
        if "generator/demo" in path.as_posix():
            continue
        text = path.read_text()
        for name in names:
            # a dict key ("customer_address": ...) is a record field, not a feed
            if re.search(rf"[\"']{re.escape(name)}[\"'](?!\s*:)", text):
                offenders.append(f"{path.relative_to(ROOT)}: {name}")
    assert offenders == []

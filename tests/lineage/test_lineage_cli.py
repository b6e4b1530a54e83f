"""`floe lineage` on a target folder holding a hand-written manifest (no dbt run)."""

from __future__ import annotations

import copy
import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from floe.lineage import LineageGraph
from floe.lineage.cli import lineage
from tests.lineage.manifests import feed_project, model


@pytest.fixture
def target(tmp_path: Path) -> Path:
    return _target_with_mart(
        tmp_path, "mart", "select customer_id, email as contact from staging.stg_customers"
    )


def _target_with_mart(tmp_path: Path, name: str, sql: str) -> Path:
    """A target folder whose manifest is the feed project plus one mart over stg_customers."""
    manifest = feed_project()
    manifest["nodes"][f"model.shop.{name}"] = model(
        name, sql, ["model.shop.stg_customers"], layer="marts"
    )
    folder = tmp_path / "target"
    folder.mkdir()
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return folder


def invoke(*args: str) -> str:
    result = CliRunner().invoke(lineage, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_column_upstream_and_downstream(target: Path):
    out = invoke("mart.contact", "--target-path", str(target))
    assert out.splitlines()[:3] == [
        "mart.contact",
        "  <- stg_customers.email [rename]",
        "    <- raw_customers.email [expression: LOWER(email)]",
    ]
    assert "landed shop/customers/.email [identity: as landed]" in out
    assert (target / "lineage.json").exists()  # built on first use
    down = invoke("raw_customers.email", "--downstream", "--target-path", str(target))
    assert down.splitlines()[-1] == "    -> mart.contact [rename]"


def test_json_build_and_coverage(target: Path):
    edges = json.loads(invoke("show", "mart.contact", "--json", "--target-path", str(target)))
    assert edges[0] == {
        "from": ["stg_customers", "email"],
        "to": ["mart", "contact"],
        "kind": "rename",
        "sql": "",
        "path": [],
        "note": "",
    }
    assert "nodes" in invoke("build", "--target-path", str(target))
    cover = invoke("coverage", "--target-path", str(target))
    assert cover.strip() == "marts: 2/2 columns (100%) have a complete path to a source"


def test_diff_against_a_base_manifest(target: Path, tmp_path: Path):
    base = json.loads((target / "manifest.json").read_text())
    head = copy.deepcopy(base)
    stg = head["nodes"]["model.shop.stg_customers"]
    stg["raw_code"] = stg["compiled_code"] = stg["compiled_code"].replace("lower(", "upper(")
    (target / "manifest.json").write_text(json.dumps(head))
    (tmp_path / "base.json").write_text(json.dumps(base))
    out = invoke(
        "diff", "--base-manifest", str(tmp_path / "base.json"), "--target-path", str(target)
    )
    assert "- stg_customers [modified]: email (expression changed)" in out
    assert "- mart (marts): contact" in out


def test_errors_name_what_to_fix(target: Path, tmp_path: Path):
    runner = CliRunner()
    bad = runner.invoke(lineage, ["mart.nope", "--target-path", str(target)])
    assert bad.exit_code == 1 and "mart has no column 'nope'" in bad.output
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = runner.invoke(lineage, ["mart.contact", "--target-path", str(empty)])
    assert missing.exit_code == 1 and "run `dbt compile`" in missing.output
    both = runner.invoke(lineage, ["diff", "--target-path", str(target)])
    assert both.exit_code == 2 and "exactly one of --base" in both.output


def _with_checksums(manifest: dict) -> dict:
    for uid, node in manifest["nodes"].items():
        node["checksum"] = {"name": "sha256", "checksum": f"sum-of-{uid}"}
    return manifest


def test_a_partial_build_keeps_the_lineage_of_unselected_models(target: Path):
    manifest = _with_checksums(json.loads((target / "manifest.json").read_text()))
    (target / "manifest.json").write_text(json.dumps(manifest))
    before = invoke("mart.contact", "--target-path", str(target))
    # `dbt build -s mart` writes a manifest where only mart is compiled
    partial = copy.deepcopy(manifest)
    partial["nodes"]["model.shop.stg_customers"]["compiled_code"] = None
    (target / "manifest.json").write_text(json.dumps(partial))
    newer = (target / "lineage.json").stat().st_mtime + 5
    os.utime(target / "manifest.json", (newer, newer))
    after = invoke("mart.contact", "--target-path", str(target))
    assert after == before
    assert "not compiled" not in after
    # a model changed since its last compilation is not given its old SQL
    partial["nodes"]["model.shop.stg_customers"]["checksum"]["checksum"] = "edited"
    (target / "manifest.json").write_text(json.dumps(partial))
    os.utime(target / "manifest.json", (newer + 5, newer + 5))
    invoke("build", "--target-path", str(target))
    graph = LineageGraph.read(target / "lineage.json")
    assert graph.nodes["model.shop.stg_customers"].status == "no_sql"


def test_warehouse_spelling_resolves_and_a_typo_gets_a_suggestion(target: Path):
    by_name = invoke("mart.contact", "--target-path", str(target))
    assert invoke("marts.mart.contact", "--target-path", str(target)) == by_name
    assert invoke("lake.marts.mart.contact", "--target-path", str(target)) == by_name
    typo = CliRunner().invoke(lineage, ["marts.mrat.contact", "--target-path", str(target)])
    assert typo.exit_code == 1 and "did you mean mart?" in typo.output


def test_count_star_depends_on_the_rows_it_counts(tmp_path: Path):
    folder = _target_with_mart(
        tmp_path, "customer_count", "select count(*) as customers from staging.stg_customers"
    )
    out = invoke("customer_count.customers", "--target-path", str(folder))
    assert out.splitlines()[1] == ("  <- stg_customers.* (its rows) [aggregate: COUNT(*)]")

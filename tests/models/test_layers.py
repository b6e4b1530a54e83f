"""Layers are honoured, read from dbt's own manifest: raw models read feeds (sources)
only; raw is read only by staging; marts read staging, intermediate or a dimension."""

from __future__ import annotations

import pytest

from tests.helpers import ROOT


@pytest.fixture(scope="module")
def manifest() -> dict:
    from floe.docsite.coverage import parse_manifest

    return parse_manifest(ROOT, ROOT / "profiles")


def _models(manifest: dict) -> dict[str, dict]:
    return {k: n for k, n in manifest["nodes"].items() if n["resource_type"] == "model"}


def _layer(node: dict) -> str:
    return node["schema"]


def test_every_model_reads_only_the_layers_below_it(manifest):
    models = _models(manifest)
    allowed = {
        "raw": {"source"},
        "staging": {"raw"},
        "intermediate": {"staging", "intermediate"},
        "marts": {"staging", "intermediate"},
    }
    problems = []
    for node in sorted(models.values(), key=lambda n: n["unique_id"]):
        layer = _layer(node)
        for parent in node["depends_on"]["nodes"]:
            if parent.startswith("source."):
                kind = "source"
            elif parent in models:
                kind = _layer(models[parent])
            else:
                continue  # seeds, snapshots
            # A fact joins the conformed dimensions it describes (Kimball), e.g.
            # fct_orders -> dim_product_priority (docs/decisions/0008-feeds-and-layers.md).
            if layer == "marts" and kind == "marts" and models[parent]["name"].startswith("dim_"):
                continue
            # A masked twin (marts.*_masked) is the mart it masks, for analysts
            # (docs/privacy.md): it reads exactly that mart.
            if (
                layer == "marts"
                and kind == "marts"
                and node["name"] == (models[parent]["name"] + "_masked")
            ):
                continue
            if kind not in allowed.get(layer, set()):
                problems.append(f"{node['name']} ({layer}) reads {parent} ({kind})")
    assert problems == []


def test_only_raw_models_call_source_and_only_staging_reads_raw(manifest):
    models = _models(manifest)
    for node in models.values():
        if node["sources"]:
            assert node["schema"] == "raw", node["name"]
    raw = {uid for uid, n in models.items() if n["schema"] == "raw"}
    readers = {n["schema"] for n in models.values() if set(n["depends_on"]["nodes"]) & raw}
    assert readers == {"staging"}

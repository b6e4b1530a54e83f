"""Impact analysis between two manifests (parse only)."""

from __future__ import annotations

import copy
import json
import subprocess

import pytest

from floe.lineage.diff import DiffError, compile_ref, diff_manifests, render
from tests.lineage.manifests import feed_project, model


def edit(node: dict, sql: str) -> None:
    """A changed model file: new source and compiled SQL."""
    node["raw_code"] = node["compiled_code"] = sql


def project_with_mart() -> dict:
    entries = feed_project()
    entries["nodes"]["model.shop.mart_contacts"] = model(
        "mart_contacts",
        "select customer_id, email as contact, load_date from staging.stg_customers",
        ["model.shop.stg_customers"],
        layer="marts",
    )
    entries["nodes"]["model.shop.mart_other"] = model(
        "mart_other",
        "select customer_id from staging.stg_customers",
        ["model.shop.stg_customers"],
        layer="marts",
    )
    return entries


def test_changed_expression_affects_only_its_downstream_columns():
    base = project_with_mart()
    head = copy.deepcopy(base)
    stg = head["nodes"]["model.shop.stg_customers"]
    edit(stg, stg["compiled_code"].replace("lower(email)", "trim(email)"))
    result = diff_manifests(base, head)
    assert [(c.name, c.status, c.columns) for c in result.changes] == [
        ("stg_customers", "modified", {"email": "expression changed"})
    ]
    assert result.affected == {"mart_contacts": ["contact"]}
    text = render(result, "markdown")
    assert "`stg_customers` [modified]: email (expression changed)" in text
    assert "`mart_contacts` (marts): `contact`" in text


def test_a_filter_change_affects_every_column_of_the_model():
    base = project_with_mart()
    head = copy.deepcopy(base)
    mart = head["nodes"]["model.shop.mart_other"]
    edit(mart, mart["compiled_code"] + " where customer_id is not null")
    result = diff_manifests(base, head)
    assert result.changes[0].columns == {"customer_id": "rows changed (filter, join or grouping)"}
    assert result.affected == {}


def test_added_and_removed_columns_and_models():
    base = project_with_mart()
    head = copy.deepcopy(base)
    mart = head["nodes"]["model.shop.mart_contacts"]
    edit(mart, "select customer_id, email as contact from staging.stg_customers")
    del head["nodes"]["model.shop.mart_other"]
    head["nodes"]["model.shop.mart_new"] = model(
        "mart_new", "select email from staging.stg_customers", ["model.shop.stg_customers"]
    )
    result = diff_manifests(base, head)
    by_name = {c.name: c for c in result.changes}
    assert by_name["mart_contacts"].columns == {"load_date": "removed"}
    assert by_name["mart_new"].status == "added"
    assert by_name["mart_other"].status == "removed"
    assert json.loads(render(result, "json"))["changed"][0]["model"] == "mart_contacts"


def test_a_node_compiled_on_one_side_only_borrows_the_other_sides_sql():
    base = project_with_mart()
    head = copy.deepcopy(base)
    # a slim build compiles only what it selects: stg_customers has no SQL in the head
    head["nodes"]["model.shop.stg_customers"]["compiled_code"] = None
    mart = head["nodes"]["model.shop.mart_contacts"]
    edit(mart, mart["compiled_code"].replace("email as contact", "upper(email) as contact"))
    result = diff_manifests(base, head)
    assert [(c.name, c.columns) for c in result.changes] == [
        ("mart_contacts", {"contact": "expression changed"})
    ]


def test_no_change_says_so():
    base = project_with_mart()
    assert render(diff_manifests(base, copy.deepcopy(base))) == "No model's SQL changed."


def test_an_unknown_git_ref_is_named(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    with pytest.raises(DiffError, match="no-such-branch"):
        compile_ref(tmp_path, "no-such-branch")
    with pytest.raises(DiffError, match="is not a git ref"):
        compile_ref(tmp_path, "--output=/tmp/x")

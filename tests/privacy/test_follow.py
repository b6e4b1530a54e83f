"""Subject keys follow column lineage; the scan proposes tags (no Spark: dbt-shaped
manifests, floe's lineage graph and Arrow samples).

* a tagged subject key reaches every column that copies its value downstream
  (``rename``, ``cast``, a struct ``field``), not one computed from it (``aggregate``,
  ``expression``); a written tag wins; a masked twin inherits the followed tag masked;
* the name scan proposes ``subject_key`` for a person id and a pii tag for an e-mail,
  and ``pii: false`` silences it;
* the value scan finds an identifier column whose values join to a subject key.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from floe.lineage.graph import build_graph
from floe.privacy.follow import follow_subject_keys
from floe.privacy.scan import scan_names, scan_subject_joins
from floe.privacy.tags import PrivacyTags


def _col(name: str, **meta: Any) -> dict[str, Any]:
    return {"name": name, "config": {"meta": meta}} if meta else {"name": name}


def _model(
    name: str,
    schema: str,
    sql: str,
    parents: list[str],
    columns: tuple[dict[str, Any], ...] = (),
    materialized: str = "table",
    macros: tuple[str, ...] = (),
) -> dict[str, Any]:
    return {
        "resource_type": "model",
        "name": name,
        "schema": schema,
        "alias": name,
        "language": "sql",
        "fqn": ["p", schema, name],
        "unique_id": f"model.p.{name}",
        "relation_name": f"`lake`.`{schema}`.`{name}`",
        "compiled_code": sql,
        "config": {"materialized": materialized},
        "columns": {c["name"]: c for c in columns},
        "depends_on": {"nodes": parents, "macros": list(macros)},
        "original_file_path": f"models/{name}.sql",
    }


def _manifest(**extra_nodes: dict[str, Any]) -> dict[str, Any]:
    users = {
        "resource_type": "source",
        "source_name": "app",
        "name": "users",
        "schema": "raw",
        "identifier": "users",
        "relation_name": "`lake`.`raw`.`users`",
        "unique_id": "source.p.app.users",
        "original_file_path": "models/_app__sources.yml",
        "columns": {
            "user_id": _col("user_id", classification="sensitive", subject_key="user_id"),
            "name": _col("name"),
            "profile": _col(
                "profile",
                fields={"handle": {"subject_key": "handle", "classification": "sensitive"}},
            ),
        },
    }
    stg = _model(
        "stg_users",
        "staging",
        "select user_id as uid, upper(name) as shout, profile.handle as handle, "
        "cast(user_id as string) as ref from `lake`.`raw`.`users`",
        ["source.p.app.users"],
        materialized="view",
    )
    counts = _model(
        "user_counts",
        "marts",
        "select uid as person, count(*) as n, sum(uid) as total "
        "from `lake`.`staging`.`stg_users` group by uid",
        ["model.p.stg_users"],
    )
    nodes = {"model.p.stg_users": stg, "model.p.user_counts": counts, **extra_nodes}
    return {"sources": {"source.p.app.users": users}, "nodes": nodes}


def _followed(manifest: dict[str, Any]) -> tuple[PrivacyTags, set[tuple[str, str, str, str]]]:
    tags = PrivacyTags.from_manifest(manifest)
    found = follow_subject_keys(tags, build_graph(manifest))
    return tags, {(f.relation, f.column, f.subject_key, f.origin) for f in found}


def test_a_subject_key_follows_copies_of_its_value_not_computations():
    tags, found = _followed(_manifest())
    assert found == {
        ("staging.stg_users", "uid", "user_id", "raw.users.user_id"),
        ("staging.stg_users", "ref", "user_id", "raw.users.user_id"),
        ("staging.stg_users", "handle", "handle", "raw.users.profile.handle"),
        ("marts.user_counts", "person", "user_id", "raw.users.user_id"),
    }
    # sum(uid) and upper(name) hold no key value: an equality on them finds nobody
    counts = tags.get("marts.user_counts")
    assert counts is not None and counts.tag("total") is None and counts.tag("n") is None
    person = counts.tag("person")
    assert person is not None and person.via == "raw.users.user_id"
    assert person.classification == "sensitive"
    assert tags.subject_columns("user_id").keys() == {
        "raw.users",
        "staging.stg_users",
        "marts.user_counts",
    }


def test_a_written_tag_wins_and_a_masked_twin_inherits_the_followed_one():
    written = _model(
        "user_counts",
        "marts",
        "select uid as person, count(*) as n from `lake`.`staging`.`stg_users` group by uid",
        ["model.p.stg_users"],
        columns=(_col("person", classification="private", subject_key="person"),),
    )
    twin = _model(
        "stg_users_masked",
        "marts",
        "select uid, shout, handle, ref from `lake`.`staging`.`stg_users`",
        ["model.p.stg_users"],
        macros=("macro.floe.privacy_masked_columns",),
    )
    tags, found = _followed(
        _manifest(**{"model.p.user_counts": written, "model.p.stg_users_masked": twin})
    )
    assert ("marts.user_counts", "person", "user_id", "raw.users.user_id") not in found
    person = tags.get("marts.user_counts").tag("person")  # type: ignore[union-attr]
    assert person is not None and (person.subject_key, person.via) == ("person", "")
    masked = tags.get("marts.stg_users_masked").tag("uid")  # type: ignore[union-attr]
    assert masked is not None and masked.subject_key == "user_id"
    assert masked.stored is not None and masked.stored.method == "encrypt"
    assert not any(r == "marts.stg_users_masked" for r, *_ in found)


def test_the_name_scan_proposes_tags_and_pii_false_silences_it():
    manifest = _manifest()
    rides = _model(
        "rides",
        "marts",
        "select 1 as rider_id, 'a@b.io' as rider_email, '+4722000000' as support_phone",
        [],
        columns=(_col("rider_id"), _col("rider_email"), _col("support_phone", pii=False)),
    )
    manifest["nodes"]["model.p.rides"] = rides
    tags = PrivacyTags.from_manifest(manifest)
    findings = {f.column: f for f in scan_names(tags) if f.relation == "marts.rides"}
    assert findings["rider_id"].subject_key == "rider_id" and findings["rider_id"].fails()
    assert "subject_key: rider_id" in findings["rider_id"].line()
    assert "{pii: true, classification: private}" in findings["rider_email"].line()
    assert findings["rider_email"].fails()
    phone = findings["support_phone"]
    assert phone.reviewed and not phone.fails() and "tagged pii: false" in phone.line()
    # a person id named like an existing key is proposed that key
    clients = _model("clients", "marts", "select 1 as user_id", [], columns=(_col("user_id"),))
    manifest["nodes"]["model.p.clients"] = clients
    tags = PrivacyTags.from_manifest(manifest)
    (finding,) = [f for f in scan_names(tags) if f.relation == "marts.clients"]
    assert finding.subject_key == "user_id"


def test_an_id_column_whose_values_join_to_a_subject_key_is_found():
    tags = PrivacyTags.from_manifest(_manifest())
    keys = {"user_id": {str(i) for i in range(1000, 1100)}}
    samples = {
        # a new feed's rider ids are the app's user ids
        "raw.scooter_rides": pa.table(
            {
                "rider_id": [1001, 1002, 1003, 1004, 1005, 1001, None],
                "ride_id": [1, 2, 3, 4, 5, 6, 7],  # not user ids
                "minutes": [1000, 1001, 1002, 1003, 1004, 1005, 1006],  # not an id name
            }
        ),
        "raw.parcels": pa.table({"parcel_no": ["1001", "x2", "x3", "x4", "x5", "x6"]}),
    }
    findings = scan_subject_joins(samples, tags, keys)
    assert [(f.relation, f.column, f.subject_key, f.by) for f in findings] == [
        ("raw.scooter_rides", "rider_id", "user_id", "join")
    ]
    (finding,) = findings
    assert finding.fails() and finding.share == 1.0 and finding.sampled == 5
    assert "100% of 5 sampled values are user_id values" in finding.line()
    assert "subject_key: user_id" in finding.line()


def test_a_parsed_manifest_takes_compiled_sql_from_the_memo_and_leaves_it(tmp_path):
    """`dbt parse` compiles nothing: the SQL `floe lineage build` remembered (same source
    checksum) is used; a model edited since (other checksum) is not followed."""
    import json

    from floe.lineage.graph import COMPILED_MEMO
    from floe.privacy.follow import lineage_for_manifest

    manifest = _manifest()
    memo = {}
    for uid, node in manifest["nodes"].items():
        node["checksum"] = {"name": "sha256", "checksum": f"sum-{uid}"}
        memo[uid] = {"checksum": f"sum-{uid}", "compiled_code": node.pop("compiled_code")}
    memo["model.p.user_counts"]["checksum"] = "edited since"
    (tmp_path / "target").mkdir()
    path = tmp_path / "target" / COMPILED_MEMO
    path.write_text(json.dumps(memo))
    tags = PrivacyTags.from_manifest(manifest)
    found = follow_subject_keys(tags, lineage_for_manifest(manifest, tmp_path))
    assert {(f.relation, f.column) for f in found} == {
        ("staging.stg_users", "uid"),
        ("staging.stg_users", "ref"),
        ("staging.stg_users", "handle"),
    }
    assert json.loads(path.read_text()) == memo
    assert "compiled_code" not in manifest["nodes"]["model.p.stg_users"]

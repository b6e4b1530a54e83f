"""Subjects are validated before any SQL and reach Spark only as bound values: injection
strings are rejected or matched literally. `floe privacy scan` flags an untagged e-mail
column; the masked reader never returns a clear value (docs/privacy.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from floe.privacy.subject import Subject, SubjectError, typed_value

INJECTIONS = [
    "x' OR '1'='1",
    "a\\' OR 1=1 --",
    "back\\slash\\",
    "v; drop table marts.people; --",
    "Zoë 名前 ✓",
    "`people`.`email`",
    ":p0",
]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("customer_id", "write it as <subject key>=<value>"),
        ("=42", "write it as <subject key>=<value>"),
        ("customer_id=", "the value is empty"),
        ("Customer Id=42", "must be a lowercase name"),
        ("customer_id' OR '1'='1=42", "must be a lowercase name"),
        ("customer_id=4\n2", "control characters"),
        ("customer_id=" + "9" * 600, "longer than 512 characters"),
    ],
)
def test_malformed_subjects_are_rejected_before_any_sql(text, message):
    with pytest.raises(SubjectError, match=message):
        Subject.parse(text)


@pytest.mark.parametrize("value", ["042", "4.2e1", "42 ", "x' OR '1'='1", "9" * 20, "1;1"])
def test_values_must_fit_the_key_column_type(value):
    with pytest.raises(SubjectError, match=r"raw\.t\.c: .* is not a canonical bigint"):
        typed_value(value, "bigint", "raw.t.c")


def test_typed_values():
    assert typed_value("42", "bigint", "w") == 42
    assert typed_value("-7", "int", "w") == -7
    assert typed_value("x' OR '1'='1", "string", "w") == "x' OR '1'='1"
    assert str(typed_value("1.50", "decimal(10,2)", "w")) == "1.50"
    assert str(typed_value("1990-01-02", "date", "w")) == "1990-01-02"
    with pytest.raises(SubjectError, match="not a date"):
        typed_value("1990-13-02", "date", "w")
    with pytest.raises(SubjectError, match="cannot hold a subject key"):
        typed_value("1", "array<string>", "w")
    with pytest.raises(SubjectError, match="not a canonical int"):
        typed_value(str(2**31), "int", "w")


def test_set_values_are_checked(tmp_path):
    from floe.privacy.erasure import parse_sets

    assert parse_sets(["phonenumber='000'"]) == {"phonenumber": "000"}
    assert parse_sets(["city=x' OR '1'='1"]) == {"city": "x' OR '1'='1"}
    with pytest.raises(SubjectError, match="write it as <column>=<value>"):
        parse_sets(["phone number=1"])
    with pytest.raises(SubjectError, match="given twice"):
        parse_sets(["a=1", "A=2"])


# --------------------------------------------------------------------------- a fixture model

PEOPLE = [
    ("x' OR '1'='1", "Ava Ng", "ava.ng@example.com", "+1-555-0101", "Lyon"),
    ("a\\' OR 1=1 --", "Ben Ortiz", "ben.ortiz@example.org", "+1-555-0102", "Lyon"),
    ("back\\slash\\", "Chloe Patel", "chloe@example.net", "+1-555-0103", "Austin"),
    ("v; drop table marts.people; --", "Dan Quinn", "dan.q@example.com", "+1-555-0104", "Perth"),
    ("Zoë 名前 ✓", "Ema Rossi", "ema.rossi@example.com", "+1-555-0105", "Seattle"),
    ("`people`.`email`", "Finn Ng", "finn@example.com", "+1-555-0106", "Austin"),
    (":p0", "Gus Tan", "gus.tan@example.com", "+1-555-0107", "Lyon"),
    ("1", "Hal Lee", "hal.lee@example.com", "+1-555-0108", "Lyon"),
    ("x", "Ivy Kim", "ivy.kim@example.com", "+1-555-0109", "Lyon"),
]


def _column(name: str, **meta: Any) -> dict[str, Any]:
    return {"name": name, "description": name, "meta": meta}


def fixture_manifest(path: Path) -> Path:
    """A manifest of two fixture models: marts.people (tagged, a string subject key)
    and marts.contacts, whose `contact` column holds e-mail addresses, untagged."""
    people = {
        "handle": _column("handle", classification="sensitive", subject_key="handle"),
        "full_name": _column("full_name", pii=True, classification="private"),
        "email": _column("email", pii=True, classification="private"),
        "phone": _column("phone", pii=True, classification="private", masking={"method": "redact"}),
        "city": _column("city", classification="public"),
    }
    contacts = {"id": _column("id"), "contact": _column("contact")}
    nodes = {
        f"model.fixture.{name}": {
            "resource_type": "model",
            "name": name,
            "schema": "marts",
            "columns": columns,
            "original_file_path": f"models/{name}.sql",
            "depends_on": {"nodes": [], "macros": []},
        }
        for name, columns in (("people", people), ("contacts", contacts))
    }
    path.write_text(json.dumps({"nodes": nodes, "sources": {}}))
    return path


@pytest.fixture
def people(spark, lakehouse, tmp_path) -> Path:
    spark.sql("create namespace if not exists marts")
    spark.createDataFrame(
        PEOPLE, "handle string, full_name string, email string, phone string, city string"
    ).writeTo("marts.people").using("iceberg").create()
    spark.createDataFrame(
        [(i, f"person{i}@example.com") for i in range(20)], "id int, contact string"
    ).writeTo("marts.contacts").using("iceberg").create()
    return fixture_manifest(tmp_path / "manifest.json")


def _handles(spark) -> list[str]:
    return sorted(r[0] for r in spark.table("marts.people").select("handle").collect())


@pytest.mark.integration
def test_injection_strings_are_matched_literally(spark, lakehouse, people):
    from floe.privacy.erasure import forget
    from floe.privacy.tags import load_tags

    tags = load_tags(lakehouse, people)
    for value in INJECTIONS:
        out = forget(spark, lakehouse, tags, Subject.parse(f"handle={value}"), dry_run=True)
        rows = {t.table: t.rows for t in out.plan.tables if t.rows}
        assert rows == {"marts.people": 1}, (value, rows)
    assert _handles(spark) == sorted(p[0] for p in PEOPLE)  # a dry run changes nothing

    erased = ["x' OR '1'='1", "v; drop table marts.people; --", "Zoë 名前 ✓"]
    for value in erased:
        out = forget(spark, lakehouse, tags, Subject.parse(f"handle={value}"))
        assert out.status == "complete"
    assert _handles(spark) == sorted(p[0] for p in PEOPLE if p[0] not in erased)
    assert spark.table("marts.contacts").count() == 20
    nothing = forget(spark, lakehouse, tags, Subject.parse("handle=' OR ''='"))
    assert nothing.status == "nothing"
    assert len(_handles(spark)) == len(PEOPLE) - len(erased)


@pytest.mark.integration
def test_a_value_that_does_not_fit_a_key_column_fails_naming_it(spark, lakehouse, tmp_path):
    from floe.privacy.erasure import forget
    from floe.privacy.tags import PrivacyTags

    spark.sql("create namespace if not exists marts")
    spark.createDataFrame([(1, "a")], "customer_id bigint, name string").writeTo(
        "marts.accounts"
    ).using("iceberg").create()
    manifest = {
        "nodes": {
            "model.fixture.accounts": {
                "resource_type": "model",
                "name": "accounts",
                "schema": "marts",
                "columns": {"customer_id": _column("customer_id", subject_key="customer_id")},
                "original_file_path": "models/accounts.sql",
                "depends_on": {"nodes": [], "macros": []},
            }
        },
        "sources": {},
    }
    tags = PrivacyTags.from_manifest(manifest)
    with pytest.raises(SubjectError, match=r"marts\.accounts.*customer_id.*not a canonical bigint"):
        forget(spark, lakehouse, tags, Subject.parse("customer_id=1' OR '1'='1"), dry_run=True)
    with pytest.raises(SubjectError, match="no column is tagged with subject_key 'email'"):
        forget(spark, lakehouse, tags, Subject.parse("email=a@b.c"), dry_run=True)
    assert spark.table("marts.accounts").count() == 1


@pytest.mark.integration
def test_scan_flags_the_untagged_email_column(spark, lakehouse, people):
    from floe.cli import main

    result = CliRunner().invoke(main, ["privacy", "scan", "--manifest", str(people)])
    assert result.exit_code != 0
    fails = [line for line in result.output.splitlines() if line.startswith("FAIL")]
    assert any("marts.contacts" in line and "contact" in line for line in fails), result.output
    assert not any("marts.people" in line for line in fails), result.output
    assert "person1@example.com" not in result.output  # examples are redacted
    ok = CliRunner().invoke(
        main, ["privacy", "scan", "--manifest", str(people), "--fail-on", "none"]
    )
    assert ok.exit_code == 0, ok.output


@pytest.mark.integration
def test_masked_reader_never_sees_a_clear_value(spark, lakehouse, people):
    from floe.privacy.access import MaskedReader
    from floe.privacy.masking import decrypt_value
    from floe.privacy.secrets import load_secrets

    reader = MaskedReader.open(lakehouse, people)
    table = reader.read("marts.people")
    clear = {v for person in PEOPLE for v in person[:4]}
    seen = {v for column in table.columns for v in column.to_pylist()}
    assert not clear & seen
    for value in seen:  # not even inside a longer text
        assert not any(c in str(value) for c in clear if len(c) > 3), value
    rows = table.to_pylist()
    assert sorted(r["city"] for r in rows) == sorted(p[4] for p in PEOPLE)  # public: clear
    assert all(r["phone"].startswith("#######") for r in rows)  # redacted, last 4 kept
    key = load_secrets(lakehouse).key
    assert sorted(decrypt_value(r["handle"], key) for r in rows) == sorted(p[0] for p in PEOPLE)
    with pytest.raises(PermissionError, match="names masked column"):
        reader.read("marts.people", row_filter="email = 'ava.ng@example.com'")


def test_a_feed_whose_schema_cannot_be_read_fails_the_scan_instead_of_passing(tmp_path):
    """`floe privacy scan --static` (make lint) checks a stream feed's registry fields;
    a feed whose schema is missing was passed over silently, checking nothing."""
    from floe.cli import main

    node = {
        "resource_type": "source",
        "source_name": "streams",
        "name": "gauges",
        "schema": "landing",
        "identifier": "gauges",
        "source_meta": {"floe": {"kind": "stream"}},
        "config": {"meta": {"floe": {"registry_schema": "no_such_schema"}}},
        "columns": {},
    }
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({"nodes": {}, "sources": {"source.floe.streams.gauges": node}}))
    result = CliRunner().invoke(main, ["privacy", "scan", "--static", "--manifest", str(manifest)])
    assert result.exit_code != 0, result.output
    fails = [line for line in result.output.splitlines() if line.startswith("FAIL")]
    assert fails == [f"FAIL raw.gauges: {fails[0].split(': ', 1)[1]}"], result.output
    assert "no_such_schema" in fails[0]
    assert "kept columns from the scan" in result.output

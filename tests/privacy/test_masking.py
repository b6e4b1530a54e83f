"""Masking (docs/privacy.md): the salted hash, redaction and AES-SIV encryption, in
Python and as the Spark functions floe registers; the macros render the same values."""

from __future__ import annotations

import base64
import hashlib

import pytest

from floe.privacy.masking import (
    Masking,
    MaskingError,
    as_text,
    decrypt_value,
    encrypt_value,
    hash_value,
    redact_value,
)
from floe.privacy.secrets import PrivacyConfigError, Secrets, load_secrets, parse_key, parse_salt
from floe.runtime import Settings

SALT = b"a-salt-of-at-least-16-chars"
KEY = bytes(range(64))
OTHER_KEY = bytes(range(1, 65))


def test_hash_is_deterministic_and_depends_on_the_salt():
    assert hash_value("+1-555-1234", SALT) == hash_value("+1-555-1234", SALT)
    assert hash_value("+1-555-1234", SALT) != hash_value("+1-555-1235", SALT)
    assert hash_value("+1-555-1234", SALT) != hash_value("+1-555-1234", SALT + b"x")
    assert len(hash_value("x", SALT) or "") == 64
    assert hash_value(None, SALT) is None


def test_hash_cannot_be_enumerated_back_without_the_salt():
    """A four-digit phone suffix is a tiny value set: an unsalted hash of it is found by
    trying all 10 000; the salted one is found by nobody who lacks the salt."""
    secret = "+1-555-4711"
    masked = hash_value(secret, SALT)
    candidates = [f"+1-555-{n:04d}" for n in range(10_000)]
    assert secret not in (masked or "")
    assert masked != hashlib.sha256(secret.encode()).hexdigest()
    assert not [c for c in candidates if hashlib.sha256(c.encode()).hexdigest() == masked]
    assert not [c for c in candidates if hash_value(c, b"guessed-salt-guessed-salt") == masked]
    # ... while the holder of the salt can still match a known value (joins, erasure).
    assert [c for c in candidates if hash_value(c, SALT) == masked] == [secret]


@pytest.mark.parametrize(
    ("text", "keep", "char", "expected"),
    [
        ("+1-555-1234", 4, "#", "#######1234"),
        ("abc", 4, "#", "abc"),
        ("secret", 0, "*", "******"),
        ("", 4, "#", ""),
        ("Zoë ünïcode", 2, "#", "#########de"),
    ],
)
def test_redaction_keeps_only_the_last_characters(text, keep, char, expected):
    assert redact_value(text, keep, char) == expected
    assert Masking("redact", keep, char).apply(text, None) == expected


def test_redaction_rejects_bad_options():
    with pytest.raises(MaskingError, match="keep_last must be 0 or more"):
        Masking("redact", -1)
    with pytest.raises(MaskingError, match="mask_char must be one character"):
        Masking("redact", 4, "##")
    with pytest.raises(MaskingError, match="use one of hash, redact, encrypt, none"):
        Masking("scramble")


def test_encryption_is_deterministic_reversible_and_keyed():
    token = encrypt_value("Ava Ng", KEY)
    assert token == encrypt_value("Ava Ng", KEY)  # deterministic: joins still work
    assert token != encrypt_value("Ava Ngo", KEY)
    assert token != encrypt_value("Ava Ng", OTHER_KEY)
    assert "Ava" not in (token or "")
    assert decrypt_value(token, KEY) == "Ava Ng"
    assert decrypt_value(encrypt_value("Zoë ' OR 1=1 --", KEY), KEY) == "Zoë ' OR 1=1 --"
    with pytest.raises(MaskingError, match="another FLOE_PRIVACY_KEY"):
        decrypt_value(token, OTHER_KEY)
    tampered = (token or "")[:-2] + ("AA" if not (token or "").endswith("AA") else "BB")
    with pytest.raises(MaskingError, match="cannot decrypt"):
        decrypt_value(tampered, KEY)
    with pytest.raises(MaskingError, match="cannot decrypt"):
        decrypt_value("not base64 at all!", KEY)


def test_values_are_masked_as_spark_writes_them_as_text():
    import datetime as dt
    import decimal

    assert as_text(42) == "42"
    assert as_text(decimal.Decimal("4.20")) == "4.20"
    assert as_text(True) == "true"
    assert as_text(dt.date(1990, 1, 2)) == "1990-01-02"
    assert as_text(dt.datetime(2022, 7, 1, 10, 0, 0, 500000)) == "2022-07-01 10:00:00.5"
    assert as_text({"a": [1, "é"]}) == '{"a":[1,"é"]}'


# --------------------------------------------------------------------------- secrets


def _settings(tmp_path, **env: str) -> Settings:
    return Settings.from_env({"FLOE_HOME": str(tmp_path / "floe"), **env})


def test_secrets_come_from_the_environment(tmp_path):
    key = base64.b64encode(KEY).decode()
    secrets = load_secrets(
        _settings(tmp_path, FLOE_PRIVACY_SALT=SALT.decode(), FLOE_PRIVACY_KEY=key)
    )
    assert (secrets.salt, secrets.key, secrets.source) == (SALT, KEY, "environment")
    assert SALT.decode() not in repr(secrets) and key not in repr(secrets)


def test_missing_or_malformed_secrets_fail_naming_the_variable(tmp_path):
    key = base64.b64encode(KEY).decode()
    with pytest.raises(PrivacyConfigError, match="FLOE_PRIVACY_KEY is missing"):
        load_secrets(_settings(tmp_path, FLOE_PRIVACY_SALT=SALT.decode()))
    with pytest.raises(PrivacyConfigError, match="FLOE_PRIVACY_SALT is missing"):
        load_secrets(_settings(tmp_path, FLOE_PRIVACY_KEY=key))
    with pytest.raises(PrivacyConfigError, match="FLOE_PRIVACY_SALT must be at least 16"):
        parse_salt("short")
    with pytest.raises(PrivacyConfigError, match="FLOE_PRIVACY_KEY must be base64 of 32, 48, 64"):
        parse_key(base64.b64encode(b"16-bytes-key-xx!").decode())
    with pytest.raises(PrivacyConfigError, match="FLOE_PRIVACY_KEY must be base64"):
        parse_key("%%% not base64 %%%")
    remote = _settings(tmp_path, FLOE_CATALOG_URI="jdbc:postgresql://db:5432/floe")
    with pytest.raises(PrivacyConfigError, match="set FLOE_PRIVACY_SALT and FLOE_PRIVACY_KEY"):
        load_secrets(remote)


def test_local_development_secrets_are_created_once_and_private(tmp_path):
    settings = _settings(tmp_path)
    first = load_secrets(settings)
    again = load_secrets(settings)
    assert (first.salt, first.key) == (again.salt, again.key)
    path = settings.privacy_dir / "dev-secrets.json"
    assert path.stat().st_mode & 0o777 == 0o600


def test_masking_with_a_secret_method_needs_the_secrets():
    with pytest.raises(MaskingError, match="needs the privacy secrets"):
        Masking("hash").apply("x", None)


# --------------------------------------------------------------------------- in Spark


@pytest.fixture
def secrets(lakehouse) -> Secrets:
    return load_secrets(lakehouse)


# Every length around AES's 16-byte blocks (SIV pads below 16, xors the end above),
# multi-byte UTF-8, and the empty string.
MASK_VALUES = [
    "+1-555-1234",
    "Zoë",
    "x' OR '1'='1",
    None,
    "",
    *("a" * n for n in range(1, 50)),
    "é" * 8,
    "😀" * 4,
    "Zoë 😀 " * 9,
]


@pytest.mark.integration
def test_spark_functions_mask_exactly_as_python(spark, lakehouse, secrets):
    frame = spark.createDataFrame([(v,) for v in MASK_VALUES], "v string")
    masked = frame.selectExpr("v", "floe_hash(v) as h", "floe_encrypt(v) as e")
    # They run in the JVM (floe.jvm.Masking), not in a Python worker (ADR 0059).
    plan = masked._jdf.queryExecution().executedPlan().toString()
    assert "EvalPython" not in plan, plan
    rows = masked.collect()
    assert len(rows) == len(MASK_VALUES)
    for row in rows:
        assert row.h == hash_value(row.v, secrets.salt)
        assert row.e == encrypt_value(row.v, secrets.key)


@pytest.mark.integration
@pytest.mark.parametrize("size", [32, 48, 64])
def test_jvm_encryption_matches_python_for_every_key_size(spark, size):
    import os

    from floe.privacy.functions import MASKING_CLASS
    from floe.runtime.jars import jvm_class

    masking = jvm_class(spark, MASKING_CLASS)
    assert masking is not None, "floe's jar is not in the session (floe dev build-jvm)"
    key, salt = os.urandom(size), os.urandom(size)
    encrypt, hasher = masking.encrypt(bytearray(key)), masking.hash(bytearray(salt))
    for value in MASK_VALUES:
        assert encrypt.call(value) == encrypt_value(value, key)
        assert hasher.call(value) == hash_value(value, salt)
    assert encrypt.toString() == "floe_encrypt"  # never the key


@pytest.mark.integration
@pytest.mark.parametrize("size", [0, 1, 63, 65, 100])
def test_jvm_hash_matches_python_for_short_and_long_salts(spark, size):
    """The JVM hash absorbs the padded salt once (RFC 2104's K ^ ipad, K ^ opad): an
    empty salt is a zero key, and one longer than SHA-256's block is hashed first."""
    from floe.privacy.functions import MASKING_CLASS
    from floe.runtime.jars import jvm_class

    masking = jvm_class(spark, MASKING_CLASS)
    assert masking is not None, "floe's jar is not in the session (floe dev build-jvm)"
    salt = bytes((7 * i + 3) % 256 for i in range(size))
    hasher = masking.hash(bytearray(salt))
    for value in MASK_VALUES:
        assert hasher.call(value) == hash_value(value, salt)


@pytest.mark.integration
def test_jvm_keystream_counter_carries_across_bytes(spark):
    """The JVM function enciphers CTR's counters itself (one ECB cipher, not a re-keyed
    CTR cipher per value): a counter ending in 0xFFFF must carry into the bytes above,
    as AES/CTR and `cryptography` increment it. Under KEY this value's SIV tag, bits
    cleared, ends in ff ff (found by search), and its three blocks cross the carry."""
    import base64

    from floe.privacy.functions import MASKING_CLASS
    from floe.runtime.jars import jvm_class

    masking = jvm_class(spark, MASKING_CLASS)
    assert masking is not None, "floe's jar is not in the session (floe dev build-jvm)"
    value = "counter carry 008846 over two blocks"
    expected = encrypt_value(value, KEY)
    tag = bytearray(base64.urlsafe_b64decode(expected + "=" * (-len(expected) % 4))[:16])
    tag[8] &= 0x7F
    tag[12] &= 0x7F
    assert tag.hex().endswith("ffff") and len(value) > 32
    assert masking.encrypt(bytearray(KEY)).call(value) == expected


@pytest.mark.integration
def test_encrypted_keys_still_join(spark, lakehouse):
    customers = spark.createDataFrame(
        [(1, "Ava"), (2, "Ben"), (3, "Chloe")], "customer_id int, name string"
    )
    orders = spark.createDataFrame(
        [(1, 10), (1, 11), (3, 30), (4, 40)], "customer_id int, amount int"
    )
    clear = customers.join(orders, "customer_id").count()
    c = customers.selectExpr("floe_encrypt(cast(customer_id as string)) as k", "name")
    o = orders.selectExpr("floe_encrypt(cast(customer_id as string)) as k", "amount")
    joined = c.join(o, "k").select("name", "amount").orderBy("amount").collect()
    assert len(joined) == clear == 3
    assert [(r.name, r.amount) for r in joined] == [("Ava", 10), ("Ava", 11), ("Chloe", 30)]
    h = customers.selectExpr("floe_hash(cast(customer_id as string)) as k")
    ho = orders.selectExpr("floe_hash(cast(customer_id as string)) as k")
    assert h.join(ho, "k").count() == clear


@pytest.mark.integration
def test_decrypt_is_registered_only_on_request_and_round_trips(spark, lakehouse):
    from pyspark.errors import AnalysisException

    from floe.privacy.functions import register_decrypt

    spark.sql("drop temporary function if exists floe_decrypt")
    frame = spark.createDataFrame([("Ava Ng",), ("Zoë",), (None,)], "v string")
    encrypted = frame.selectExpr("v", "floe_encrypt(v) as e")
    with pytest.raises(AnalysisException, match=r"(?i)floe_decrypt"):
        encrypted.selectExpr("floe_decrypt(e)").collect()
    register_decrypt(spark, lakehouse)
    try:
        rows = encrypted.selectExpr("v", "e", "floe_decrypt(e) as d").collect()
        assert all(r.d == r.v for r in rows)
        assert all(r.e != r.v for r in rows if r.v is not None)
    finally:
        spark.sql("drop temporary function if exists floe_decrypt")


@pytest.mark.integration
def test_spark_functions_without_secrets_fail_naming_the_variable(spark, lakehouse, tmp_path):
    from floe.privacy.functions import register_functions

    broken = Settings.from_env(
        {"FLOE_HOME": str(tmp_path / "other"), "FLOE_PRIVACY_SALT": SALT.decode()}
    )
    register_functions(spark, broken)
    try:
        with pytest.raises(Exception, match="FLOE_PRIVACY_KEY is missing"):
            spark.sql("select floe_hash('x')").collect()
    finally:
        register_functions(spark, lakehouse)
    assert spark.sql("select floe_hash('x')").first()[0] == hash_value(
        "x", load_secrets(lakehouse).salt
    )


# --------------------------------------------------------------------------- macros


@pytest.fixture
def render():
    from tests.unit.macros.jinja_harness import Renderer

    return Renderer()


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"classification": "private", "pii": True}, "hash"),
        ({"classification": "sensitive", "subject_key": "customer_id"}, "encrypt"),
        ({"classification": "sensitive", "masking": "none"}, None),
        ({"classification": "private", "masking": {"method": "redact", "keep_last": 2}}, "redact"),
        ({"classification": "public"}, None),
        ({}, None),
    ],
)
def test_macro_and_python_choose_the_same_masking(render, meta, expected):
    from floe.privacy.tags import parse_tags

    problems: list[str] = []
    tags = list(parse_tags("c", meta, "test", problems))
    python = tags[0].exposure() if tags else None
    assert (python.method if python else None) == expected
    spec = render.call("privacy_exposure", meta)
    assert (spec["method"] if spec else None) == expected
    sql = render.sql("privacy_mask", "c", meta)
    assert sql == "c" if expected is None else sql != "c"


@pytest.mark.integration
def test_rendered_masking_sql_gives_the_python_values(spark, lakehouse, render):
    secrets = load_secrets(lakehouse)
    frame = spark.createDataFrame([("+1-555-1234",), ("ab",), (None,)], "c string")
    frame.createOrReplaceTempView("privacy_macro_input")
    exprs = {
        "r": render.sql("privacy_redact", "c", 4, "#"),
        "h": render.sql("privacy_hash", "c"),
        "e": render.sql("privacy_encrypt", "c"),
    }
    select = ", ".join(f"{sql} as {name}" for name, sql in exprs.items())
    rows = spark.sql(f"select c, {select} from privacy_macro_input").collect()
    for row in rows:
        assert row.r == redact_value(row.c, 4, "#")
        assert row.h == hash_value(row.c, secrets.salt)
        assert row.e == encrypt_value(row.c, secrets.key)


def test_redact_macro_rejects_bad_options(render):
    from tests.unit.macros.jinja_harness import CompilerError

    with pytest.raises(CompilerError, match="keep_last must be an integer"):
        render.call("privacy_redact", "c", -1)
    with pytest.raises(CompilerError, match="mask_char must be one character"):
        render.call("privacy_redact", "c", 4, "ab")

"""The SQL functions behind the masking macros, registered in floe's SparkSessions.

``floe.runtime`` calls :func:`register_functions` for every session it creates or
re-points, so SQL models (``privacy_hash`` / ``privacy_encrypt`` render calls to
them), the CLI and tests see the same functions:

* ``floe_hash(text)`` — HMAC-SHA256 with the salt (floe.privacy.masking.hash_value);
* ``floe_encrypt(text)`` — deterministic AES-SIV (masking.encrypt_value).

``floe_decrypt(text)`` is registered only by :func:`register_decrypt`, which an
authorized job calls explicitly: a session that can mask cannot unmask by accident.

The secrets travel inside the functions' closures to the Python workers; they never
appear in SQL text, plans or logs. Without usable secrets the functions are still
registered and fail when called, naming the variable to set, so builds that mask
nothing are unaffected.

Spark refuses permanent views over temporary functions, so masked marts are tables
(docs/privacy.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

# Module level: pandas_udf reads the type hints below, which name `pd`.
import pandas as pd  # type: ignore[import-untyped]

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

    from floe.privacy.secrets import Secrets
    from floe.runtime import Settings

HASH_FUNCTION = "floe_hash"
ENCRYPT_FUNCTION = "floe_encrypt"
DECRYPT_FUNCTION = "floe_decrypt"
MASKING_CLASS = "floe.jvm.Masking"


def _secrets_or_error(settings: Settings) -> tuple[Secrets | None, str | None]:
    from floe.privacy.secrets import PrivacyConfigError, load_secrets

    try:
        return load_secrets(settings), None
    except PrivacyConfigError as exc:
        return None, str(exc)


def _series_function(
    transform: Callable[[list[Any]], list[Any]], error: str | None
) -> Callable[[Any], Any]:
    def apply(values: pd.Series) -> pd.Series:
        if error is not None:
            from floe.privacy.secrets import PrivacyConfigError

            raise PrivacyConfigError(error)
        texts = [None if v is None or (isinstance(v, float) and v != v) else v for v in values]
        return pd.Series(transform(texts), index=values.index, dtype=object)

    return apply


def _hasher(secrets: Secrets | None) -> Callable[[list[Any]], list[Any]]:
    salt = secrets.salt if secrets else b""

    def run(texts: list[Any]) -> list[Any]:
        from floe.privacy.masking import hash_value

        return [hash_value(t, salt) for t in texts]

    return run


def _encryptor(secrets: Secrets | None) -> Callable[[list[Any]], list[Any]]:
    key = secrets.key if secrets else b""

    def run(texts: list[Any]) -> list[Any]:
        from floe.privacy.masking import encrypt_all

        return encrypt_all(texts, key)

    return run


def _decryptor(secrets: Secrets | None) -> Callable[[list[Any]], list[Any]]:
    key = secrets.key if secrets else b""

    def run(texts: list[Any]) -> list[Any]:
        from floe.privacy.masking import decrypt_all

        return decrypt_all(texts, key)

    return run


def _register(spark: SparkSession, name: str, function: Callable[[Any], Any]) -> None:
    from pyspark.sql.functions import pandas_udf

    spark.udf.register(name, pandas_udf(function, "string"))  # type: ignore[call-overload]


def register_functions(spark: SparkSession, settings: Settings) -> None:
    """Register ``floe_hash`` and ``floe_encrypt`` in ``spark`` with ``settings``' secrets.

    With floe's jar in the session (``floe dev build-jvm``) and usable secrets, they run
    in the JVM (floe.jvm.Masking: the same values, no Python worker; ADR 0059); else in
    Python workers, which also carry the error of missing secrets.
    """
    secrets, error = _secrets_or_error(settings)
    if secrets is not None and _register_jvm(spark, secrets):
        return
    _register(spark, HASH_FUNCTION, _series_function(_hasher(secrets), error))
    _register(spark, ENCRYPT_FUNCTION, _series_function(_encryptor(secrets), error))


def _register_jvm(spark: SparkSession, secrets: Secrets) -> bool:
    """``floe_hash`` / ``floe_encrypt`` as JVM functions; False without floe's jar."""
    from floe.runtime.jars import jvm_class

    masking = jvm_class(spark, MASKING_CLASS)
    jvm = spark.sparkContext._jvm
    if masking is None or jvm is None:
        return False
    string = jvm.org.apache.spark.sql.types.DataTypes.StringType
    udf = spark._jsparkSession.udf()
    udf.register(HASH_FUNCTION, masking.hash(bytearray(secrets.salt)), string)
    udf.register(ENCRYPT_FUNCTION, masking.encrypt(bytearray(secrets.key)), string)
    return True


def register_decrypt(spark: SparkSession, settings: Settings) -> None:
    """Register ``floe_decrypt`` (authorized jobs only); fails now if there is no key."""
    from floe.privacy.secrets import load_secrets

    secrets = load_secrets(settings)
    _register(spark, DECRYPT_FUNCTION, _series_function(_decryptor(secrets), None))

"""Masking: irreversible hash, redaction, deterministic encryption (docs/privacy.md).

Pure functions of a value and the secrets, used alike by the Spark functions floe
registers (floe.privacy.functions), the masked reader (floe.privacy.access) and the
erasure (a masked subject key is found by masking the value searched for).

* ``hash`` — HMAC-SHA256 keyed by the salt, as 64 hex characters: the same value
  always gives the same hash (joinable, countable), and without the salt a hash
  cannot be recomputed from a guess, so small value sets (phone numbers, ids) cannot
  be enumerated back.
* ``redact`` — every character but the last ``keep_last`` replaced by ``mask_char``.
* ``encrypt`` — AES-SIV (RFC 5297, ``cryptography``'s ``AESSIV``) without a nonce:
  deterministic, so equal values give equal ciphertexts and masked columns still
  join; :func:`decrypt_value` reverses it for jobs that hold the key.

Values are masked as text: numbers, dates and timestamps as Spark's
``cast(x as string)`` writes them, arrays and structs as compact JSON
(``to_json``), so Spark and Python mask a value identically.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import decimal
import hashlib
import hmac
import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from floe.privacy.secrets import Secrets

METHODS = ("hash", "redact", "encrypt", "none")
DEFAULT_KEEP_LAST = 4
DEFAULT_MASK_CHAR = "#"


class MaskingError(ValueError):
    """A masking declaration or a ciphertext is wrong; the message says which and how."""


@dataclass(frozen=True)
class Masking:
    """How one column is masked: ``method`` and, for ``redact``, what is kept."""

    method: str
    keep_last: int = DEFAULT_KEEP_LAST
    mask_char: str = DEFAULT_MASK_CHAR

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise MaskingError(f"masking {self.method!r}: use one of {', '.join(METHODS)}")
        if isinstance(self.keep_last, bool) or not isinstance(self.keep_last, int):
            raise MaskingError(f"keep_last must be an integer, not {self.keep_last!r}")
        if self.keep_last < 0:
            raise MaskingError(f"keep_last must be 0 or more, not {self.keep_last}")
        if not isinstance(self.mask_char, str) or len(self.mask_char) != 1:
            raise MaskingError(f"mask_char must be one character, not {self.mask_char!r}")

    @property
    def clear(self) -> bool:
        return self.method == "none"

    def apply(self, value: Any, secrets: Secrets | None) -> str | None:
        """``value`` masked (None stays None)."""
        text = as_text(value)
        if text is None or self.method == "none":
            return text
        if self.method == "redact":
            return redact_value(text, self.keep_last, self.mask_char)
        if secrets is None:
            raise MaskingError(f"masking by {self.method} needs the privacy secrets")
        if self.method == "hash":
            return hash_value(text, secrets.salt)
        return encrypt_value(text, secrets.key)

    def describe(self) -> str:
        if self.method == "redact":
            return f"redact(keep_last={self.keep_last}, mask_char={self.mask_char!r})"
        return self.method


def as_text(value: Any) -> str | None:
    """``value`` as the text Spark's ``cast(x as string)`` / ``to_json(x)`` gives."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | decimal.Decimal):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
        return repr(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:  # floe's sessions run in UTC
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return f"{text}.{value.microsecond:06d}".rstrip("0") if value.microsecond else text
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)
    return str(value)


def hash_value(text: str | None, salt: bytes) -> str | None:
    """HMAC-SHA256 of ``text`` keyed by ``salt``, hex (None stays None)."""
    if text is None:
        return None
    return hmac.new(salt, text.encode("utf-8"), hashlib.sha256).hexdigest()


def redact_value(
    text: str | None, keep_last: int = DEFAULT_KEEP_LAST, mask_char: str = DEFAULT_MASK_CHAR
) -> str | None:
    """All but the last ``keep_last`` characters replaced by ``mask_char``."""
    if text is None:
        return None
    kept = text[-keep_last:] if keep_last > 0 else ""
    return mask_char * max(len(text) - keep_last, 0) + kept


def _siv(key: bytes) -> Any:
    from cryptography.hazmat.primitives.ciphers.aead import AESSIV

    return AESSIV(key)


def encrypt_value(text: str | None, key: bytes) -> str | None:
    """AES-SIV of ``text`` (deterministic), URL-safe base64 without padding."""
    if text is None:
        return None
    token = _siv(key).encrypt(text.encode("utf-8"), None)
    return base64.urlsafe_b64encode(token).rstrip(b"=").decode()


def decrypt_value(token: str | None, key: bytes) -> str | None:
    """The text :func:`encrypt_value` encrypted; a wrong key or tampered token fails."""
    from cryptography.exceptions import InvalidTag

    if token is None:
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        return str(_siv(key).decrypt(raw, None).decode("utf-8"))
    except (InvalidTag, binascii.Error, ValueError) as exc:
        raise MaskingError(
            "cannot decrypt: not a floe ciphertext, or encrypted with another FLOE_PRIVACY_KEY"
        ) from exc


def encrypt_all(texts: Iterable[str | None], key: bytes) -> list[str | None]:
    """Many values with one cipher object (what a Spark batch does)."""
    siv = _siv(key)
    out: list[str | None] = []
    for text in texts:
        if text is None:
            out.append(None)
        else:
            token = siv.encrypt(text.encode("utf-8"), None)
            out.append(base64.urlsafe_b64encode(token).rstrip(b"=").decode())
    return out


def decrypt_all(tokens: Iterable[str | None], key: bytes) -> list[str | None]:
    return [decrypt_value(t, key) for t in tokens]


def parse_masking(value: Any, where: str) -> Masking | None:
    """A ``masking`` tag: ``hash`` | ``encrypt`` | ``redact`` | ``none``, or a mapping
    ``{method: redact, keep_last: 4, mask_char: '#'}``; None when absent."""
    if value is None:
        return None
    try:
        if isinstance(value, str):
            return Masking(value.strip().lower())
        if isinstance(value, dict):
            unknown = sorted(set(value) - {"method", "keep_last", "mask_char"})
            if unknown:
                raise MaskingError(f"unknown masking option(s) {', '.join(unknown)}")
            return Masking(
                str(value.get("method", "")).strip().lower(),
                value.get("keep_last", DEFAULT_KEEP_LAST),
                value.get("mask_char", DEFAULT_MASK_CHAR),
            )
    except MaskingError as exc:
        raise MaskingError(f"{where}: {exc}") from exc
    raise MaskingError(f"{where}: masking must be a method name or a mapping, not {value!r}")

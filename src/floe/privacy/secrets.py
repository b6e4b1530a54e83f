"""The two privacy secrets: the salt of irreversible hashes and the key of deterministic
encryption (docs/privacy.md).

Both come from the environment through :class:`floe.runtime.Settings`
(``FLOE_PRIVACY_SALT``, ``FLOE_PRIVACY_KEY``). On the ``local`` target (a SQLite
catalog) a development pair is created once under ``$FLOE_HOME/state/privacy/`` when
neither variable is set, so ``make build`` works out of the box; any other catalog
needs both variables. The values never reach SQL text, logs or ``repr``.
"""

from __future__ import annotations

import base64
import binascii
import json
import os
import secrets as _random
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from floe.runtime import Settings

SALT_VAR = "FLOE_PRIVACY_SALT"
KEY_VAR = "FLOE_PRIVACY_KEY"
MIN_SALT_CHARS = 16
# AES-SIV takes two AES keys: 2 x 128, 2 x 192 or 2 x 256 bits.
KEY_BYTES = (32, 48, 64)
DEV_SECRETS_FILE = "dev-secrets.json"


class PrivacyConfigError(ValueError):
    """The privacy secrets are missing or malformed; the message names the variable."""


@dataclass(frozen=True)
class Secrets:
    """Salt (bytes) and AES-SIV key (bytes), and where they came from (for messages)."""

    salt: bytes = field(repr=False)
    key: bytes = field(repr=False)
    source: str = "environment"


def new_key() -> str:
    """A fresh ``FLOE_PRIVACY_KEY`` value: base64 of 64 random bytes (AES-SIV-256)."""
    return base64.b64encode(_random.token_bytes(64)).decode()


def new_salt() -> str:
    """A fresh ``FLOE_PRIVACY_SALT`` value (32 random bytes, URL-safe text)."""
    return _random.token_urlsafe(32)


def parse_salt(text: str, where: str = SALT_VAR) -> bytes:
    if len(text) < MIN_SALT_CHARS:
        raise PrivacyConfigError(
            f"{where} must be at least {MIN_SALT_CHARS} characters (a short salt makes "
            f"hashes of small value sets guessable); `floe privacy keygen` prints one"
        )
    return text.encode("utf-8")


def parse_key(text: str, where: str = KEY_VAR) -> bytes:
    try:
        key = base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) not in KEY_BYTES:
        raise PrivacyConfigError(
            f"{where} must be base64 of {', '.join(map(str, KEY_BYTES))} bytes (an AES-SIV "
            "key); `floe privacy keygen` prints one"
        )
    return key


def dev_secrets_path(settings: Settings) -> Path:
    return settings.privacy_dir / DEV_SECRETS_FILE


def _dev_secrets(settings: Settings) -> Secrets:
    """The local development pair, created on first use (mode 0600, never overwritten)."""
    path = dev_secrets_path(settings)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        body = json.dumps({"salt": new_salt(), "key": new_key()}).encode()
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass  # another process created it first: use theirs
        else:
            with os.fdopen(fd, "wb") as handle:
                handle.write(body)
    try:
        stored = json.loads(path.read_text())
        return Secrets(
            parse_salt(str(stored["salt"]), f"{path} (salt)"),
            parse_key(str(stored["key"]), f"{path} (key)"),
            str(path),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise PrivacyConfigError(
            f"{path}: unreadable development secrets ({exc}); set {SALT_VAR} and {KEY_VAR}"
        ) from exc


def load_secrets(settings: Settings) -> Secrets:
    """The salt and key of ``settings``: the environment's, else (local target only) the
    development pair under ``$FLOE_HOME/state/privacy``."""
    salt, key = settings.privacy_salt, settings.privacy_key
    if salt and key:
        return Secrets(parse_salt(salt), parse_key(key))
    if salt or key:
        missing = KEY_VAR if salt else SALT_VAR
        raise PrivacyConfigError(
            f"{SALT_VAR} and {KEY_VAR} are set together or not at all; {missing} is missing"
        )
    if not settings.is_sqlite:
        raise PrivacyConfigError(
            f"set {SALT_VAR} and {KEY_VAR} (from your secret store) on this target: floe "
            "creates a development pair only for the local SQLite catalog"
        )
    return _dev_secrets(settings)

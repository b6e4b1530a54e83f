"""Does a landed or quarantined stream record belong to a data subject?

Stream records are schema-registry-framed bytes inside base64 inside a JSON
envelope (docs/feeds.md). Quarantined records are the ones that failed somewhere
along that chain — bad base64, an unknown header byte, a truncated zlib stream, an
Avro body cut short, JSON that does not parse — so a subject's quarantined record
cannot be found by a query: it is decoded here as far as it goes.

* base64 is decoded leniently (characters outside the alphabet dropped);
* the frame is read by its header byte (Glue 0x03: 18 bytes, Confluent 0x00: 5);
  any other byte is tried as a Glue frame whose first byte was damaged;
* zlib bodies are inflated as far as the stream is intact;
* JSON: parsed, else the field is looked for in the text (``"customerid": 42``);
* Avro: decoded with every registered version of the stream's schema, else with a
  *prefix* of it — the fields up to the subject's field — which reads the subject's
  field of a record whose tail is missing.

A field matches when its value, as text (floe.privacy.masking.as_text), equals the
subject value's text. Values are compared as data, never searched as bytes.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import re
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from floe.privacy.masking import as_text

_B64_NOISE = re.compile(rb"[^A-Za-z0-9+/]")
_DATA_FIELD = re.compile(r'"data"\s*:\s*"([^"]*)"')
GLUE, CONFLUENT = 0x03, 0x00
GLUE_HEADER, CONFLUENT_HEADER = 18, 5
ZLIB = 0x05


def lenient_b64(text: str | bytes | None) -> bytes | None:
    """``text`` base64-decoded, ignoring characters outside the alphabet and a ragged tail."""
    if text is None:
        return None
    raw = text.encode("latin-1", "ignore") if isinstance(text, str) else bytes(text)
    clean = _B64_NOISE.sub(b"", raw)
    clean = clean[: len(clean) - len(clean) % 4]
    try:
        return base64.b64decode(clean) if clean else None
    except (binascii.Error, ValueError):
        return None


def _inflate(body: bytes) -> bytes:
    inflater = zlib.decompressobj()
    try:
        return inflater.decompress(body)
    except zlib.error:
        return b""


def payloads(framed: bytes) -> list[bytes]:
    """Candidate payloads of framed bytes, most likely first."""
    if not framed:
        return []
    candidates: list[tuple[int, int | None]] = []
    if framed[0] == GLUE:
        candidates.append((GLUE_HEADER, framed[1] if len(framed) > 1 else None))
    elif framed[0] == CONFLUENT:
        candidates.append((CONFLUENT_HEADER, None))
    else:  # a damaged header byte: the rest of a Glue frame may be intact
        candidates.append((GLUE_HEADER, framed[1] if len(framed) > 1 else None))
    out = []
    for offset, compression in candidates:
        body = framed[offset:]
        out.append(_inflate(body) if compression == ZLIB else body)
    return [p for p in out if p]


@dataclass
class RecordMatcher:
    """Finds records whose field at one of ``paths`` equals ``value`` (as text)."""

    data_format: str  # AVRO or JSON
    paths: Sequence[tuple[str, ...]]
    value: str
    avro_definitions: Sequence[Any] = ()  # registry versions (JSON text or dicts), any order
    _schemas: list[Any] = field(default_factory=list, init=False, repr=False)
    _prefixes: list[Any] = field(default_factory=list, init=False, repr=False)
    _patterns: list[re.Pattern[bytes]] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        value = re.escape(self.value.encode("utf-8"))
        for path in self.paths:
            leaf = re.escape(path[-1].encode("utf-8"))
            self._patterns.append(
                re.compile(
                    rb'"' + leaf + rb'"\s*:\s*(?:"' + value + rb'"|' + value + rb")(?=\s*[,}\]])"
                )
            )
        if self.data_format == "AVRO":
            definitions = [
                json.loads(d) if isinstance(d, str) else d for d in self.avro_definitions
            ][::-1]  # latest first: the likeliest writer
            self._schemas = parsed_avro_schemas(definitions)
            for schema in definitions:
                for path in self.paths:
                    prefix = prefix_schema(schema, path)
                    if prefix is not None:
                        self._prefixes.append(prefix)

    # -- payloads ----------------------------------------------------------------

    def _record_matches(self, record: Any) -> bool:
        for path in self.paths:
            value: Any = record
            for part in path:
                value = value.get(part) if isinstance(value, dict) else None
            if value is not None and as_text(value) == self.value:
                return True
        return False

    def matches_payload(self, payload: bytes) -> bool:
        if self.data_format == "AVRO":
            return self._avro_matches(payload)
        try:
            record = json.loads(payload.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return any(p.search(payload) for p in self._patterns)
        return self._record_matches(record)

    def _avro_matches(self, payload: bytes) -> bool:
        from fastavro import schemaless_reader

        for schema in (*self._schemas, *self._prefixes):
            try:
                record = schemaless_reader(io.BytesIO(payload), schema, None)
            except Exception:
                continue
            if self._record_matches(record):
                return True
        return False

    def matches_framed(self, framed: bytes | None) -> bool:
        return bool(framed) and any(self.matches_payload(p) for p in payloads(framed or b""))

    # -- landed and quarantined records ---------------------------------------------

    def matches_line(self, line: str) -> bool:
        """A landed JSONL envelope line (or whatever a broken line holds)."""
        try:
            envelope = json.loads(line)
            data = envelope.get("data") if isinstance(envelope, dict) else None
        except ValueError:
            found = _DATA_FIELD.search(line)
            data = found.group(1) if found else None
        if not isinstance(data, str):
            return False
        return self.matches_framed(lenient_b64(data))

    def matches_quarantined(self, raw_data: str | None, raw_bytes: bytes | None) -> bool:
        """A ``raw.quarantine`` row: its decoded bytes, else its landed text."""
        if raw_bytes:
            return self.matches_framed(bytes(raw_bytes))
        if raw_data is None:
            return False
        if raw_data.lstrip().startswith("{"):
            return self.matches_line(raw_data)
        return self.matches_framed(lenient_b64(raw_data))


def prefix_schema(schema: Any, path: tuple[str, ...]) -> Any | None:
    """A parsed Avro record schema cut after the field at ``path`` (None if absent)."""
    from fastavro import parse_schema

    def cut(record: dict[str, Any], parts: tuple[str, ...]) -> dict[str, Any] | None:
        fields = []
        for f in record.get("fields", []):
            if f["name"] == parts[0]:
                if len(parts) == 1:
                    fields.append(f)
                    return {**record, "fields": fields}
                inner = f["type"]
                if isinstance(inner, dict) and inner.get("type") == "record":
                    sub = cut(inner, parts[1:])
                    if sub is None:
                        return None
                    fields.append({**f, "type": sub})
                    return {**record, "fields": fields}
                return None
            fields.append(f)
        return None

    if not isinstance(schema, dict) or schema.get("type") != "record":
        return None
    cut_schema = cut(schema, path)
    if cut_schema is None:
        return None
    try:
        return parse_schema(cut_schema, _write_hint=False)
    except Exception:
        return None


def parsed_avro_schemas(definitions: Iterable[Any]) -> list[Any]:
    """fastavro-parsed schemas of registry definitions, in the order given."""
    from fastavro import parse_schema

    return [parse_schema(d, _write_hint=False) for d in definitions]

"""``floe privacy scan``: columns that look like personal data but carry no tag.

Three checks (docs/privacy.md):

* **by name** (:func:`scan_names`, no warehouse needed — ``make lint`` runs it):
  every column the project's YAML declares, and every column of a raw feed, whose
  name suggests personal data (``email``, ``phone``, ``first_name``, ``dob`` …);
* **by value** (:func:`scan_values`): a sample of every string value of every table
  in the catalog — struct fields and array elements included — through the
  detectors of floe.privacy.detectors (e-mail, phone, credit card, IP address, date
  of birth, person name);
* **by join** (:func:`scan_subject_joins`): an identifier column (``*_id``, ``*_no``,
  ``*_key``) most of whose sampled values are values of a tagged subject key: it
  names the same people and erasure must reach it.

A finding is *untagged* when the column (or its struct column) has no privacy tag
(``pii``, ``classification``, ``subject_key`` or ``masking``), or is tagged
``public`` while a detector matches its values. A subject key followed through column
lineage (floe.privacy.follow) counts as a tag; an explicit ``pii: false`` says the
column was reviewed and silences it. Untagged findings in ``raw`` (every feed: a new
feed is tagged when it is added) and ``marts`` (analysts would see them in clear) fail
the scan; in other layers they are warnings. Each untagged finding carries the tag to
add (:attr:`Finding.proposal`). Examples are printed redacted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from floe.privacy.detectors import SUBJECT_HINTS, detect, name_hints
from floe.privacy.masking import redact_value
from floe.privacy.tags import PrivacyTags, RelationTags

if TYPE_CHECKING:
    import pyarrow as pa

FAIL_LAYERS = ("raw", "marts")
# a column that can hold the same people as a subject key: integers or text
_ID_NAME = re.compile(r"(^id$|_?id$|_no$|_key$|_?number$|_uuid$)")
JOIN_THRESHOLD = 0.5
MIN_DISTINCT = 5
SKIPPED_TABLES = ("audit.erasure_log",)


@dataclass(frozen=True)
class Finding:
    """A column that looks like personal data."""

    relation: str
    column: str
    detectors: tuple[str, ...]
    by: str  # "name" or "values"
    share: float = 0.0
    sampled: int = 0
    example: str = ""
    tagged: bool = False
    classification: str | None = None
    reviewed: bool = False  # ``pii: false`` in its YAML
    subject_key: str | None = None  # the key a subject-id finding should be tagged with
    yaml_path: str = ""

    @property
    def layer(self) -> str:
        return self.relation.split(".", 1)[0]

    def fails(self, fail_layers: Sequence[str] = FAIL_LAYERS) -> bool:
        return not self.tagged and self.layer in fail_layers

    def line(self) -> str:
        what = "/".join(self.detectors)
        if self.by == "values":
            evidence = f"{self.share:.0%} of {self.sampled} sampled values"
            if self.example:
                evidence += f", e.g. {self.example}"
        else:
            evidence = "by its name"
        if self.by == "join":
            evidence = (
                f"{self.share:.0%} of {self.sampled} sampled values are {self.subject_key} values"
            )
        if self.reviewed:
            status = "tagged pii: false"
        elif self.tagged:
            status = f"tagged {self.classification or 'pii'}"
        elif self.classification == "public":
            status = "tagged public: classify it sensitive or private"
        else:
            where = f" in {self.yaml_path}" if self.yaml_path else ""
            status = (
                f"NOT TAGGED: add {self.proposal}{where} (or `pii: false` if it is not personal)"
            )
        return f"{self.relation}.{self.column}: looks like {what} ({evidence}) - {status}"

    @property
    def proposal(self) -> str:
        """The tag to add, as the column's YAML entry (a struct field under ``fields``)."""
        if self.subject_key is not None:
            meta = f"{{classification: sensitive, subject_key: {self.subject_key}}}"
        else:
            meta = "{pii: true, classification: private}"
        column, _, field = self.column.partition(".")
        if field:
            meta = f"{{fields: {{{field}: {meta}}}}}"
        return f"`- {{name: {column}, config: {{meta: {meta}}}}}`"


def redacted_example(text: str) -> str:
    """A value shown in a report: an e-mail keeps its first letter and domain, anything
    else only its last two characters."""
    if "@" in text:
        local, _, domain = text.partition("@")
        return f"{local[:1]}***@{domain}"
    return str(redact_value(text, keep_last=2, mask_char="*"))


def _tag_state(rel: RelationTags | None, column: str) -> tuple[bool, str | None, bool]:
    """(tagged as personal, classification, reviewed as ``pii: false``) of a column
    path or its parents."""
    if rel is None:
        return False, None, False
    parts = column.split(".")
    for end in range(len(parts), 0, -1):
        tag = rel.tag(".".join(parts[:end]))
        if tag is not None:
            personal = tag.personal or tag.subject_key is not None or tag.stored is not None
            return personal or tag.not_pii, tag.classification, tag.not_pii
    return False, None, False


def _proposed_key(tags: PrivacyTags, column: str) -> str:
    """The subject key a person-id column should carry: the key some tagged column of
    the same name carries, else the column's own name."""
    leaf = column.lower().split(".")[-1]
    for rel in tags.relations.values():
        tag = rel.tag(leaf)
        if tag is not None and tag.subject_key is not None:
            return tag.subject_key
    return leaf


# --------------------------------------------------------------------------- by name


def scan_names(
    tags: PrivacyTags, feed_columns: Mapping[str, Iterable[str]] | None = None
) -> list[Finding]:
    """Declared columns whose name suggests personal data (``feed_columns``: more
    columns per relation, e.g. a raw feed's declared or registry fields)."""
    findings = []
    for name, rel in sorted(tags.relations.items()):
        if name in SKIPPED_TABLES:
            continue
        columns = set(rel.declared) | set((feed_columns or {}).get(name, ()))
        for column in sorted(columns):
            hints = name_hints(column)
            if not hints:
                continue
            tagged, classification, reviewed = _tag_state(rel, column)
            subject = any(h in SUBJECT_HINTS for h in hints)
            findings.append(
                Finding(
                    name,
                    column,
                    tuple(hints),
                    "name",
                    tagged=tagged,
                    classification=classification,
                    reviewed=reviewed,
                    subject_key=_proposed_key(tags, column) if subject else None,
                    yaml_path=rel.yaml_path,
                )
            )
    return findings


# --------------------------------------------------------------------------- by value


def string_leaves(table: pa.Table) -> dict[str, list[str | None]]:
    """Every string value of an Arrow table by leaf path (struct fields joined with
    dots, list elements under their list's path)."""
    import pyarrow as pa

    out: dict[str, list[str | None]] = {}

    def walk(path: str, array: Any) -> None:
        t = array.type
        if pa.types.is_struct(t):
            for i in range(t.num_fields):
                walk(f"{path}.{t.field(i).name}", array.field(i))
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(path, array.flatten())
        elif pa.types.is_string(t) or pa.types.is_large_string(t):
            out.setdefault(path, []).extend(array.to_pylist())

    for name in table.column_names:
        column = table.column(name)
        for chunk in column.chunks:
            walk(name, chunk)
    return out


def scan_table(relation: str, arrow: pa.Table, rel: RelationTags | None) -> list[Finding]:
    findings = []
    for column, values in sorted(string_leaves(arrow).items()):
        found = detect(values)
        if not found:
            continue
        tagged, classification, reviewed = _tag_state(rel, column)
        if classification == "public" and not reviewed:
            tagged = False
        texts = [v for v in values if isinstance(v, str) and v.strip()]
        best = max(found, key=lambda k: found[k])
        example = next((v for v in texts if best in detect([v] * 5)), texts[0] if texts else "")
        findings.append(
            Finding(
                relation,
                column,
                tuple(sorted(found)),
                "values",
                share=found[best],
                sampled=len(texts),
                example=redacted_example(example),
                tagged=tagged,
                classification=classification,
                reviewed=reviewed,
                yaml_path=rel.yaml_path if rel else "",
            )
        )
    return findings


def scan_values(
    catalog: Any, tags: PrivacyTags, schemas: Sequence[str], sample: int = 1000
) -> list[Finding]:
    """Sample up to ``sample`` rows of every table of ``schemas`` through pyiceberg:
    the detectors over its text values, and its identifier columns against the values
    of every tagged subject key (:func:`scan_subject_joins`)."""
    findings = []
    samples: dict[str, pa.Table] = {}
    existing = {ns[0] for ns in catalog.list_namespaces()}
    for schema in schemas:
        if schema not in existing:
            continue
        for identifier in sorted(catalog.list_tables(schema)):
            relation = ".".join(identifier).lower()
            if relation in SKIPPED_TABLES:
                continue
            table = catalog.load_table(identifier)
            if table.current_snapshot() is None:
                continue
            arrow = table.scan(limit=sample).to_arrow()
            samples[relation] = arrow
            findings += scan_table(relation, arrow, tags.get(relation))
    keys = subject_values(catalog, tags, samples)
    findings += scan_subject_joins(samples, tags, keys)
    return findings


def _scalars(column: Any) -> list[str]:
    """The non-null values of an integer or text Arrow column, as text."""
    import pyarrow as pa

    t = column.type
    if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)):
        return []
    return [str(v).strip() for v in column.to_pylist() if v is not None and str(v).strip()]


def subject_values(
    catalog: Any, tags: PrivacyTags, samples: Mapping[str, pa.Table], limit: int = 200_000
) -> dict[str, set[str]]:
    """subject key -> the values its tagged top-level columns hold (up to ``limit``
    rows of each table, read whole, not sampled: a join needs the key's values)."""
    out: dict[str, set[str]] = {}
    for relation, rel in sorted(tags.relations.items()):
        if relation not in samples or rel.masked_of is not None:
            continue
        columns = {
            t.path.lower(): t.subject_key
            for t in rel.columns.values()
            if t.subject_key and "." not in t.path and t.stored is None
        }
        present = [c for c in samples[relation].column_names if c.lower() in columns]
        if not present:
            continue
        table = catalog.load_table(tuple(relation.split(".")))
        arrow = table.scan(selected_fields=tuple(present), limit=limit).to_arrow()
        for name in present:
            values = out.setdefault(str(columns[name.lower()]), set())
            values.update(_scalars(arrow.column(name)))
    return out


def scan_subject_joins(
    samples: Mapping[str, pa.Table], tags: PrivacyTags, keys: Mapping[str, set[str]]
) -> list[Finding]:
    """Untagged identifier columns whose sampled values are mostly values of a subject
    key: they name the same people (a new feed's ``rider_id`` holding customer ids)."""
    findings = []
    for relation, arrow in sorted(samples.items()):
        rel = tags.get(relation)
        for name in arrow.column_names:
            if not _ID_NAME.search(name.lower()) or name.startswith("_"):
                continue
            tagged, classification, _reviewed = _tag_state(rel, name)
            if tagged:
                continue
            distinct = set(_scalars(arrow.column(name)))
            if len(distinct) < MIN_DISTINCT:
                continue
            best, share = None, 0.0
            for key, values in sorted(keys.items()):
                hit = len(distinct & values) / len(distinct)
                if hit > share:
                    best, share = key, hit
            if best is None or share < JOIN_THRESHOLD:
                continue
            findings.append(
                Finding(
                    relation,
                    name,
                    (f"subject_key:{best}",),
                    "join",
                    share=share,
                    sampled=len(distinct),
                    classification=classification,
                    subject_key=best,
                    yaml_path=rel.yaml_path if rel else "",
                )
            )
    return findings

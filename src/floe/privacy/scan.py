"""``floe privacy scan``: columns that look like personal data but carry no tag.

Two checks (docs/privacy.md):

* **by name** (:func:`scan_names`, no warehouse needed — ``make lint`` runs it):
  every column the project's YAML declares, and every column of a raw feed, whose
  name suggests personal data (``email``, ``phone``, ``first_name``, ``dob`` …);
* **by value** (:func:`scan_values`): a sample of every string value of every table
  in the catalog — struct fields and array elements included — through the
  detectors of floe.privacy.detectors (e-mail, phone, credit card, IP address, date
  of birth, person name).

A finding is *untagged* when the column (or its struct column) has no privacy tag
(``pii``, ``classification``, ``subject_key`` or ``masking``), or is tagged
``public`` while a detector matches its values. Untagged findings in ``marts`` fail
the scan (they would reach analysts in clear); in other layers they are warnings.
Examples are printed redacted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from floe.privacy.detectors import detect, name_hints
from floe.privacy.masking import redact_value
from floe.privacy.tags import PrivacyTags, RelationTags

if TYPE_CHECKING:
    import pyarrow as pa

FAIL_LAYERS = ("marts",)
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
        if self.tagged:
            status = f"tagged {self.classification or 'pii'}"
        elif self.classification == "public":
            status = "tagged public: classify it sensitive or private"
        else:
            status = "NOT TAGGED: add meta.classification (and pii) in its YAML"
        return f"{self.relation}.{self.column}: looks like {what} ({evidence}) - {status}"


def redacted_example(text: str) -> str:
    """A value shown in a report: an e-mail keeps its first letter and domain, anything
    else only its last two characters."""
    if "@" in text:
        local, _, domain = text.partition("@")
        return f"{local[:1]}***@{domain}"
    return str(redact_value(text, keep_last=2, mask_char="*"))


def _tag_state(rel: RelationTags | None, column: str) -> tuple[bool, str | None]:
    """(tagged as personal, classification) of a column path or its parents."""
    if rel is None:
        return False, None
    parts = column.split(".")
    for end in range(len(parts), 0, -1):
        tag = rel.tag(".".join(parts[:end]))
        if tag is not None:
            personal = tag.personal or tag.subject_key is not None or tag.stored is not None
            return personal, tag.classification
    return False, None


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
            tagged, classification = _tag_state(rel, column)
            findings.append(
                Finding(
                    name, column, tuple(hints), "name", tagged=tagged, classification=classification
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
        tagged, classification = _tag_state(rel, column)
        if classification == "public":
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
            )
        )
    return findings


def scan_values(
    catalog: Any, tags: PrivacyTags, schemas: Sequence[str], sample: int = 1000
) -> list[Finding]:
    """Sample up to ``sample`` rows of every table of ``schemas`` through pyiceberg."""
    findings = []
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
            findings += scan_table(relation, arrow, tags.get(relation))
    return findings

"""Privacy tags: what the project's YAML says about each column (docs/privacy.md).

A column is tagged in its model's or source's YAML, under ``config.meta`` (or
``meta``)::

    columns:
      - name: email_id
        description: E-mail address.
        config:
          meta: {pii: true, classification: private, masking: hash}
      - name: customerid
        config:
          meta: {classification: sensitive, subject_key: customer_id}

* ``classification`` — ``public`` | ``sensitive`` | ``private``;
* ``pii`` — the column holds personal data (needs ``sensitive`` or ``private``);
* ``subject_key`` — the column identifies a data subject; the value names the key
  (``customer_id`` for both ``customer_id`` and ``customerid`` columns), ``true``
  names it after the column. ``floe forget --subject customer_id=42`` finds every
  column holding that key;
* ``masking`` — how analysts see the column: ``hash`` | ``encrypt`` | ``redact``
  (``{method: redact, keep_last: 4}``) | ``none``; by default ``sensitive`` and
  ``private`` columns are masked (``encrypt`` for subject keys so they still join,
  ``hash`` otherwise) and ``public`` ones are not;
* ``fields`` — tags of the fields of a struct column (``{customer_account_no:
  {subject_key: ...}}``), for raw stream records.

A model built with ``privacy_masked_columns(ref('x'))`` (a masked twin) stores the
columns of ``x`` masked; it inherits ``x``'s tags, with the masking applied recorded
as ``stored`` (the erasure masks the value it looks for there).

The tags are read from dbt's manifest (``dbt parse``, no warehouse) or, inside
dbt, from its ``graph``: the same dictionaries, so both readers agree.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from floe.privacy.masking import Masking, MaskingError, parse_masking

if TYPE_CHECKING:
    from floe.feeds.declarations import Feed
    from floe.runtime import Settings

CLASSIFICATIONS = ("public", "sensitive", "private")
TAG_KEYS = ("pii", "classification", "subject_key", "masking", "fields")
MASKED_MACRO = "privacy_masked_columns"
_KEY_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_RESOURCE_TYPES = ("model", "seed", "snapshot")


class PrivacyTagError(ValueError):
    """Column tags that make no sense; the message lists every problem with its YAML file."""


@dataclass(frozen=True)
class ColumnTag:
    """The privacy tags of one column (or one field of a struct column: ``a.b``)."""

    path: str
    classification: str | None = None
    pii: bool = False
    subject_key: str | None = None
    masking: Masking | None = None
    # Values are stored masked this way (a masked twin's columns); None: in clear.
    stored: Masking | None = None
    where: str = ""
    # ``pii: false`` written in the YAML: reviewed and not personal (silences the scan)
    not_pii: bool = False
    # set when the tag was not written but follows a tagged column through column
    # lineage (floe.privacy.follow): the tagged column it comes from
    via: str = ""

    @property
    def column(self) -> str:
        """The top-level column holding the value."""
        return self.path.split(".", 1)[0]

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.path.split("."))

    @property
    def personal(self) -> bool:
        return self.pii or self.classification in ("sensitive", "private")

    def exposure(self) -> Masking | None:
        """How an analyst sees the column: its masking, None for clear."""
        if self.masking is not None:
            return None if self.masking.clear else self.masking
        if self.classification in ("sensitive", "private"):
            return Masking("encrypt") if self.subject_key else Masking("hash")
        return None


@dataclass
class RelationTags:
    """The tagged columns of one relation (``schema.table``)."""

    relation: str
    node_id: str
    resource_type: str
    yaml_path: str = ""
    columns: dict[str, ColumnTag] = field(default_factory=dict)
    declared: set[str] = field(default_factory=set)  # every column named in YAML, lower case
    feed: Feed | None = None
    masked_of: str | None = None  # the relation a masked twin masks

    @property
    def schema(self) -> str:
        return self.relation.split(".", 1)[0]

    def tag(self, column: str) -> ColumnTag | None:
        return self.columns.get(column.lower())

    def subject_columns(self, key: str) -> list[ColumnTag]:
        return [t for t in self.columns.values() if t.subject_key == key]


@dataclass
class PrivacyTags:
    """Every relation's tags; built by :meth:`from_manifest` or :meth:`from_graph`."""

    relations: dict[str, RelationTags] = field(default_factory=dict)

    def subject_keys(self) -> list[str]:
        return sorted(
            {t.subject_key for r in self.relations.values() for t in r.columns.values()} - {None}  # type: ignore[arg-type]
        )

    def subject_columns(self, key: str) -> dict[str, list[ColumnTag]]:
        """relation -> the columns holding subject key ``key``."""
        found = {}
        for name, rel in sorted(self.relations.items()):
            cols = rel.subject_columns(key)
            if cols:
                found[name] = cols
        return found

    def subject_column_names(self, key: str) -> set[str]:
        return {t.column.lower() for cols in self.subject_columns(key).values() for t in cols}

    def get(self, relation: str) -> RelationTags | None:
        return self.relations.get(relation.lower())

    # -- readers ---------------------------------------------------------------------

    @classmethod
    def from_manifest(cls, manifest: Mapping[str, Any]) -> PrivacyTags:
        """Tags from a parsed ``manifest.json`` (dict)."""
        return cls.from_graph(manifest.get("nodes", {}), manifest.get("sources", {}))

    @classmethod
    def from_graph(
        cls, nodes: Mapping[str, Mapping[str, Any]], sources: Mapping[str, Mapping[str, Any]]
    ) -> PrivacyTags:
        """Tags from dbt's node and source dictionaries (manifest or Jinja ``graph``)."""
        from floe.feeds.sources import feed_from_node

        tags = cls()
        problems: list[str] = []
        for uid, node in sorted(sources.items()):
            feed = feed_from_node(node)
            relation = feed.raw_table if feed else _source_relation(node)
            rel = tags._relation(relation, uid, "source", node)
            rel.feed = feed
            _read_columns(rel, node, problems)
        models = {}
        for uid, node in sorted(nodes.items()):
            if node.get("resource_type") not in _RESOURCE_TYPES:
                continue
            relation = f"{node['schema']}.{node.get('alias') or node['name']}".lower()
            models[uid] = relation
            rel = tags._relation(relation, uid, str(node["resource_type"]), node)
            _read_columns(rel, node, problems)
        for uid, node in sorted(nodes.items()):
            macros = (node.get("depends_on") or {}).get("macros") or []
            if uid in models and any(m.endswith(f".{MASKED_MACRO}") for m in macros):
                parents = [p for p in (node.get("depends_on") or {}).get("nodes") or []]
                if len(parents) != 1 or parents[0] not in models:
                    problems.append(
                        f"{node.get('original_file_path')}: a masked model ({MASKED_MACRO}) "
                        f"reads exactly one model; {node['name']} reads {parents}"
                    )
                    continue
                tags._mask_twin(models[uid], models[parents[0]])
        if problems:
            raise PrivacyTagError("privacy tags:\n" + "\n".join(f"- {p}" for p in problems))
        return tags

    def _relation(
        self, relation: str, uid: str, resource_type: str, node: Mapping[str, Any]
    ) -> RelationTags:
        rel = self.relations.get(relation)
        if rel is None:
            rel = RelationTags(
                relation,
                uid,
                resource_type,
                str(node.get("original_file_path") or node.get("patch_path") or ""),
            )
            self.relations[relation] = rel
        return rel

    def _mask_twin(self, twin: str, upstream: str) -> None:
        rel, source = self.relations[twin], self.relations[upstream]
        rel.masked_of = upstream
        for key, tag in source.columns.items():
            if key in rel.columns:
                continue  # the twin's own YAML tags win
            rel.columns[key] = replace(tag, stored=tag.exposure(), where=f"{tag.where} (masked)")


def _source_relation(node: Mapping[str, Any]) -> str:
    return f"{node.get('schema')}.{node.get('identifier') or node.get('name')}".lower()


def column_meta(column: Mapping[str, Any]) -> dict[str, Any]:
    """A column's ``meta`` merged with its ``config.meta`` (dbt 1.10+ style wins)."""
    merged: dict[str, Any] = {}
    for meta in (column.get("meta"), (column.get("config") or {}).get("meta")):
        if isinstance(meta, Mapping):
            merged.update(meta)
    return merged


def _read_columns(rel: RelationTags, node: Mapping[str, Any], problems: list[str]) -> None:
    columns = node.get("columns") or {}
    entries = columns.values() if isinstance(columns, Mapping) else columns
    for column in entries:
        if not isinstance(column, Mapping) or not column.get("name"):
            continue
        name = str(column["name"])
        rel.declared.add(name.lower())
        where = f"{rel.yaml_path}: {rel.relation}.{name}"
        for tag in parse_tags(name, column_meta(column), where, problems):
            rel.columns[tag.path.lower()] = tag


def parse_tags(
    path: str, meta: Mapping[str, Any], where: str, problems: list[str]
) -> Iterable[ColumnTag]:
    """The tags of column ``path`` (and of its ``fields``), checked; problems appended."""
    if not any(k in meta for k in TAG_KEYS):
        return []
    found: list[ColumnTag] = []
    classification = meta.get("classification")
    if classification is not None:
        classification = str(classification).strip().lower()
        if classification not in CLASSIFICATIONS:
            problems.append(
                f"{where}: classification {meta.get('classification')!r} is not one of "
                f"{', '.join(CLASSIFICATIONS)}"
            )
            classification = None
    pii = meta.get("pii", False)
    if not isinstance(pii, bool):
        problems.append(f"{where}: pii must be true or false, not {pii!r}")
        pii = False
    if pii and classification in (None, "public"):
        problems.append(f"{where}: a pii column is classified sensitive or private")
    subject_key = meta.get("subject_key")
    if subject_key is True:
        subject_key = path.split(".")[-1].lower()
    elif subject_key in (None, False):
        subject_key = None
    elif not isinstance(subject_key, str) or not _KEY_NAME.match(subject_key):
        problems.append(
            f"{where}: subject_key must be true or a lowercase name (the key's name), "
            f"not {subject_key!r}"
        )
        subject_key = None
    try:
        masking = parse_masking(meta.get("masking"), where)
    except MaskingError as exc:
        problems.append(str(exc))
        masking = None
    if masking is not None:
        if masking.clear and classification == "private":
            problems.append(f"{where}: a private column cannot be shown in clear (masking: none)")
        if subject_key and masking.method == "redact":
            problems.append(
                f"{where}: a subject key cannot be redacted (erasure could no longer find "
                "the subject); use encrypt or hash"
            )
    if any(k in meta for k in ("pii", "classification", "subject_key", "masking")):
        not_pii = meta.get("pii") is False and classification in (None, "public")
        found.append(
            ColumnTag(path, classification, pii, subject_key, masking, None, where, not_pii)
        )
    fields = meta.get("fields")
    if fields is not None:
        if not isinstance(fields, Mapping):
            problems.append(f"{where}: fields must map field names to tags")
        else:
            for name, sub in sorted(fields.items()):
                if not isinstance(sub, Mapping):
                    problems.append(f"{where}.{name}: tags must be a mapping")
                    continue
                found.extend(parse_tags(f"{path}.{name}", sub, f"{where}.{name}", problems))
    return found


def load_manifest(settings: Settings, manifest: Path | None = None) -> dict[str, Any]:
    """dbt's manifest: ``manifest`` when given, else ``dbt parse`` of the project."""
    if manifest is not None:
        return dict(json.loads(Path(manifest).read_text()))
    from floe.docsite.coverage import parse_manifest

    project = settings.dbt_project_dir()
    return parse_manifest(project, project / "profiles")


def load_tags(settings: Settings, manifest: Path | None = None) -> PrivacyTags:
    """The project's privacy tags (see :func:`load_manifest`)."""
    return PrivacyTags.from_manifest(load_manifest(settings, manifest))

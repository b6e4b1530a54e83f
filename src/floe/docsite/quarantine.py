"""The docs site's quarantine page: per feed, what ``raw.quarantine`` holds and why.

For every feed with quarantined records: the count per error code and a few examples
per code (source file, detail, raw payload). A feed whose declaration tags any column
as personal (``pii``, ``subject_key``, ``classification: sensitive|private``,
``masking``, or tagged stream ``fields``) shows its payloads masked: JSON keeps its
keys and shape, every value becomes ``•••``; anything else is masked whole. The page
is plain HTML with no external assets, written beside dbt's ``index.html`` by
``floe docs`` (``quarantine.html``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

QUARANTINE = "raw.quarantine"
MASK = "•••"
EXAMPLES_PER_CODE = 3
PAYLOAD_CHARS = 400
_PERSONAL_KEYS = ("pii", "subject_key", "masking", "fields")


@dataclass(frozen=True)
class QuarantineExample:
    code: str
    source_file: str | None
    detail: str | None
    payload: str | None


@dataclass
class QuarantineFeed:
    feed: str
    total: int = 0
    codes: list[tuple[str, int]] = field(default_factory=list)
    examples: list[QuarantineExample] = field(default_factory=list)


def read_quarantine(
    spark: SparkSession, examples_per_code: int = EXAMPLES_PER_CODE
) -> list[QuarantineFeed]:
    """Per feed, code counts (most frequent first) and the first examples of each code."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    if not spark.catalog.tableExists(QUARANTINE):
        return []
    table = spark.table(QUARANTINE).withColumn(
        "code", F.coalesce(F.col("error_code"), F.lit("unknown"))
    )
    feeds: dict[str, QuarantineFeed] = {}
    for row in table.groupBy("feed", "code").count().collect():
        entry = feeds.setdefault(row.feed, QuarantineFeed(row.feed))
        entry.codes.append((row.code, int(row["count"])))
        entry.total += int(row["count"])
    order = Window.partitionBy("feed", "code").orderBy("_source_file", "_sequence_number")
    payload = F.coalesce(F.col("raw_data"), F.base64("raw_bytes"))
    examples = (
        table.withColumn("_n", F.row_number().over(order))
        .where(F.col("_n") <= examples_per_code)
        .select("feed", "code", "_source_file", "error_detail", payload.alias("payload"))
        .collect()
    )
    for row in sorted(examples, key=lambda r: (r.feed, r.code, r._source_file or "")):
        feeds[row.feed].examples.append(
            QuarantineExample(row.code, row._source_file, row.error_detail, row.payload)
        )
    for entry in feeds.values():
        entry.codes.sort(key=lambda c: (-c[1], c[0]))
    return [feeds[name] for name in sorted(feeds)]


def personal_feeds(manifest: Mapping[str, Any]) -> set[str]:
    """Feeds (source table names) whose declaration tags a column as personal."""
    found = set()
    for source in manifest.get("sources", {}).values():
        metas = [source.get("meta") or {}, (source.get("config") or {}).get("meta") or {}]
        metas += [c.get("meta") or {} for c in (source.get("columns") or {}).values()]
        if any(_personal(m) or _personal(m.get("floe") or {}) for m in metas):
            found.add(str(source.get("name")))
    return found


def _personal(meta: Mapping[str, Any]) -> bool:
    if any(meta.get(k) not in (None, False) for k in _PERSONAL_KEYS):
        return True
    return meta.get("classification") in ("sensitive", "private")


def mask_payload(payload: str | None) -> str:
    """``payload`` with every value hidden: JSON keeps keys and shape, the rest is masked whole."""
    if payload is None:
        return ""
    try:
        parsed = json.loads(payload)
    except ValueError:
        return f"{MASK} ({len(payload)} characters masked)"
    return json.dumps(_mask(parsed), ensure_ascii=False)


def _mask(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _mask(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_mask(v) for v in value]
    return None if value is None else MASK


def quarantine_page(feeds: Iterable[QuarantineFeed], masked: set[str]) -> str:
    """The page's HTML (every value escaped)."""
    feeds = list(feeds)
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'><title>floe — quarantine</title>",
        "<style>body{font:14px system-ui,sans-serif;margin:24px;max-width:1100px}"
        "table{border-collapse:collapse;margin:8px 0 16px}td,th{border:1px solid #ccc;"
        "padding:4px 8px;text-align:left;vertical-align:top}pre{margin:0;white-space:pre-wrap;"
        "word-break:break-all}.masked{color:#8a4b00}</style></head><body>",
        "<h1>Quarantined records</h1>",
        "<p>Records a feed could not load, from <code>raw.quarantine</code>, per feed and "
        "error code. Payloads of feeds with personal columns are masked.</p>",
    ]
    if not feeds:
        parts.append("<p id='nothing'>Nothing is quarantined.</p>")
    total = sum(f.total for f in feeds)
    parts.append(f"<p id='total'>{total} record(s) in {len(feeds)} feed(s).</p>")
    for feed in feeds:
        is_masked = feed.feed in masked
        note = " <span class='masked'>(payloads masked: personal data)</span>" if is_masked else ""
        parts.append(f"<h2 id='feed-{esc(feed.feed)}'>{esc(feed.feed)} — {feed.total}{note}</h2>")
        parts.append("<table class='codes'><tr><th>error code</th><th>records</th></tr>")
        parts += [f"<tr><td>{esc(code)}</td><td>{n}</td></tr>" for code, n in feed.codes]
        parts.append("</table>")
        parts.append(
            "<table class='examples'><tr><th>code</th><th>file</th><th>detail</th>"
            "<th>payload</th></tr>"
        )
        for ex in feed.examples:
            payload = mask_payload(ex.payload) if is_masked else (ex.payload or "")
            if len(payload) > PAYLOAD_CHARS:
                payload = payload[:PAYLOAD_CHARS] + "…"
            parts.append(
                f"<tr><td>{esc(ex.code)}</td><td>{esc(ex.source_file or '')}</td>"
                f"<td>{esc(ex.detail or '')}</td><td><pre>{esc(payload)}</pre></td></tr>"
            )
        parts.append("</table>")
    parts.append("</body></html>")
    return "\n".join(parts)


def write_quarantine_page(spark: SparkSession, target: Path) -> int:
    """``target/quarantine.html`` from the warehouse and ``target/manifest.json``;
    returns the number of quarantined records shown per feed in total."""
    manifest_path = target / "manifest.json"
    manifest = json.loads(manifest_path.read_text()) if manifest_path.exists() else {}
    feeds = read_quarantine(spark)
    page = quarantine_page(feeds, personal_feeds(manifest))
    (target / "quarantine.html").write_text(page, encoding="utf-8")
    return sum(f.total for f in feeds)

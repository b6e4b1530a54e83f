"""floe's docs site: dbt's docs plus raw feed docs and the column lineage view.

``dbt docs generate`` writes ``target/index.html`` (dbt's single-page site),
``manifest.json`` and ``catalog.json`` (floe's adapter reads the catalog in one pass
from Iceberg, :mod:`floe.docsite.catalog`). :func:`finish_site` then

* puts each raw feed model's docs — derived from its feed by
  :func:`floe.feeds.docs.raw_model_docs`, never repeated in YAML — into the manifest
  the site reads;
* writes ``lineage.json`` (:mod:`floe.lineage`) and ``lineage.html`` (a page of its own,
  plain HTML/JS, no external assets: the view loads the graph once and draws only the
  selected column's upstream/downstream);
* links the lineage page from dbt's page (a button that follows the model on screen).

:func:`serve` serves ``target/`` on localhost. ``floe docs`` does all of it.
"""

from __future__ import annotations

import functools
import http.server
import json
import threading
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from floe.lineage import LineageGraph, build_graph, mart_coverage

LINK_MARKER = "<!-- floe:lineage-link -->"
LINK_HTML = (
    LINK_MARKER + '<a id="floe-lineage-link" href="lineage.html" style="position:fixed;right:96px;'
    "bottom:26px;z-index:10000;background:#0b6bcb;color:#fff;padding:8px 14px;"
    "border-radius:18px;font:600 14px system-ui,sans-serif;text-decoration:none;"
    'box-shadow:0 2px 6px rgba(0,0,0,.25)">Column lineage</a>'
    "<script>(function(){var a=document.getElementById('floe-lineage-link');"
    "function follow(){var m=location.hash.match(/^#!\\/(model|source|seed|snapshot)\\/([^?/]+)/);"
    "a.href='lineage.html'+(m?'#'+decodeURIComponent(m[2]):'');}"
    "window.addEventListener('hashchange',follow);follow();})();</script>"
)


class DocsSiteError(RuntimeError):
    """The docs site cannot be built; the message says what is missing."""


@dataclass
class SiteReport:
    target: Path
    raw_models_documented: int
    lineage_nodes: int
    lineage_edges: int
    mart_columns_complete: int
    mart_columns: int


def inject_raw_docs(manifest: dict[str, Any], project_dir: Path) -> int:
    """Raw feed models' descriptions and column docs into ``manifest`` (in place).

    YAML written for a raw model wins; the feed fills what is blank. Returns how many
    models were documented.
    """
    from floe.docsite.coverage import _feed_docs

    count = 0
    for uid, (description, columns) in _feed_docs(manifest, project_dir).items():
        node = manifest["nodes"][uid]
        if not str(node.get("description") or "").strip():
            node["description"] = description
        existing = node.setdefault("columns", {})
        lower = {name.lower(): name for name in existing}
        for name, text in columns.items():
            entry = existing.get(lower.get(name.lower(), name))
            if entry is None:
                existing[name] = {
                    "name": name,
                    "description": text,
                    "meta": {},
                    "data_type": None,
                    "constraints": [],
                    "quote": None,
                    "tags": [],
                }
            elif not str(entry.get("description") or "").strip():
                entry["description"] = text
        count += 1
    return count


def link_lineage(index_html: str) -> str:
    """dbt's ``index.html`` with the "Column lineage" button (idempotent)."""
    if LINK_MARKER in index_html:
        return index_html
    if "</body>" not in index_html:
        raise DocsSiteError("target/index.html has no </body>: is it dbt's docs page?")
    return index_html.replace("</body>", LINK_HTML + "</body>", 1)


def lineage_page() -> str:
    return resources.files("floe.docsite").joinpath("lineage.html").read_text(encoding="utf-8")


def finish_site(target: Path, project_dir: Path, env: dict[str, Any] | None = None) -> SiteReport:
    """Raw docs, ``lineage.json``, ``lineage.html`` and the link, after ``dbt docs generate``.

    ``env`` (:meth:`floe.envs.placement.EnvPlacement.to_json`): the site is shown for that
    environment; the lineage page marks each table as read on its branch or from main.
    """
    manifest_path = target / "manifest.json"
    index_path = target / "index.html"
    for path in (manifest_path, index_path):
        if not path.exists():
            raise DocsSiteError(f"{path} does not exist: run `dbt docs generate` first")
    manifest = json.loads(manifest_path.read_text())
    documented = inject_raw_docs(manifest, project_dir)
    manifest_path.write_text(json.dumps(manifest))
    catalog_path = target / "catalog.json"
    catalog = json.loads(catalog_path.read_text()) if catalog_path.exists() else None
    graph: LineageGraph = build_graph(manifest, catalog, project_dir)
    graph.env = env
    graph.write(target / "lineage.json")
    (target / "lineage.html").write_text(lineage_page(), encoding="utf-8")
    index_path.write_text(link_lineage(index_path.read_text(encoding="utf-8")), encoding="utf-8")
    complete, total, _ = mart_coverage(graph)
    return SiteReport(target, documented, len(graph.nodes), len(graph.edges), complete, total)


def generate(project_dir: Path, target: Path | None = None) -> Path:
    """``dbt docs generate`` in this process (sharing its SparkSession); the target folder."""
    from floe.dbt_runner import run_dbt

    target = target or project_dir / "target"
    run = run_dbt(["docs", "generate"], project=project_dir, target_path=target, quiet=True)
    if not run.success:
        detail = "; ".join(run.failures) or str(run.exception or "see dbt's log")
        raise DocsSiteError(f"dbt docs generate failed: {detail}")
    return target


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def serve(
    target: Path, host: str = "127.0.0.1", port: int = 8080
) -> http.server.ThreadingHTTPServer:
    """An HTTP server for ``target`` on ``host:port`` (port 0: any free port), started in a
    daemon thread; ``server.shutdown()`` stops it."""
    if not (target / "index.html").exists():
        raise DocsSiteError(f"{target / 'index.html'} does not exist: run `floe docs` first")
    handler = functools.partial(_QuietHandler, directory=str(target))
    server = http.server.ThreadingHTTPServer((host, port), handler)
    threading.Thread(target=server.serve_forever, name="floe-docs", daemon=True).start()
    return server

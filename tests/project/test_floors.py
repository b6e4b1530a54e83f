"""The rooms' floors (docs/runtime.md, "Floors"): no import circle, no upward import.

`lint-imports` (import-linter, configured in pyproject.toml) runs in `make lint`; these
tests prove it passes on the tree, fails on a deliberate upward import hidden in a
function, and that no modules import each other in a circle (function-local imports
counted, as grimp counts them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[2]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with pyproject.toml's contracts on the package under ``tree/src``."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    return subprocess.run(
        [str(LINT_IMPORTS), "--config", str(ROOT / "pyproject.toml"), "--no-cache"],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _copy_package(tmp_path: Path) -> Path:
    shutil.copytree(
        ROOT / "src" / "floe",
        tmp_path / "src" / "floe",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    return tmp_path


def test_the_floors_hold_on_the_tree(tmp_path):
    result = _lint_imports(_copy_package(tmp_path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 kept, 0 broken" in result.stdout


def test_an_upward_import_inside_a_function_breaks_the_floors(tmp_path):
    tree = _copy_package(tmp_path)
    settings = tree / "src" / "floe" / "runtime" / "settings.py"
    # The ground floor reaching up to the feeds, hidden in a function as the old
    # circles were: grimp sees it all the same.
    settings.write_text(
        settings.read_text()
        + "\n\ndef _upward() -> object:\n"
        + "    from floe.feeds.declarations import Feed\n\n"
        + "    return Feed\n"
    )
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert "BROKEN" in result.stdout
    assert "floe.runtime.settings -> floe.feeds.declarations" in result.stdout


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one node: the import circles."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return circles


def test_no_import_circles_between_modules_or_rooms():
    sys.path.insert(0, str(ROOT / "src"))
    try:
        graph = grimp.build_graph("floe", cache_dir=None)
    finally:
        sys.path.remove(str(ROOT / "src"))
    modules = {m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}
    assert _strongly_connected(modules) == []

    def room(module: str) -> str:
        return ".".join(module.split(".")[:2])

    rooms: dict[str, set[str]] = {room(m): set() for m in modules}
    for module, imported in modules.items():
        rooms[room(module)] |= {room(i) for i in imported} - {room(module)}
    assert _strongly_connected(rooms) == []


def test_the_ground_floor_knows_no_room_above_it():
    sys.path.insert(0, str(ROOT / "src"))
    try:
        graph = grimp.build_graph("floe", cache_dir=None)
    finally:
        sys.path.remove(str(ROOT / "src"))
    upward = {
        (m, i)
        for m in graph.modules
        if m.startswith("floe.runtime")
        for i in graph.find_modules_directly_imported_by(m)
        if not i.startswith("floe.runtime")
    }
    assert upward == set()

"""`floe dev watch`: rebuild a model and its tests in the warm session when it is saved.

The watcher polls the project's model, snapshot and seed folders (no inotify
dependency; a scan of a few hundred files costs well under a millisecond of each
interval) and, once a changed file has stayed unchanged for one interval (an editor's
save is one write, or a truncate and a write), runs ``dbt build -s <models>`` in the warm
session: the model a ``.sql``/``.py`` file defines, the models, snapshots and seeds a
YAML file describes. dbt's own output is printed, then one result line. A command that
fails (a syntax error, a failing test) prints dbt's error and the loop goes on.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TextIO

import yaml

from floe.dev.client import Refused, ServerGone, run_in_server
from floe.dev.protocol import EXIT_OK, DevServerError, read_server_info
from floe.runtime.settings import Settings, child_environment

WATCHED_SUFFIXES = (".sql", ".py", ".yml", ".yaml", ".csv")
# Project keys naming the folders that hold buildable resources.
PATH_KEYS = ("model-paths", "snapshot-paths", "seed-paths")
DEFAULT_PATHS = {
    "model-paths": ["models"],
    "snapshot-paths": ["snapshots"],
    "seed-paths": ["seeds"],
}
# YAML sections whose entries are built by name.
BUILDABLE_SECTIONS = ("models", "snapshots", "seeds")

Stamp = tuple[float, int]


def watched_dirs(project: Path) -> list[Path]:
    """The folders of the project's models, snapshots and seeds (dbt_project.yml)."""
    config = yaml.safe_load((project / "dbt_project.yml").read_text()) or {}
    dirs = []
    for key in PATH_KEYS:
        for name in config.get(key) or DEFAULT_PATHS[key]:
            path = project / name
            if path.is_dir():
                dirs.append(path)
    return dirs


def scan(dirs: Iterable[Path]) -> dict[Path, Stamp]:
    """Every watched file under ``dirs`` with its modification time and size."""
    found: dict[Path, Stamp] = {}
    for root in dirs:
        for path in root.rglob("*"):
            if path.suffix in WATCHED_SUFFIXES and path.is_file():
                try:
                    stat = path.stat()
                except OSError:
                    continue
                found[path] = (stat.st_mtime, stat.st_size)
    return found


def selection_for(path: Path, project: Path) -> list[str]:
    """dbt selectors that rebuild what ``path`` defines (its tests come with ``build``)."""
    if path.suffix in (".sql", ".py", ".csv"):
        return [path.stem]
    try:
        document = yaml.safe_load(path.read_text()) or {}
    except (OSError, yaml.YAMLError):
        document = None
    names: list[str] = []
    if isinstance(document, dict):
        for section in BUILDABLE_SECTIONS:
            for entry in document.get(section) or []:
                if isinstance(entry, dict) and isinstance(entry.get("name"), str):
                    names.append(entry["name"])
        for source in document.get("sources") or []:
            if isinstance(source, dict) and isinstance(source.get("name"), str):
                names.append(f"source:{source['name']}+1")
    if names:
        return names
    # Unreadable or describing nothing buildable: build the file's folder, so dbt parses
    # the project and reports what is wrong with the file.
    return [f"path:{path.parent.relative_to(project).as_posix()}"]


def changed(before: dict[Path, Stamp], after: dict[Path, Stamp]) -> list[Path]:
    """Files added or modified between two scans (deletions rebuild nothing)."""
    return sorted(path for path, stamp in after.items() if before.get(path) != stamp)


def watch_project(
    settings: Settings,
    *,
    project: Path | None = None,
    interval: float = 0.3,
    out: TextIO | None = None,
    should_stop: Callable[[], bool] = lambda: False,
    env: Mapping[str, str] | None = None,
) -> None:
    """Watch ``project`` (default: the floe project) until ``should_stop()`` or Ctrl-C.

    Commands run with ``env`` (default: this process's environment) as a typed
    ``dbt`` command would.
    """
    out = out or sys.stdout
    root = (project or settings.dbt_project_dir()).resolve()
    dirs = watched_dirs(root)
    if read_server_info(settings) is None:
        raise DevServerError(
            f"no warm session for {settings.home}: start one with `floe dev` (or "
            "`floe dev --detach`), then `floe dev watch`"
        )
    known = scan(dirs)
    shown = ", ".join(str(d.relative_to(root)) for d in dirs)
    print(f"floe dev watch: watching {shown} in {root} (Ctrl-C stops)", file=out, flush=True)
    pending: dict[Path, Stamp] = {}
    try:
        while not should_stop():
            time.sleep(interval)
            now = scan(dirs)
            fresh = changed(known, now)
            for path in fresh:
                pending[path] = now[path]
            known = now
            # Build once the saved files have stayed as they are for one interval.
            if not pending or fresh:
                continue
            ready = sorted(pending)
            pending.clear()
            selectors: list[str] = []
            for path in ready:
                for selector in selection_for(path, root):
                    if selector not in selectors:
                        selectors.append(selector)
            rebuild(settings, root, selectors, out, env=env)
    except KeyboardInterrupt:
        print("floe dev watch: stopped", file=out, flush=True)


def rebuild(
    settings: Settings,
    project: Path,
    selectors: list[str],
    out: TextIO,
    env: Mapping[str, str] | None = None,
) -> int:
    """``dbt build -s <selectors>`` in the warm session; its exit code, and a result line."""
    argv = ["build", "-s", *selectors, "--project-dir", str(project)]
    print(f"floe dev watch: dbt {' '.join(argv[: 2 + len(selectors)])}", file=out, flush=True)
    started = time.perf_counter()
    info = read_server_info(settings)
    code: int
    if info is None:
        print("floe dev watch: the warm session is gone; start `floe dev` again", file=out)
        return 2
    try:
        code = run_in_server(
            info,
            argv,
            cwd=str(project),
            env=child_environment({}) if env is None else env,
            out=out,
            err=out,
        )
    except (Refused, ServerGone) as exc:
        print(f"floe dev watch: not run: {exc}", file=out, flush=True)
        return 2
    verdict = "OK" if code == EXIT_OK else f"FAILED (exit {code})"
    seconds = time.perf_counter() - started
    print(f"floe dev watch: {verdict} in {seconds:.1f} s", file=out, flush=True)
    return code

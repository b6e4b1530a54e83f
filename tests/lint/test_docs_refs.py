"""lint/docs_refs.py: README.md and docs/ name only paths and floe commands that exist."""

from __future__ import annotations

from pathlib import Path

from floe.cli import main as cli
from lint.docs_refs import main, problems

ROOT = Path(__file__).resolve().parents[2]

BAD = """# A project

See `src/floe/cli.py` and `src/floe/gone.py`, [the feeds](docs/feeds.md) and
[nothing](docs/nothing.md#part). Templates pass: `schemas/<registry>/<schema>/`,
`floe <command> --help`, `models/*.sql`, `floe lineage dim_customer.email_id`.
`floe forget --subject customer_id=1 --dry-run` exists; `floe privacy forget` does not,
nor `floe erase`, nor `floe maintain --everything`.

```sh
floe build --select x        # fine
eval "$(floe cluster env)"   # fine
floe cluster restart         # no such subcommand
```
"""


def _repo(tmp_path: Path, readme: str) -> Path:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "feeds.md").write_text("Back to [the README](../README.md).\n")
    (tmp_path / "src" / "floe").mkdir(parents=True)
    (tmp_path / "src" / "floe" / "cli.py").write_text("")
    (tmp_path / "README.md").write_text(readme)
    return tmp_path


def test_the_repository_names_only_what_exists():
    assert [str(p) for p in problems(ROOT, cli)] == []


def test_missing_paths_links_commands_and_options_are_named_by_line(tmp_path, capsys):
    root = _repo(tmp_path, BAD)
    found = [(str(p.file), p.line, p.message) for p in problems(root, cli)]
    assert found == [
        ("README.md", 3, "`src/floe/gone.py`: no such file or folder in the repository"),
        ("README.md", 4, "link (docs/nothing.md#part): no such file"),
        ("README.md", 6, "`floe privacy forget`: no such floe command"),
        ("README.md", 7, "`floe erase`: no such floe command"),
        ("README.md", 7, "`floe maintain` has no option --everything"),
        ("README.md", 12, "`floe cluster restart`: no such floe command"),
    ]
    assert main([str(root)]) == 1
    assert "README.md:3:" in capsys.readouterr().err


def test_a_clean_tree_passes(tmp_path):
    root = _repo(tmp_path, "See `src/floe/cli.py` and `floe build --full-refresh`.\n")
    assert main([str(root)]) == 0

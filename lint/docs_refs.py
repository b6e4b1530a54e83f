"""`make lint`: README.md and docs/**/*.md name only paths and `floe` commands that exist.

Text drifts when code moves: a doc that cites a moved file or a renamed command
misleads the next reader. This check reads the Markdown and fails, naming file and
line, on

- a repository path in backticks (`src/floe/x.py`, `models/...`, `docs/...`,
  `Makefile`, ...) or a relative Markdown link whose target does not exist;
- a `floe ...` command (in backticks, or a line of a fenced code block) whose command,
  subcommand or `--option` the click CLI (`floe.cli.main`) does not have.

Spans with globs or placeholders (`<name>`, `*`, `…`, `{...}`, `$VAR`) are skipped
from that token on, so a template such as `floe <command> --help` or
`schemas/<registry>/<schema>/` passes. Usage: `python lint/docs_refs.py [ROOT]`.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import click

# Where repository paths start; a backticked span starting otherwise is not a path.
PATH_ROOTS = (
    "src/",
    "models/",
    "python_models/",
    "macros/",
    "docs/",
    "tests/",
    "bench/",
    "lint/",
    "schemas/",
    "profiles/",
    "seeds/",
    "snapshots/",
    ".github/",
)
TOP_FILES = {
    "Makefile",
    "README.md",
    "dbt_project.yml",
    "pyproject.toml",
    "requirements.lock",
    ".sqlfluff",
    ".pre-commit-config.yaml",
}
PLACEHOLDER = re.compile(r"[<>*…{}$\[\]]|\.\.\.")
CODE_SPAN = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Problem:
    file: Path
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.message}"


def markdown_files(root: Path) -> list[Path]:
    files = [root / "README.md"] if (root / "README.md").is_file() else []
    return files + sorted((root / "docs").rglob("*.md"))


def _is_path(span: str) -> bool:
    return span in TOP_FILES or span.startswith(
        tuple(PATH_ROOTS + tuple(f"./{r}" for r in PATH_ROOTS))
    )


def check_path(span: str, root: Path, here: Path) -> str | None:
    """A problem with a backticked span that names a repository path, or None."""
    if " " in span or not _is_path(span) or PLACEHOLDER.search(span):
        return None
    path = span.split("::", 1)[0]
    path = re.sub(r":\d+(-\d+)?$", "", path).removeprefix("./").rstrip("/")
    if (root / path).exists() or (here / path).exists():
        return None
    return f"`{span}`: no such file or folder in the repository"


def check_link(target: str, root: Path, here: Path) -> str | None:
    """A problem with a relative Markdown link, or None."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target) or target.startswith("#"):
        return None
    path = target.split("#", 1)[0]
    if not path or PLACEHOLDER.search(path):
        return None
    base = root if path.startswith("/") else here
    if (base / path.lstrip("/")).exists():
        return None
    return f"link ({target}): no such file"


def _tokens(text: str) -> list[str]:
    try:
        return shlex.split(text, comments=True)
    except ValueError:  # an unbalanced quote in prose: words are enough
        return text.split("#", 1)[0].split()


def check_command(text: str, cli: click.Group) -> str | None:
    """A problem with ``floe ...`` (its command words and long options), or None."""
    tokens = _tokens(text)
    if not tokens or tokens[0] != "floe":
        return None
    command: click.Command = cli
    ctx = click.Context(cli, info_name="floe")
    options = {"--help"} | {o for p in cli.params for o in p.opts}
    args = tokens[1:]
    words = ["floe"]
    while isinstance(command, click.Group) and args and not args[0].startswith("-"):
        if PLACEHOLDER.search(args[0]) or args[0].endswith(":"):
            return None  # a placeholder, or a line floe prints ("floe dev watch: OK")
        try:
            name, sub, args = command.resolve_command(ctx, args)
        except click.UsageError:
            return f"`{' '.join([*words, args[0]])}`: no such floe command"
        if sub is None:
            return f"`{' '.join([*words, args[0]])}`: no such floe command"
        command = sub
        words.append(name or "")
        options |= {o for p in command.params for o in p.opts}
        ctx = click.Context(command, info_name=name, parent=ctx)
    for token in args:
        if PLACEHOLDER.search(token):
            break
        option = token.split("=", 1)[0]
        if option.startswith("--") and option not in options:
            return f"`{' '.join(words)}` has no option {option}"
    return None


def _commands_in_code_line(line: str) -> Iterator[str]:
    line = re.sub(r"^\s*\$\s+", "", line)
    for part in re.split(r"\$\(|;|&&|\|\||\|", line):
        part = part.split(")", 1)[0].strip().strip("\"'")
        if part.startswith("floe ") or part == "floe":
            yield part


def problems(root: Path, cli: click.Group) -> list[Problem]:
    found: list[Problem] = []
    for file in markdown_files(root):
        here = file.parent
        fenced = False
        for number, line in enumerate(file.read_text().splitlines(), 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            messages: list[str | None] = []
            if fenced:
                messages += [check_command(c, cli) for c in _commands_in_code_line(line)]
            else:
                for span in CODE_SPAN.findall(line):
                    if span.startswith("floe ") or span == "floe":
                        messages.append(check_command(span, cli))
                    else:
                        messages.append(check_path(span, root, here))
                messages += [check_link(t, root, here) for t in LINK.findall(line)]
            rel = file.relative_to(root)
            found += [Problem(rel, number, m) for m in messages if m]
    return found


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0] if args else Path(__file__).resolve().parents[1]).resolve()
    from floe.cli import main as cli

    found = problems(root, cli)
    for problem in found:
        print(problem, file=sys.stderr)
    if found:
        print(
            f"{len(found)} reference(s) in README.md / docs/ to paths or floe commands that "
            "do not exist: fix the text (or the code)",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

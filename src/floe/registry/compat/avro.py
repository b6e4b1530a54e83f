"""Avro schema resolution: can a reader with schema R read data written with schema W?

The Avro specification's resolution rules, one violation per rule broken (the rules
and their names are in ``docs/registry.md``): record fields matched by name or reader
alias, reader fields missing in the writer need a default, promotions
int→long→float→double and string↔bytes, enum symbols with the reader's enum default,
unions branch by branch, arrays, maps, fixed size, named types matched by unqualified
name or alias. Logical types resolve as their underlying type, as in the spec.
Named types are resolved by :class:`floe.registry.definitions.AvroNames`.
"""

from __future__ import annotations

from typing import Any

from floe.registry.compat.violations import Violation, join_path
from floe.registry.definitions import AVRO_NAMED, AvroNames

PROMOTIONS = {  # writer type -> reader types it promotes to
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}


def reader_violations(reader: Any, writer: Any) -> list[Violation]:
    """Why a consumer using Avro schema ``reader`` cannot read data written with ``writer``."""
    return _AvroResolver(reader, writer).check()


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _label(schema: Any) -> str:
    if isinstance(schema, list):
        return "union[" + ", ".join(_label(b) for b in schema) + "]"
    if isinstance(schema, str):
        return schema
    kind = schema.get("type")
    if kind in AVRO_NAMED:
        return f"{kind} {schema.get('name')}"
    if isinstance(kind, dict | list):
        return _label(kind)
    return str(kind)


class _AvroResolver:
    def __init__(self, reader: Any, writer: Any) -> None:
        self.r = AvroNames(reader)
        self.w = AvroNames(writer)
        # Pairs being compared right now (a recursion stack, not a memo: a memo would
        # hide a second, differently-reported occurrence of the same pair).
        self.active: set[tuple[int, int]] = set()

    def check(self) -> list[Violation]:
        out: list[Violation] = []
        try:
            self._read(self.r.root, None, self.w.root, None, "", out)
        except ValueError as exc:
            out.append(Violation("", "invalid_schema", str(exc)))
        return out

    def _compatible(self, r: Any, rns: str | None, w: Any, wns: str | None, path: str) -> bool:
        trial: list[Violation] = []
        self._read(r, rns, w, wns, path, trial)
        return not trial

    def _read(
        self, r: Any, rns: str | None, w: Any, wns: str | None, path: str, out: list[Violation]
    ) -> None:
        r, rns = self.r.resolve(r, rns)
        w, wns = self.w.resolve(w, wns)
        if isinstance(w, list):
            self._read_writer_union(r, rns, w, wns, path, out)
            return
        if isinstance(r, list):
            if not any(self._compatible(rb, rns, w, wns, path) for rb in r):
                out.append(
                    Violation(
                        path,
                        "type_mismatch",
                        f"no branch of the reader's {_label(r)} can read the writer's {_label(w)}",
                    )
                )
            return
        rt, wt = r["type"], w["type"]
        rt = "record" if rt == "error" else rt
        wt = "record" if wt == "error" else wt
        if rt != wt:
            if rt not in PROMOTIONS.get(wt, ()):
                out.append(
                    Violation(
                        path,
                        "type_mismatch",
                        f"writer's {_label(w)} cannot be read as {_label(r)} "
                        "(allowed promotions: int→long→float→double, string↔bytes)",
                    )
                )
            return
        if rt in AVRO_NAMED and not self._names_match(r, w, path, out):
            return
        if rt == "record":
            key = (id(r), id(w))
            if key in self.active:  # recursive type: assume compatible on re-entry
                return
            self.active.add(key)
            try:
                self._read_record(r, rns, w, wns, path, out)
            finally:
                self.active.discard(key)
        elif rt == "enum":
            symbols = set(r.get("symbols", []))
            missing = [s for s in w.get("symbols", []) if s not in symbols]
            if missing and "default" not in r:
                out.append(
                    Violation(
                        path,
                        "enum_symbol_removed",
                        f"writer symbols {missing} are not in the reader's enum "
                        f"{r.get('name')} and it has no enum default",
                    )
                )
        elif rt == "fixed":
            if r.get("size") != w.get("size"):
                out.append(
                    Violation(
                        path,
                        "fixed_size_mismatch",
                        f"fixed {r.get('name')} is {r.get('size')} bytes for the reader, "
                        f"{w.get('size')} for the writer",
                    )
                )
        elif rt == "array":
            self._read(r["items"], rns, w["items"], wns, f"{path}[]", out)
        elif rt == "map":
            self._read(r["values"], rns, w["values"], wns, f"{path}{{}}", out)

    def _read_writer_union(
        self,
        r: Any,
        rns: str | None,
        w: list[Any],
        wns: str | None,
        path: str,
        out: list[Violation],
    ) -> None:
        """Every branch the writer may have used must be readable."""
        for branch in w:
            if isinstance(r, list):
                if not any(self._compatible(rb, rns, branch, wns, path) for rb in r):
                    out.append(
                        Violation(
                            path,
                            "union_branch_unreadable",
                            f"writer union branch {_label(branch)} matches no branch "
                            f"of the reader's {_label(r)}",
                        )
                    )
                continue
            trial: list[Violation] = []
            self._read(r, rns, branch, wns, path, trial)
            if any(v.path == path and v.rule == "type_mismatch" for v in trial):
                out.append(
                    Violation(
                        path,
                        "union_branch_unreadable",
                        f"writer union branch {_label(branch)} cannot be read "
                        f"as {_label(r)} (e.g. a nullable field made required)",
                    )
                )
            else:
                out.extend(trial)

    @staticmethod
    def _names_match(r: dict[str, Any], w: dict[str, Any], path: str, out: list[Violation]) -> bool:
        wname = _short(w.get("name", ""))
        accepted = {_short(r.get("name", ""))} | {_short(a) for a in r.get("aliases", [])}
        if wname in accepted:
            return True
        out.append(
            Violation(
                path,
                "name_mismatch",
                f"writer's {w['type']} {w.get('name')!r} does not match the reader's "
                f"{r.get('name')!r} or its aliases",
            )
        )
        return False

    def _read_record(
        self,
        r: dict[str, Any],
        rns: str | None,
        w: dict[str, Any],
        wns: str | None,
        path: str,
        out: list[Violation],
    ) -> None:
        writer_fields = {f["name"]: f for f in w.get("fields", [])}
        for rf in r.get("fields", []):
            fpath = join_path(path, rf["name"])
            wf = writer_fields.get(rf["name"])
            if wf is None:
                wf = next(
                    (writer_fields[a] for a in rf.get("aliases", []) if a in writer_fields), None
                )
            if wf is None:
                if "default" not in rf:
                    out.append(
                        Violation(
                            fpath,
                            "missing_default",
                            "reader field is absent from the writer's data and has no default "
                            "(add a default, or make it ['null', ...] with default null)",
                        )
                    )
                continue
            self._read(rf["type"], rns, wf["type"], wns, fpath, out)

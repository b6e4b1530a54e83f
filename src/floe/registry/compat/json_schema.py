"""JSON Schema compatibility: is every instance valid under W also valid under R?

Proved structurally, keyword by keyword (the rules and their names are in
``docs/registry.md``): ``type`` with integer⊂number, ``properties`` / ``required`` /
``additionalProperties``, ``enum`` / ``const``, ``items``, numeric and length bounds,
local ``$ref`` (resolved by :class:`floe.registry.definitions.JsonRefs`), ``anyOf`` /
``oneOf`` / ``allOf``. A keyword the prover cannot reason about is only accepted
unchanged: the checker errs on the side of rejecting.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from floe.registry.compat.violations import Violation, join_path
from floe.registry.definitions import JsonRefs, SchemaReferenceError


def reader_violations(reader: Any, writer: Any) -> list[Violation]:
    """Why data valid under JSON Schema ``writer`` may be invalid under ``reader``."""
    return _JsonSubschema(reader, writer).check()


_ANNOTATIONS = {
    "title",
    "description",
    "$comment",
    "examples",
    "default",
    "$id",
    "id",
    "$schema",
    "readOnly",
    "writeOnly",
    "definitions",
    "$defs",
    "contentMediaType",
    "contentEncoding",
    "deprecated",
}
_JSON_TYPES = {"null", "boolean", "object", "array", "number", "integer", "string"}
# Keywords the structural proof below understands; anything else must stay unchanged.
_HANDLED = {
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "minProperties",
    "maxProperties",
    "items",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "anyOf",
    "oneOf",
    "allOf",
    "$ref",
}


def _types(schema: Mapping[str, Any]) -> set[str]:
    kind = schema.get("type")
    if kind is None:
        return set(_JSON_TYPES)
    kinds = {kind} if isinstance(kind, str) else set(kind)
    if "number" in kinds:
        kinds.add("integer")
    return kinds


def _constraints(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: v for k, v in schema.items() if k not in _ANNOTATIONS}
    return schema


class _JsonSubschema:
    """Proves "every instance valid under the writer is valid under the reader"."""

    def __init__(self, reader: Any, writer: Any) -> None:
        self.r_root = reader
        self.w_root = writer
        self.r_refs = JsonRefs(reader)
        self.w_refs = JsonRefs(writer)
        # Pairs on the current recursion stack (cycles only come through $ref). Objects on
        # the stack are alive, so their ids cannot be reused by temporaries.
        self.active: set[tuple[int, int]] = set()

    def check(self) -> list[Violation]:
        out: list[Violation] = []
        self._sub(self.w_root, self.r_root, "", out)
        return out

    def _sub(self, w: Any, r: Any, path: str, out: list[Violation]) -> None:
        try:
            w, _ = self.w_refs.resolve(w)
            r, _ = self.r_refs.resolve(r)
        except SchemaReferenceError as exc:
            # An unresolvable reference is only accepted where nothing changed.
            if _constraints(w) != _constraints(r):
                out.append(Violation(path, "unresolvable_ref", str(exc)))
            return
        key = (id(w), id(r))
        if key in self.active:
            return
        self.active.add(key)
        try:
            self._sub_resolved(w, r, path, out)
        finally:
            self.active.discard(key)

    def _sub_resolved(self, w: Any, r: Any, path: str, out: list[Violation]) -> None:
        w, r = _constraints(w), _constraints(r)
        if r is True or r == {} or w is False:
            return
        if r is False:
            out.append(Violation(path, "schema_closed", "reader accepts no value here"))
            return
        if w is True:
            w = {}
        if "enum" in w or "const" in w:
            self._finite_writer(w, r, path, out)
            return
        if "allOf" in w:
            w = _merge_all_of(w)
        if "allOf" in r:
            for member in r["allOf"]:
                self._sub(w, member, path, out)
            r = {k: v for k, v in r.items() if k != "allOf"}
        for keyword in ("anyOf", "oneOf"):
            if keyword in w:
                base = {k: v for k, v in w.items() if k != keyword}
                for branch in w[keyword]:
                    self._sub(_merge(base, branch), r, path, out)
                return
        kinds = w.get("type")
        if isinstance(kinds, list) and len(kinds) > 1 and ("anyOf" in r or "oneOf" in r):
            # A multi-type writer is the union of its single-type forms: each may match a
            # different reader branch.
            for kind in kinds:
                self._sub({**w, "type": kind}, r, path, out)
            return
        for keyword in ("anyOf", "oneOf"):
            if keyword in r:
                base = {k: v for k, v in r.items() if k != keyword}
                branches = [_merge(base, b) for b in r[keyword]]
                if not any(self._proves(w, b, path) for b in branches):
                    out.append(
                        Violation(
                            path,
                            "no_matching_branch",
                            f"writer's values fit no single branch of the reader's {keyword}",
                        )
                    )
                return
        if "enum" in r or "const" in r:
            allowed = r.get("enum", [r.get("const")])
            out.append(
                Violation(
                    path,
                    "enum_added",
                    f"reader only accepts {allowed}; the writer allows any value of its type",
                )
            )
            return
        self._typed(w, r, path, out)

    def _proves(self, w: Any, r: Any, path: str) -> bool:
        trial: list[Violation] = []
        self._sub(w, r, path, trial)
        return not trial

    def _finite_writer(self, w: dict[str, Any], r: Any, path: str, out: list[Violation]) -> None:
        """A writer with enum/const has finitely many values: validate each one."""
        import jsonschema

        values = w["enum"] if "enum" in w else [w["const"]]
        rschema = r if not isinstance(r, dict) else dict(r)
        if isinstance(rschema, dict) and isinstance(self.r_root, dict):
            for k in ("definitions", "$defs"):
                if k in self.r_root and k not in rschema:
                    rschema[k] = self.r_root[k]
        wcheck = jsonschema.validators.validator_for({})({k: v for k, v in w.items()})
        rcheck = jsonschema.validators.validator_for({})(rschema)
        rejected = [v for v in values if wcheck.is_valid(v) and not rcheck.is_valid(v)]
        if rejected:
            out.append(
                Violation(
                    path,
                    "enum_value_removed",
                    f"writer values {rejected} are not valid for the reader",
                )
            )

    def _typed(self, w: dict[str, Any], r: dict[str, Any], path: str, out: list[Violation]) -> None:
        wtypes, rtypes = _types(w), _types(r)
        lost = sorted(wtypes - rtypes)
        if lost:
            if "type" not in w:
                detail = f"writer accepts any type; reader type is {r.get('type')!r}"
            else:
                detail = f"writer allows {lost}, reader type is {r.get('type')!r}"
                if lost == ["number"] and "integer" in rtypes:
                    detail += " (number→integer narrows; integer→number is the safe widening)"
            out.append(Violation(path, "type_changed", detail))
        live = wtypes & rtypes
        if "object" in live:
            self._object(w, r, path, out)
        if "array" in live:
            self._array(w, r, path, out)
        if "string" in live:
            self._string(w, r, path, out)
        if live & {"number", "integer"}:
            self._number(w, r, path, out)
        for keyword in sorted(set(r) - _HANDLED):
            if r.get(keyword) != w.get(keyword):
                out.append(
                    Violation(
                        path,
                        "unsupported_change",
                        f"reader keyword {keyword!r} differs from the writer's and floe's "
                        "checker cannot prove it compatible",
                    )
                )

    def _object(
        self, w: dict[str, Any], r: dict[str, Any], path: str, out: list[Violation]
    ) -> None:
        w_props: dict[str, Any] = w.get("properties", {})
        r_props: dict[str, Any] = r.get("properties", {})
        w_req, r_req = set(w.get("required", [])), set(r.get("required", []))
        w_add = w.get("additionalProperties", True)
        r_add = r.get("additionalProperties", True)
        for name in sorted(r_req - w_req):
            out.append(
                Violation(
                    join_path(path, name),
                    "required_added",
                    f"reader requires {name!r} but data valid for the writer may omit it "
                    "(add it as an optional property instead)",
                )
            )
        for name, rs in r_props.items():
            if name in w_props:
                ws = w_props[name]
            elif w_add is False:
                continue  # the writer never produces this property
            else:
                ws = w_add
            self._sub(ws, rs, join_path(path, name), out)
        for name, ws in w_props.items():
            if name in r_props or ws is False:
                continue
            if r_add is False:
                out.append(
                    Violation(
                        join_path(path, name),
                        "additional_properties_closed",
                        f"writer allows property {name!r}; the reader does not declare it "
                        "and has additionalProperties: false",
                    )
                )
            elif r_add is not True and r_add != {}:
                self._sub(ws, r_add, join_path(path, name), out)
        if w_add is not False:
            if r_add is False:
                out.append(
                    Violation(
                        path,
                        "content_model_closed",
                        "writer's content model is open (extra properties allowed); the "
                        "reader closes it with additionalProperties: false",
                    )
                )
            elif r_add is not True and r_add != {}:
                self._sub(w_add, r_add, join_path(path, "*"), out)
        self._bounds(w, r, path, out, "minProperties", "maxProperties")

    def _array(self, w: dict[str, Any], r: dict[str, Any], path: str, out: list[Violation]) -> None:
        w_items, r_items = w.get("items", True), r.get("items", True)
        if isinstance(w_items, list) or isinstance(r_items, list):
            if _constraints(w_items) != _constraints(r_items):
                out.append(Violation(f"{path}[]", "unsupported_change", "tuple-form items changed"))
        else:
            self._sub(w_items, r_items, f"{path}[]", out)
        self._bounds(w, r, path, out, "minItems", "maxItems")
        if r.get("uniqueItems") and not w.get("uniqueItems"):
            out.append(Violation(path, "constraint_added", "reader requires uniqueItems"))

    def _string(
        self, w: dict[str, Any], r: dict[str, Any], path: str, out: list[Violation]
    ) -> None:
        self._bounds(w, r, path, out, "minLength", "maxLength")
        for keyword in ("pattern", "format"):
            if keyword in r and r[keyword] != w.get(keyword):
                out.append(
                    Violation(
                        path,
                        "constraint_added",
                        f"reader {keyword} {r[keyword]!r} differs from the writer's "
                        f"{w.get(keyword)!r}",
                    )
                )

    def _number(
        self, w: dict[str, Any], r: dict[str, Any], path: str, out: list[Violation]
    ) -> None:
        self._bounds(w, r, path, out, "minimum", "maximum")
        self._bounds(w, r, path, out, "exclusiveMinimum", "exclusiveMaximum")
        rm, wm = r.get("multipleOf"), w.get("multipleOf")
        if rm is not None and (wm is None or (wm / rm) != int(wm / rm)):
            out.append(Violation(path, "constraint_added", f"reader requires multipleOf {rm}"))

    @staticmethod
    def _bounds(
        w: dict[str, Any], r: dict[str, Any], path: str, out: list[Violation], low: str, high: str
    ) -> None:
        """Reader bounds must be at least as loose as the writer's (absent = unbounded)."""
        rl, wl = _num(r.get(low)), _num(w.get(low))
        if rl is not None and (wl is None or wl < rl):
            out.append(Violation(path, "range_narrowed", f"reader {low} {rl} > writer's {wl}"))
        rh, wh = _num(r.get(high)), _num(w.get(high))
        if rh is not None and (wh is None or wh > rh):
            out.append(Violation(path, "range_narrowed", f"reader {high} {rh} < writer's {wh}"))


def _num(value: Any) -> float | None:
    # draft-04 exclusiveMinimum is a boolean modifier, not a bound.
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value


def _merge(base: dict[str, Any], branch: Any) -> Any:
    if not isinstance(branch, dict):
        return branch if base == {} else base if branch is True else branch
    merged = dict(base)
    for key, value in branch.items():
        if key == "properties":
            merged["properties"] = {**base.get("properties", {}), **value}
        elif key == "required":
            merged["required"] = sorted(set(base.get("required", [])) | set(value))
        else:
            merged[key] = value
    return merged


def _merge_all_of(schema: dict[str, Any]) -> dict[str, Any]:
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for member in schema["allOf"]:
        merged = _merge(merged, member)
    return merged

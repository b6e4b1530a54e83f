"""Compatibility checker for the eight Glue Schema Registry modes (SPEC §4).

``moto`` stores schema versions without checking them, so floe enforces compatibility
itself, before anything is registered. The core question is always the same pair-wise
one: *can a reader using schema R read data written with schema W?*

* Avro: the specification's schema-resolution rules (record fields matched by name or
  reader alias, reader fields missing in the writer need a default, promotions
  int→long→float→double and string↔bytes, enum symbols with the reader's enum default,
  unions branch by branch, arrays, maps, fixed size, named types matched by unqualified
  name or alias). Logical types resolve as their underlying type, as in the spec.
* JSON Schema: every instance valid under W must be valid under R. Proved structurally
  (``type`` with integer⊂number, ``properties``/``required``/``additionalProperties``,
  ``enum``/``const``, ``items``, numeric and length bounds, local ``$ref``, ``anyOf`` /
  ``oneOf`` / ``allOf``). A keyword the checker cannot reason about is only accepted
  unchanged: the checker errs on the side of rejecting.

Modes map to pairs exactly as Glue documents them: BACKWARD — the new version reads the
previous version's data; FORWARD — the previous version reads the new version's data;
FULL — both; ``_ALL`` — against every earlier version instead of the latest; NONE — no
check; DISABLED — no new version at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any


class Mode(StrEnum):
    NONE = "NONE"
    DISABLED = "DISABLED"
    BACKWARD = "BACKWARD"
    BACKWARD_ALL = "BACKWARD_ALL"
    FORWARD = "FORWARD"
    FORWARD_ALL = "FORWARD_ALL"
    FULL = "FULL"
    FULL_ALL = "FULL_ALL"

    @classmethod
    def parse(cls, value: str | Mode) -> Mode:
        try:
            return cls(str(value.value if isinstance(value, Mode) else value).upper())
        except ValueError:
            names = ", ".join(m.value for m in cls)
            raise ValueError(f"unknown compatibility mode {value!r}; use one of {names}") from None


DATA_FORMATS = ("AVRO", "JSON")


@dataclass(frozen=True)
class Violation:
    """One reason a version is rejected: where (field path), which rule, and why.

    ``version``/``against``/``direction`` are filled in when the violation comes from a
    mode check (e.g. version 3 checked BACKWARD against version 2).
    """

    path: str
    rule: str
    detail: str
    version: int | None = None
    against: int | None = None
    direction: str | None = None

    def __str__(self) -> str:
        where = self.path or "<root>"
        prefix = ""
        if self.version is not None:
            prefix = f"v{self.version}"
            if self.against is not None:
                prefix += f" vs v{self.against}"
            if self.direction:
                prefix += f" ({self.direction})"
            prefix += ": "
        return f"{prefix}{where}: {self.rule}: {self.detail}"


class IncompatibleSchemaError(ValueError):
    """A new version breaks its schema's compatibility mode; ``violations`` say where."""

    code = "incompatible_schema"

    def __init__(self, schema: str, violations: Sequence[Violation]) -> None:
        self.schema = schema
        self.violations = list(violations)
        lines = "\n  ".join(str(v) for v in self.violations)
        super().__init__(f"schema {schema!r}: new version rejected:\n  {lines}")


# --------------------------------------------------------------------------- modes


def check_new_version(
    new: Any, previous: Sequence[Any], mode: str | Mode, data_format: str
) -> list[Violation]:
    """Violations of registering ``new`` after ``previous`` (oldest first) under ``mode``."""
    mode = Mode.parse(mode)
    fmt = _fmt(data_format)
    version = len(previous) + 1
    found = [replace(v, version=version) for v in validate_definition(new, fmt)]
    if found or not previous:
        return found
    if mode is Mode.NONE:
        return []
    if mode is Mode.DISABLED:
        return [
            Violation(
                "",
                "versioning_disabled",
                "compatibility DISABLED allows no version after the first",
                version=version,
            )
        ]
    if mode.value.endswith("_ALL"):
        targets = list(enumerate(previous, start=1))
    else:
        targets = [(len(previous), previous[-1])]
    base = mode.value.removesuffix("_ALL")
    for number, old in targets:
        if base in ("BACKWARD", "FULL"):
            for v in reader_violations(new, old, fmt):
                found.append(replace(v, version=version, against=number, direction="backward"))
        if base in ("FORWARD", "FULL"):
            for v in reader_violations(old, new, fmt):
                found.append(replace(v, version=version, against=number, direction="forward"))
    return found


def check_chain(definitions: Sequence[Any], mode: str | Mode, data_format: str) -> list[Violation]:
    """Check every version of a chain (oldest first) as if registered in order."""
    found: list[Violation] = []
    if definitions:
        found += [replace(v, version=1) for v in validate_definition(definitions[0], data_format)]
    for i in range(1, len(definitions)):
        found += check_new_version(definitions[i], definitions[:i], mode, data_format)
    return found


def reader_violations(reader: Any, writer: Any, data_format: str) -> list[Violation]:
    """Why a consumer using ``reader`` cannot read data produced with ``writer``."""
    fmt = _fmt(data_format)
    r, w = _load(reader), _load(writer)
    if fmt == "AVRO":
        return _AvroResolver(r, w).check()
    return _JsonSubschema(r, w).check()


def validate_definition(definition: Any, data_format: str) -> list[Violation]:
    """A definition that is not a valid schema of its format is a violation in itself."""
    fmt = _fmt(data_format)
    try:
        schema = _load(definition)
    except ValueError as exc:
        return [Violation("", "invalid_schema", f"not JSON: {exc}")]
    try:
        if fmt == "AVRO":
            import fastavro

            fastavro.parse_schema(schema, _write_hint=False)
        else:
            import jsonschema

            jsonschema.validators.validator_for(schema).check_schema(schema)
    except Exception as exc:
        return [Violation("", "invalid_schema", f"not a valid {fmt} schema: {exc}")]
    return []


def _fmt(data_format: str) -> str:
    fmt = data_format.upper()
    if fmt not in DATA_FORMATS:
        raise ValueError(f"data format {data_format!r} is not AVRO or JSON")
    return fmt


def _load(definition: Any) -> Any:
    if isinstance(definition, bytes | bytearray):
        definition = definition.decode()
    if isinstance(definition, str):
        stripped = definition.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("true", "false"):
            return json.loads(stripped)
        return stripped  # a bare Avro primitive name such as: string
    return definition


def _join(path: str, part: str) -> str:
    return f"{path}.{part}" if path else part


# --------------------------------------------------------------------------- Avro

_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_AVRO_PROMOTIONS = {  # writer type -> reader types it promotes to
    "int": {"long", "float", "double"},
    "long": {"float", "double"},
    "float": {"double"},
    "string": {"bytes"},
    "bytes": {"string"},
}
_NAMED = {"record", "error", "enum", "fixed"}


def _fullname(name: str, namespace: str | None) -> str:
    if "." in name or not namespace:
        return name
    return f"{namespace}.{name}"


def _short(name: str) -> str:
    return name.rsplit(".", 1)[-1]


def _collect_names(schema: Any, namespace: str | None, names: dict[str, tuple[dict, str | None]]):
    """Index named types by full name, remembering the namespace their children inherit."""
    if isinstance(schema, list):
        for branch in schema:
            _collect_names(branch, namespace, names)
    elif isinstance(schema, dict):
        kind = schema.get("type")
        if isinstance(kind, dict | list):
            _collect_names(kind, namespace, names)
            return
        if kind in _NAMED and "name" in schema:
            full = _fullname(schema["name"], schema.get("namespace", namespace))
            inner_ns = full.rsplit(".", 1)[0] if "." in full else None
            names[full] = (schema, inner_ns)
            for alias in schema.get("aliases", []):
                names.setdefault(_fullname(alias, inner_ns), (schema, inner_ns))
            if kind in ("record", "error"):
                for field in schema.get("fields", []):
                    _collect_names(field.get("type"), inner_ns, names)
            return
        if kind == "array":
            _collect_names(schema.get("items"), namespace, names)
        elif kind == "map":
            _collect_names(schema.get("values"), namespace, names)


class _AvroSchema:
    def __init__(self, root: Any) -> None:
        self.root = root
        self.names: dict[str, tuple[dict, str | None]] = {}
        _collect_names(root, None, self.names)

    def deref(self, schema: Any, namespace: str | None) -> tuple[Any, str | None]:
        """The schema as a dict (or list for a union) plus its children's namespace."""
        for _ in range(50):  # a name can point to a name; no real schema nests this deep
            if isinstance(schema, list):
                return schema, namespace
            if isinstance(schema, str):
                if schema in _AVRO_PRIMITIVES:
                    return {"type": schema}, namespace
                key = _fullname(schema, namespace)
                hit = self.names.get(key) or self.names.get(schema)
                if hit is None:
                    raise ValueError(f"unknown Avro type name {schema!r}")
                return hit
            if isinstance(schema, dict):
                kind = schema.get("type")
                if isinstance(kind, dict | list):
                    schema = kind
                    continue
                if kind in _NAMED and "name" in schema:
                    full = _fullname(schema["name"], schema.get("namespace", namespace))
                    return schema, (full.rsplit(".", 1)[0] if "." in full else None)
                if kind in _AVRO_PRIMITIVES or kind in ("array", "map"):
                    return schema, namespace
                if isinstance(kind, str):
                    schema = kind  # {"type": "SomeNamedType"}
                    continue
            raise ValueError(f"not an Avro schema: {schema!r}")
        raise ValueError("Avro type names refer to each other in a loop")


def _avro_label(schema: Any) -> str:
    if isinstance(schema, list):
        return "union[" + ", ".join(_avro_label(b) for b in schema) + "]"
    if isinstance(schema, str):
        return schema
    kind = schema.get("type")
    if kind in _NAMED:
        return f"{kind} {schema.get('name')}"
    if isinstance(kind, dict | list):
        return _avro_label(kind)
    return str(kind)


class _AvroResolver:
    def __init__(self, reader: Any, writer: Any) -> None:
        self.r = _AvroSchema(reader)
        self.w = _AvroSchema(writer)
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

    def _compatible(self, r, rns, w, wns, path) -> bool:
        trial: list[Violation] = []
        self._read(r, rns, w, wns, path, trial)
        return not trial

    def _read(self, r, rns, w, wns, path: str, out: list[Violation]) -> None:
        r, rns = self.r.deref(r, rns)
        w, wns = self.w.deref(w, wns)
        if isinstance(w, list):
            for branch in w:
                if isinstance(r, list):
                    if not any(self._compatible(rb, rns, branch, wns, path) for rb in r):
                        out.append(
                            Violation(
                                path,
                                "union_branch_unreadable",
                                f"writer union branch {_avro_label(branch)} matches no branch "
                                f"of the reader's {_avro_label(r)}",
                            )
                        )
                else:
                    trial: list[Violation] = []
                    self._read(r, rns, branch, wns, path, trial)
                    if any(v.path == path and v.rule == "type_mismatch" for v in trial):
                        out.append(
                            Violation(
                                path,
                                "union_branch_unreadable",
                                f"writer union branch {_avro_label(branch)} cannot be read "
                                f"as {_avro_label(r)} (e.g. a nullable field made required)",
                            )
                        )
                    else:
                        out.extend(trial)
            return
        if isinstance(r, list):
            if not any(self._compatible(rb, rns, w, wns, path) for rb in r):
                out.append(
                    Violation(
                        path,
                        "type_mismatch",
                        f"no branch of the reader's {_avro_label(r)} can read the writer's "
                        f"{_avro_label(w)}",
                    )
                )
            return
        rt, wt = r["type"], w["type"]
        rt = "record" if rt == "error" else rt
        wt = "record" if wt == "error" else wt
        if rt != wt:
            if rt not in _AVRO_PROMOTIONS.get(wt, ()):
                out.append(
                    Violation(
                        path,
                        "type_mismatch",
                        f"writer's {_avro_label(w)} cannot be read as {_avro_label(r)} "
                        "(allowed promotions: int→long→float→double, string↔bytes)",
                    )
                )
            return
        if rt in _NAMED and not self._names_match(r, w, path, out):
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

    @staticmethod
    def _names_match(r: dict, w: dict, path: str, out: list[Violation]) -> bool:
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

    def _read_record(self, r, rns, w, wns, path: str, out: list[Violation]) -> None:
        writer_fields = {f["name"]: f for f in w.get("fields", [])}
        for rf in r.get("fields", []):
            fpath = _join(path, rf["name"])
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


# --------------------------------------------------------------------------- JSON Schema

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
_TYPE_KEYWORDS = {
    "object": ("properties", "required", "additionalProperties", "minProperties", "maxProperties"),
    "array": ("items", "minItems", "maxItems", "uniqueItems"),
    "string": ("minLength", "maxLength", "pattern", "format"),
    "number": ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"),
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
        # Pairs on the current recursion stack (cycles only come through $ref). Objects on
        # the stack are alive, so their ids cannot be reused by temporaries.
        self.active: set[tuple[int, int]] = set()

    def check(self) -> list[Violation]:
        out: list[Violation] = []
        self._sub(self.w_root, self.r_root, "", out)
        return out

    def _deref(self, schema: Any, root: Any) -> Any:
        for _ in range(50):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            ref = schema["$ref"]
            if not ref.startswith("#"):
                raise _Unresolvable(ref)
            node = root
            for part in [p for p in ref[1:].split("/") if p]:
                part = part.replace("~1", "/").replace("~0", "~")
                node = node[int(part)] if isinstance(node, list) else node[part]
            schema = node
        raise _Unresolvable("$ref loop")

    def _sub(self, w: Any, r: Any, path: str, out: list[Violation]) -> None:
        try:
            w = self._deref(w, self.w_root)
            r = self._deref(r, self.r_root)
        except (_Unresolvable, KeyError, IndexError, ValueError) as exc:
            if _constraints(w) != _constraints(r):
                out.append(Violation(path, "unresolvable_ref", f"cannot resolve $ref {exc}"))
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

    def _finite_writer(self, w: dict, r: Any, path: str, out: list[Violation]) -> None:
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

    def _typed(self, w: dict, r: dict, path: str, out: list[Violation]) -> None:
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

    def _object(self, w: dict, r: dict, path: str, out: list[Violation]) -> None:
        w_props: dict = w.get("properties", {})
        r_props: dict = r.get("properties", {})
        w_req, r_req = set(w.get("required", [])), set(r.get("required", []))
        w_add = w.get("additionalProperties", True)
        r_add = r.get("additionalProperties", True)
        for name in sorted(r_req - w_req):
            out.append(
                Violation(
                    _join(path, name),
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
            self._sub(ws, rs, _join(path, name), out)
        for name, ws in w_props.items():
            if name in r_props or ws is False:
                continue
            if r_add is False:
                out.append(
                    Violation(
                        _join(path, name),
                        "additional_properties_closed",
                        f"writer allows property {name!r}; the reader does not declare it "
                        "and has additionalProperties: false",
                    )
                )
            elif r_add is not True and r_add != {}:
                self._sub(ws, r_add, _join(path, name), out)
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
                self._sub(w_add, r_add, _join(path, "*"), out)
        self._bounds(w, r, path, out, "minProperties", "maxProperties")

    def _array(self, w: dict, r: dict, path: str, out: list[Violation]) -> None:
        w_items, r_items = w.get("items", True), r.get("items", True)
        if isinstance(w_items, list) or isinstance(r_items, list):
            if _constraints(w_items) != _constraints(r_items):
                out.append(Violation(f"{path}[]", "unsupported_change", "tuple-form items changed"))
        else:
            self._sub(w_items, r_items, f"{path}[]", out)
        self._bounds(w, r, path, out, "minItems", "maxItems")
        if r.get("uniqueItems") and not w.get("uniqueItems"):
            out.append(Violation(path, "constraint_added", "reader requires uniqueItems"))

    def _string(self, w: dict, r: dict, path: str, out: list[Violation]) -> None:
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

    def _number(self, w: dict, r: dict, path: str, out: list[Violation]) -> None:
        self._bounds(w, r, path, out, "minimum", "maximum")
        self._bounds(w, r, path, out, "exclusiveMinimum", "exclusiveMaximum")
        rm, wm = r.get("multipleOf"), w.get("multipleOf")
        if rm is not None and (wm is None or (wm / rm) != int(wm / rm)):
            out.append(Violation(path, "constraint_added", f"reader requires multipleOf {rm}"))

    @staticmethod
    def _bounds(w: dict, r: dict, path: str, out: list[Violation], low: str, high: str) -> None:
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


class _Unresolvable(Exception):
    pass


def _merge(base: dict, branch: Any) -> Any:
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


def _merge_all_of(schema: dict) -> dict:
    merged = {k: v for k, v in schema.items() if k != "allOf"}
    for member in schema["allOf"]:
        merged = _merge(merged, member)
    return merged


def iter_rules() -> Iterable[str]:
    """Every rule name a violation can carry (documentation and tests)."""
    return (
        "invalid_schema",
        "versioning_disabled",
        "type_mismatch",
        "missing_default",
        "name_mismatch",
        "enum_symbol_removed",
        "fixed_size_mismatch",
        "union_branch_unreadable",
        "type_changed",
        "required_added",
        "additional_properties_closed",
        "content_model_closed",
        "enum_added",
        "enum_value_removed",
        "no_matching_branch",
        "range_narrowed",
        "constraint_added",
        "schema_closed",
        "unresolvable_ref",
        "unsupported_change",
    )

"""Schema versions the backend tests register (an Avro record ``rides``)."""

from __future__ import annotations

from floe.registry.backends import SchemaDef

V1 = {"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}
V2 = {
    "type": "record",
    "name": "R",
    "fields": [
        {"name": "a", "type": "int"},
        {"name": "b", "type": ["null", "string"], "default": None},
    ],
}
V3_BAD = {
    "type": "record",
    "name": "R",
    "fields": [{"name": "a", "type": "int"}, {"name": "c", "type": "string"}],
}


def sdef(definition: object, mode: str = "BACKWARD", name: str = "rides") -> SchemaDef:
    return SchemaDef(name=name, data_format="AVRO", definition=definition, compatibility=mode)

"""Avro single-object encoding for trajflow's events, with nothing but python3-avro.

The two bytes C3 01, the 8-byte little-endian CRC-64-AVRO (Rabin) fingerprint of the writer schema's Parsing
Canonical Form, then the binary datum. python3-avro 1.11 has no fingerprint helper, and its `canonical_form`
keeps `{"type":"long"}` for a long with a logicalType (the spec's canonical form is plain "long"), which would
give the wrong fingerprint for schemas/step/v1.avsc, so both are written out here.
"""

import io
import json
import os

import avro.io
import avro.schema

HERE = os.path.dirname(os.path.abspath(__file__))

PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
EMPTY = 0xC15D213AA4D7A795  # the spec's CRC-64-AVRO seed


def _fingerprint_table():
    table = []
    for i in range(256):
        fp = i
        for _ in range(8):
            fp = (fp >> 1) ^ (EMPTY & -(fp & 1))
        table.append(fp)
    return table


FP_TABLE = _fingerprint_table()


def crc64_avro(data: bytes) -> int:
    """The 64-bit Rabin fingerprint of the Avro specification ("Schema Fingerprints")."""
    fp = EMPTY
    for byte in data:
        fp = (fp >> 8) ^ FP_TABLE[(fp ^ byte) & 0xFF]
    return fp


def canonical_form(schema, namespace="", defined=None) -> str:
    """Parsing Canonical Form of a schema given as parsed JSON (Avro specification)."""
    defined = set() if defined is None else defined
    if isinstance(schema, list):
        return "[" + ",".join(canonical_form(s, namespace, defined) for s in schema) + "]"
    if isinstance(schema, str):
        return json.dumps(_full_name(schema, namespace) if schema not in PRIMITIVES else schema)
    kind = schema["type"]
    if not isinstance(kind, str):
        return canonical_form(kind, namespace, defined)
    if kind in ("record", "error", "enum", "fixed"):
        ns = schema.get("namespace", namespace)
        name = _full_name(schema["name"], ns)
        if name in defined:
            return json.dumps(name)
        defined.add(name)
        own_ns = name.rpartition(".")[0]
        head = '{"name":' + json.dumps(name) + ',"type":' + json.dumps("record" if kind == "error" else kind)
        if kind == "enum":
            return head + ',"symbols":[' + ",".join(json.dumps(s) for s in schema["symbols"]) + "]}"
        if kind == "fixed":
            return head + ',"size":' + str(int(schema["size"])) + "}"
        fields = ",".join(
            '{"name":' + json.dumps(f["name"]) + ',"type":' + canonical_form(f["type"], own_ns, defined) + "}"
            for f in schema["fields"]
        )
        return head + ',"fields":[' + fields + "]}"
    if kind == "array":
        return '{"type":"array","items":' + canonical_form(schema["items"], namespace, defined) + "}"
    if kind == "map":
        return '{"type":"map","values":' + canonical_form(schema["values"], namespace, defined) + "}"
    # A primitive with attributes ({"type":"long","logicalType":...}) is just the primitive.
    return canonical_form(kind, namespace, defined)


def _full_name(name: str, namespace: str) -> str:
    return name if "." in name or not namespace else namespace + "." + name


class SingleObjectWriter:
    """Encodes records of one schema as Avro single-object messages."""

    def __init__(self, schema_path: str):
        with open(schema_path, encoding="utf-8") as handle:
            schema_json = handle.read()
        fingerprint = crc64_avro(canonical_form(json.loads(schema_json)).encode("utf-8"))
        self.header = b"\xc3\x01" + fingerprint.to_bytes(8, "little")
        self.fingerprint = fingerprint
        self.writer = avro.io.DatumWriter(avro.schema.parse(schema_json))

    def encode(self, record: dict) -> bytes:
        buffer = io.BytesIO()
        buffer.write(self.header)
        self.writer.write(record, avro.io.BinaryEncoder(buffer))
        return buffer.getvalue()

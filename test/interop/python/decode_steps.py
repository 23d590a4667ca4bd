"""Decodes trajflow step events with Python's Avro library (Debian's python3-avro), the way a Python consumer
would, and writes each one in the normalized JSON form of test/interop/avro-normalize.ts, so the test can compare
it with the values that were validated.

usage: decode_steps.py SCHEMA.avsc HEADER_HEX DIR COUNT
  reads DIR/in-<i>/step.bin (Avro single-object encoding: the header C3 01 + the 8-byte schema fingerprint, given
  in hex, then the datum) for
  i < COUNT and writes DIR/py-<i>/step.json, or DIR/py-<i>/step.error with the reason it could not be read.

usage: decode_steps.py lines SCHEMA.avsc HEADER_HEX IN.hex OUT.jsonl
  decodes many steps in one run: each line of IN.hex is one single-object encoded step in hex; each line of
  OUT.jsonl is {"value": <normalized JSON>} or {"error": "<why>"} for the step on the same line.
"""
import datetime
import io
import json
import math
import os
import sys

import avro.io
import avro.schema

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def normalize(schema, value):
    if isinstance(schema, avro.schema.RecordSchema):
        return {field.name: normalize(field.type, value[field.name]) for field in schema.fields}
    if isinstance(schema, avro.schema.UnionSchema):
        if value is None:
            return None
        branches = [s for s in schema.schemas if s.type != "null"]
        return normalize(branches[0], value)
    if isinstance(schema, avro.schema.ArraySchema):
        return [normalize(schema.items, item) for item in value]
    if isinstance(schema, avro.schema.MapSchema):
        return {key: normalize(schema.values, value[key]) for key in sorted(value)}
    kind = schema.type
    if kind in ("float", "double"):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        return float(value)
    if isinstance(value, datetime.datetime):
        # timestamp-millis: Python's avro gives a datetime; back to the long it was written as.
        return (value - EPOCH) // datetime.timedelta(milliseconds=1)
    if kind in ("bytes", "fixed"):
        return value.hex()
    return value


def decode(schema, reader, header, data):
    """The normalized JSON text of one single-object encoded step; raises when it cannot be read."""
    if not data.startswith(header):
        raise ValueError(f"not a single-object encoded step of this schema: header {data[:10].hex()}")
    value = reader.read(avro.io.BinaryDecoder(io.BytesIO(data[len(header):])))
    return json.dumps(normalize(schema, value), allow_nan=False)


def lines(schema_path, header_hex, in_path, out_path):
    with open(schema_path, encoding="utf-8") as f:
        schema = avro.schema.parse(f.read())
    header = bytes.fromhex(header_hex)
    reader = avro.io.DatumReader(schema)
    with open(in_path, encoding="ascii") as f, open(out_path, "w", encoding="utf-8") as out:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                out.write('{"value": ' + decode(schema, reader, header, bytes.fromhex(line)) + "}\n")
            except Exception as error:  # every failure is a finding: written for the test to show
                out.write(json.dumps({"error": f"{type(error).__name__}: {error}"}) + "\n")


def main():
    if sys.argv[1] == "lines":
        lines(*sys.argv[2:6])
        return
    schema_path, header_hex, directory, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    with open(schema_path, encoding="utf-8") as f:
        schema = avro.schema.parse(f.read())
    header = bytes.fromhex(header_hex)
    reader = avro.io.DatumReader(schema)
    for i in range(count):
        out = os.path.join(directory, f"py-{i}")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(directory, f"in-{i}", "step.bin"), "rb") as f:
            data = f.read()
        try:
            text = decode(schema, reader, header, data)
            with open(os.path.join(out, "step.json"), "w", encoding="utf-8") as f:
                f.write(text)
        except Exception as error:  # every failure is a finding: write it for the test to show
            with open(os.path.join(out, "step.error"), "w", encoding="utf-8") as f:
                f.write(f"{type(error).__name__}: {error}")


if __name__ == "__main__":
    main()

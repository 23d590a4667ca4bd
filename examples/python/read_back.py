"""Reading trajflow's output back from Python: the trajectories and samples the processors wrote to Kafka
(decoded by the fingerprint in their single-object header), and the rows the sink stored in ClickHouse.

Used by publish_steps.py after it has published; importable on its own.
"""

import glob
import io
import json
import os
import time
import urllib.parse
import urllib.request

import avro.io
import avro.schema
from confluent_kafka import Consumer, TopicPartition

from single_object import HERE, canonical_form, crc64_avro

SCHEMAS_DIR = os.path.join(HERE, "..", "..", "schemas")


def writer_schemas(schemas_dir=SCHEMAS_DIR):
    """Every schemas/<event>/vN.avsc by its fingerprint: a reader finds the writer schema from the header."""
    schemas = {}
    for path in glob.glob(os.path.join(schemas_dir, "*", "v*.avsc")):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        schemas[crc64_avro(canonical_form(json.loads(text)).encode("utf-8"))] = avro.schema.parse(text)
    return schemas


def decode(message_value: bytes, schemas) -> dict:
    """One single-object encoded event: C3 01, the 8-byte little-endian fingerprint, the Avro datum."""
    if message_value[:2] != b"\xc3\x01":
        raise ValueError("not Avro single-object encoding (no C3 01 marker)")
    schema = schemas[int.from_bytes(message_value[2:10], "little")]
    return avro.io.DatumReader(schema).read(avro.io.BinaryDecoder(io.BytesIO(message_value[10:])))


def read_run_events(bootstrap, topics, run_id, expected, since_ms, timeout_s=60.0):
    """The events of `run_id` on `topics` written since `since_ms`, once `expected[topic]` of each arrived.

    read_committed: the processors write exactly once, in transactions; an aborted one is never read.
    """
    schemas = writer_schemas()
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"read-back-{run_id}", "enable.auto.commit": False,
                         "isolation.level": "read_committed", "auto.offset.reset": "earliest"})
    try:
        wanted, ends = [], {}
        for topic in topics:
            metadata = consumer.list_topics(topic, timeout=10).topics[topic]
            for p in metadata.partitions:
                # Taken before the times: what is written after this is at or past this high watermark.
                ends[(topic, p)] = consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                wanted.append(TopicPartition(topic, p, since_ms))
        # A partition with nothing since since_ms yet answers -1 ("the end"), which librdkafka resolves at its
        # first fetch, skipping what was written in between: it starts at the high watermark taken before instead.
        positions = consumer.offsets_for_times(wanted, timeout=10)
        consumer.assign([tp if tp.offset >= 0 else TopicPartition(tp.topic, tp.partition, ends[(tp.topic, tp.partition)]) for tp in positions])
        found = {topic: [] for topic in topics}
        deadline = time.monotonic() + timeout_s
        while any(len(found[t]) < expected[t] for t in topics) and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is None or message.error() is not None:
                continue
            event = decode(message.value(), schemas)
            if event.get("runId") == run_id:
                found[message.topic()].append(event)
        return found
    finally:
        consumer.close()


def sql_string(value: str) -> str:
    """A ClickHouse string literal (backslash and quote escaped)."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def clickhouse_rows(sql, run_id, expected, timeout_s=60.0):
    """Rows of a query whose {run} is run_id (as a string literal), once there are `expected` of them (the sink
    stores events within about a second of reading them)."""
    base = os.environ.get("TRAJFLOW_CLICKHOUSE_URL", "http://127.0.0.1:" + os.environ.get("TRAJFLOW_CLICKHOUSE_HTTP_PORT", "18123"))
    params = {"database": os.environ.get("TRAJFLOW_CLICKHOUSE_DB", "trajflow"), "query": sql.replace("{run}", sql_string(run_id)) + " FORMAT JSONEachRow"}
    request = urllib.request.Request(base + "/?" + urllib.parse.urlencode(params))
    user = os.environ.get("TRAJFLOW_CLICKHOUSE_USER")
    if user:
        request.add_header("X-ClickHouse-User", user)
        request.add_header("X-ClickHouse-Key", os.environ.get("TRAJFLOW_CLICKHOUSE_PASSWORD", ""))
    deadline = time.monotonic() + timeout_s
    while True:
        with urllib.request.urlopen(request, timeout=10) as response:
            rows = [json.loads(line) for line in response.read().decode("utf-8").splitlines() if line]
        if len(rows) >= expected or time.monotonic() > deadline:
            return rows
        time.sleep(0.25)

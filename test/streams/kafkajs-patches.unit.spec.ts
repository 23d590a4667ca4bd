// Unit: the speed patches of patches/kafkajs+2.2.4.patch (applied at install by patch-package) — the record batch
// CRC-32C computed slicing-by-8 and the protocol Encoder allocating with allocUnsafe — are in place and give
// the same bytes as kafkajs' own byte-at-a-time CRC and zero-filled buffers; and the [partitions-added] hook
// of a transactional send (one AddPartitionsToTxn, then the caller's hook, then the produce requests); and the
// [idle-request-queue] fix: an idle connection no longer wakes up every millisecond.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Rng } from '../../core/rng.js';

const require = createRequire(import.meta.url);
const crc32C = require('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js') as ((buffer: Buffer) => number) & { native: boolean };
const Encoder = require('kafkajs/src/protocol/encoder.js') as new () => {
  writeInt32(value: number): unknown;
  writeVarIntString(value: string): unknown;
  writeBytes(value: Buffer): unknown;
  buffer: Buffer;
};

/** kafkajs' shipped algorithm: one table lookup per byte. */
function referenceCrc32C(buffer: Buffer): number {
  const table = new Int32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c;
  }
  let crc = -1;
  for (const byte of buffer) crc = table[(crc ^ byte) & 0xff]! ^ (crc >>> 8);
  return (crc ^ -1) >>> 0;
}

test('the patched CRC-32C gives the standard check value and the byte-at-a-time result at every length, below and above the native threshold', () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/recordBatch/crc32C/crc32C.js'), 'utf8'), /slicing-by-8/);
  // @node-rs/crc32 has a binary for the platforms trajflow runs on: losing it would only be slower, so say so here.
  if (['linux', 'darwin', 'win32'].includes(process.platform) && ['x64', 'arm64'].includes(process.arch))
    assert.equal(crc32C.native, true, 'the native CRC-32C (@node-rs/crc32) did not load');
  assert.equal(crc32C(Buffer.from('123456789')), 0xe3069283);
  assert.equal(crc32C(Buffer.alloc(0)), 0);
  const rng = new Rng(7);
  for (const length of [1, 7, 8, 9, 15, 16, 17, 63, 64, 65, 255, 256, 257, 1000, 4099, 70_001]) {
    const buffer = Buffer.from(Array.from({ length }, () => Math.floor(rng.next() * 256)));
    assert.equal(crc32C(buffer), referenceCrc32C(buffer), `length ${length}`);
    // an unaligned view into a larger buffer
    const view = Buffer.concat([Buffer.from([1, 2, 3]), buffer]).subarray(3);
    assert.equal(crc32C(view), referenceCrc32C(buffer), `offset view, length ${length}`);
  }
});

test('the patched Encoder allocates with allocUnsafe and still exposes exactly the bytes written, across growth', () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/encoder.js'), 'utf8'), /Buffer\.allocUnsafe\(newLength\)/);
  const payload = Buffer.from(Array.from({ length: 3000 }, (_, i) => i % 251));
  const encoder = new Encoder();
  encoder.writeInt32(258);
  encoder.writeVarIntString('abc');
  encoder.writeBytes(payload);
  const expected = Buffer.concat([Buffer.from([0, 0, 1, 2]), Buffer.from([6, 97, 98, 99]), Buffer.from([0, 0, 0x0b, 0xb8]), payload]);
  assert.deepEqual(encoder.buffer, expected);
});

test('a record batch encoded with the patched encoder and CRC decodes to the same records, with a valid CRC', async () => {
  const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (args: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (args: Record<string, unknown>) => unknown;
  const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (
    decoder: unknown,
  ) => Promise<{ records: { key: Buffer; value: Buffer; headers: Record<string, Buffer> }[] }>;
  const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;
  const values = [Buffer.alloc(0), Buffer.from('x'), Buffer.alloc(1500, 7), Buffer.alloc(5000, 9)];
  const records = values.map((value, offsetDelta) => Record({ offsetDelta, key: Buffer.from(`k${offsetDelta}`), value, headers: { h: 'v' } }));
  const { buffer } = await RecordBatch({ records, firstOffset: 0, firstTimestamp: 1, maxTimestamp: 1, lastOffsetDelta: values.length - 1 });
  const decoded = await decodeBatch(new Decoder(buffer));
  assert.deepEqual(
    decoded.records.map((r) => [r.key.toString(), Buffer.compare(r.value, values[Number(r.key.toString().slice(1))]!), r.headers.h!.toString()]),
    values.map((_, i) => [`k${i}`, 0, 'v']),
  );
  // The decoder checked nothing about the CRC: check it against the bytes it covers (attributes → end).
  const crc = buffer.readUInt32BE(8 + 4 + 4 + 1);
  assert.equal(crc, crc32C(buffer.subarray(8 + 4 + 4 + 1 + 4)));
});

/** Zigzag LEB128 as the Kafka protocol defines it, in BigInt: the reference for the in-place varints. */
function referenceVarint(value: bigint, bits: 32 | 64): Buffer {
  let zigzag = BigInt.asUintN(bits, (value << 1n) ^ (value >> BigInt(bits - 1)));
  const bytes: number[] = [];
  while (zigzag >= 0x80n) {
    bytes.push(Number(zigzag & 0x7fn) | 0x80);
    zigzag >>= 7n;
  }
  bytes.push(Number(zigzag));
  return Buffer.from(bytes);
}

test('the patched Encoder writes varints and varlongs in place, byte for byte as the protocol defines them', () => {
  const VarEncoder = Encoder as unknown as (new () => { writeVarInt(v: number): unknown; writeVarLong(v: unknown): unknown; buffer: Buffer }) & {
    sizeOfVarLong(v: unknown): number;
  };
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/encoder.js'), 'utf8'), /\[varint\]/);
  const rng = new Rng(11);
  const ints = [0, 1, -1, 63, -64, 64, -65, 8191, 8192, 2 ** 30 - 1, 2 ** 30, -(2 ** 30), -(2 ** 30) - 1, 2 ** 31 - 1, -(2 ** 31)];
  for (let i = 0; i < 200; i++) ints.push(Math.floor((rng.next() - 0.5) * 2 ** 32));
  for (const value of ints) {
    const encoder = new VarEncoder();
    encoder.writeVarInt(value);
    assert.deepEqual(encoder.buffer, referenceVarint(BigInt(value), 32), `varint ${value}`);
  }
  // varlongs: the 32-bit fast path and the Long path beyond it (timestamps in ms, negative deltas)
  const longs = [...ints, 2 ** 31, -(2 ** 31) - 1, 2 ** 40 + 3, -(2 ** 40) - 3, 1_764_480_000_123, Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER];
  for (const value of longs) {
    const encoder = new VarEncoder();
    encoder.writeVarLong(value);
    const expected = referenceVarint(BigInt(value), 64);
    assert.deepEqual(encoder.buffer, expected, `varlong ${value}`);
    assert.equal(VarEncoder.sizeOfVarLong(value), expected.length, `sizeOfVarLong ${value}`);
  }
});

test('the patched grouping by partition keeps every message once, in send order within its partition', () => {
  const group = require('kafkajs/src/producer/groupMessagesPerPartition.js') as (args: {
    topic: string;
    partitionMetadata: unknown[];
    messages: { key: string }[];
    partitioner: (args: { message: { key: string } }) => number;
  }) => Record<string, { key: string }[]>;
  const messages = Array.from({ length: 1000 }, (_, i) => ({ key: `k${i}` }));
  const grouped = group({ topic: 't', partitionMetadata: [{}, {}, {}], messages, partitioner: ({ message }) => Number(message.key.slice(1)) % 3 });
  assert.deepEqual(Object.keys(grouped).sort(), ['0', '1', '2']);
  for (const [partition, list] of Object.entries(grouped)) {
    assert.deepEqual(
      list,
      messages.filter((_, i) => i % 3 === Number(partition)),
    );
  }
  assert.deepEqual(group({ topic: 't', partitionMetadata: [], messages, partitioner: () => 0 }), {});
});

test('the patched request framing writes size, header and payload as the shipped two-encoder framing did', async () => {
  const frame = require('kafkajs/src/protocol/request.js') as (args: Record<string, unknown>) => Promise<{ buffer: Buffer }>;
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/request.js'), 'utf8'), /\[framing\]/);
  type Enc = {
    writeInt16(v: number): Enc;
    writeInt32(v: number): Enc;
    writeString(v: string | null): Enc;
    writeEncoder(e: Enc): Enc;
    writeBytes(v: Buffer): Enc;
    size(): number;
    buffer: Buffer;
  };
  const E = Encoder as unknown as new () => Enc;
  for (const clientId of ['trajflow', null, 'ünïcode-client']) {
    for (const bytes of [0, 100, 9000]) {
      const payload = new E().writeInt32(7).writeBytes(Buffer.alloc(bytes, 3));
      const { buffer } = await frame({ correlationId: 41, clientId, request: { apiKey: 0, apiVersion: 3, encode: async () => payload } });
      const header = new E().writeInt16(0).writeInt16(3).writeInt32(41).writeString(clientId).writeEncoder(payload);
      assert.deepEqual(buffer, new E().writeInt32(header.size()).writeEncoder(header).buffer, `${clientId} ${bytes}`);
    }
  }
});

test('the patched fetch decoding gives every record the offset and timestamp Long arithmetic gives', async () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/recordBatch/record/v0/decoder.js'), 'utf8'), /\[fetch-decode\]/);
  const { RecordBatch } = require('kafkajs/src/protocol/recordBatch/v0/index.js') as { RecordBatch: (args: Record<string, unknown>) => Promise<{ buffer: Buffer }> };
  const Record = require('kafkajs/src/protocol/recordBatch/record/v0/index.js') as (args: Record<string, unknown>) => unknown;
  const decodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: unknown) => Promise<{ records: { offset: string; timestamp: string }[] }>;
  const Decoder = require('kafkajs/src/protocol/decoder.js') as new (buffer: Buffer) => unknown;
  // first offsets below and above 2^53 (the Long path), timestamp deltas of every varlong length and sign
  const firstOffsets = [0n, 123_456_789n, 2n ** 53n - 3n, 2n ** 53n + 11n, 2n ** 62n];
  const deltas = [0n, 1n, -1n, 63n, -64n, 8191n, 2n ** 31n, -(2n ** 31n), 2n ** 48n - 1n, 2n ** 48n, -(2n ** 48n) - 1n, 2n ** 52n, -(2n ** 55n)];
  const firstTimestamp = 1_764_480_000_123n;
  for (const firstOffset of firstOffsets) {
    const records = deltas.map((timestampDelta, offsetDelta) => Record({ offsetDelta, timestampDelta: timestampDelta.toString(), key: null, value: Buffer.from([offsetDelta]) }));
    const { buffer } = await RecordBatch({
      records,
      firstOffset: firstOffset.toString(),
      firstTimestamp: firstTimestamp.toString(),
      maxTimestamp: firstTimestamp.toString(),
      lastOffsetDelta: deltas.length - 1,
    });
    const decoded = await decodeBatch(new Decoder(buffer));
    assert.deepEqual(
      decoded.records.map((r) => [r.offset, r.timestamp]),
      deltas.map((delta, i) => [(firstOffset + BigInt(i)).toString(), (firstTimestamp + delta).toString()]),
      `first offset ${firstOffset}`,
    );
  }
});

test('the patched batch keeps exactly the messages at or after the fetched offset, below and above 2^53', () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/consumer/batch.js'), 'utf8'), /\[fetch-offsets\]/);
  const Batch = require('kafkajs/src/consumer/batch.js') as new (topic: string, fetchedOffset: string, data: Record<string, unknown>) => { messages: { offset: string }[] };
  for (const base of [0n, 999_999_999_999_990n, 2n ** 53n - 5n]) {
    const messages = Array.from({ length: 12 }, (_, i) => ({ offset: (base + BigInt(i)).toString(), isControlRecord: i === 9 }));
    const fetched = (base + 4n).toString();
    const batch = new Batch('t', fetched, { partition: 0, highWatermark: '0', messages, abortedTransactions: [] });
    assert.deepEqual(
      batch.messages.map((m) => m.offset),
      messages.filter((m, i) => i >= 4 && !m.isControlRecord).map((m) => m.offset),
      `base ${base}`,
    );
  }
});

test('a transactional send given onPartitionsAdded adds all its partitions in one call, then calls the hook once, then produces', async () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/producer/sendMessages.js'), 'utf8'), /\[partitions-added\]/);
  const createSendMessages = require('kafkajs/src/producer/sendMessages.js') as (deps: Record<string, unknown>) => (args: Record<string, unknown>) => Promise<unknown>;
  // Doubles of kafkajs' cluster and EOS manager: topic a has partitions 0 and 1, led by brokers 1 and 2; topic b one partition on broker 2.
  const log: string[] = [];
  const brokers = new Map(
    [1, 2].map((nodeId) => [
      nodeId,
      {
        nodeId,
        produce: async ({ topicData }: { topicData: { topic: string; partitions: { partition: number }[] }[] }) => {
          log.push(`produce@${nodeId} ${topicData.map((t) => `${t.topic}:${t.partitions.map((p) => p.partition).join(',')}`).join(' ')}`);
          return { topics: topicData.map((t) => ({ topicName: t.topic, partitions: t.partitions.map((p) => ({ partition: p.partition, errorCode: 0, baseOffset: '0' })) })) };
        },
      },
    ]),
  );
  const leaders: Record<string, Record<string, number>> = { a: { 0: 1, 1: 2 }, b: { 0: 2 } };
  const cluster = {
    refreshMetadataIfNecessary: async () => undefined,
    addMultipleTargetTopics: async () => undefined,
    isConnected: () => true,
    findTopicPartitionMetadata: (topic: string) => Object.keys(leaders[topic]!).map((p) => ({ partitionId: Number(p), leader: leaders[topic]![p] })),
    findLeaderForPartitions: (topic: string, partitions: string[]) => {
      const byLeader: Record<number, number[]> = {};
      for (const p of partitions) (byLeader[leaders[topic]![p]!] ??= []).push(Number(p));
      return byLeader;
    },
    findBroker: async ({ nodeId }: { nodeId: number }) => brokers.get(Number(nodeId)),
  };
  const added = new Set<string>();
  const eosManager = {
    isTransactional: () => true,
    addPartitionsToTransaction: async (topicData: { topic: string; partitions: { partition: number }[] }[]) => {
      const fresh = topicData.flatMap((t) => t.partitions.map((p) => `${t.topic}:${p.partition}`)).filter((tp) => !added.has(tp));
      if (fresh.length > 0) log.push(`addPartitions ${fresh.sort().join(' ')}`);
      for (const tp of fresh) added.add(tp);
    },
    acquireBrokerLock: async () => undefined,
    releaseBrokerLock: async () => undefined,
    getSequence: () => 0,
    updateSequence: () => undefined,
    getTransactionalId: () => 'tx',
    getProducerId: () => '1',
    getProducerEpoch: () => 0,
  };
  const sendMessages = createSendMessages({
    logger: { debug: () => undefined },
    cluster,
    eosManager,
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    retrier: (fn: (bail: unknown, n: number, t: number) => unknown) => fn(() => undefined, 0, 0),
  });
  const topicMessages = [
    {
      topic: 'a',
      messages: [
        { partition: 0, value: 'x' },
        { partition: 1, value: 'y' },
      ],
    },
    { topic: 'b', messages: [{ partition: 0, value: 'z' }] },
  ];
  await sendMessages({ acks: -1, topicMessages, onPartitionsAdded: () => log.push('hook') });
  assert.deepEqual(log.slice(0, 2), ['addPartitions a:0 a:1 b:0', 'hook']);
  assert.deepEqual(log.slice(2).sort(), ['produce@1 a:0', 'produce@2 a:1 b:0']);

  // Without the hook, kafkajs' own order: each leader adds its partitions before its produce.
  log.length = 0;
  added.clear();
  await sendMessages({ acks: -1, topicMessages });
  assert.equal(log.filter((line) => line === 'hook').length, 0);
  assert.equal(log.filter((line) => line.startsWith('addPartitions')).length, 2);
  for (const nodeId of [1, 2]) {
    const produce = log.findIndex((line) => line.startsWith(`produce@${nodeId}`));
    assert.ok(produce > 0 && log.slice(0, produce).some((line) => line.startsWith('addPartitions')), log.join(' | '));
  }
});

test('a produce request written in one pass has the bytes of kafkajs’ own encoding, and headers or compression take kafkajs’ path', async () => {
  assert.match(readFileSync(require.resolve('kafkajs/src/protocol/requests/produce/v3/request.js'), 'utf8'), /\[produce-one-pass\]/);
  const produce = require('kafkajs/src/protocol/requests/produce/v3/request.js') as ((args: Record<string, unknown>) => { encode(): Promise<{ buffer: Buffer }> }) & {
    kafkajsPath?: boolean;
  };
  const Long = require('kafkajs/src/utils/long.js') as { fromValue(v: number | string): unknown };
  const rng = new Rng(11);
  const bytesOf = async (args: Record<string, unknown>, kafkajsPath: boolean) => {
    produce.kafkajsPath = kafkajsPath;
    try {
      return (await produce(args).encode()).buffer;
    } finally {
      produce.kafkajsPath = false;
    }
  };
  const realNow = Date.now;
  Date.now = () => 1_764_547_200_123; // partitions without timestamps take the clock: the same in both paths
  try {
    for (let trial = 0; trial < 40; trial++) {
      const withTimestamps = trial % 3 !== 0;
      const message = (i: number) => ({
        key: [() => `group-${rng.int(1000)}`, () => Buffer.from(`k${i}-ünï`), () => null][rng.int(3)]!(),
        value: [() => Buffer.alloc(rng.int(3000), rng.int(256)), () => `value ${i} ${'x'.repeat(rng.int(300))}`, () => null][rng.int(3)]!(),
        ...(withTimestamps ? { timestamp: String(1_764_547_000_000 + rng.int(100_000)) } : {}),
        ...(trial === 7 ? { headers: {} } : {}),
      });
      const topicData = Array.from({ length: 1 + rng.int(3) }, (_, t) => ({
        topic: `trajflow.t${t}.samples`,
        partitions: Array.from({ length: 1 + rng.int(4) }, (_, p) => ({
          partition: p,
          firstSequence: rng.int(100_000),
          messages: Array.from({ length: 1 + rng.int(trial === 5 ? 400 : 40) }, (_, i) => message(i)),
        })),
      }));
      const args = {
        acks: -1,
        timeout: 30000,
        transactionalId: trial % 2 === 0 ? `trajflow.processors.p${trial}` : null,
        producerId: Long.fromValue(trial % 2 === 0 ? 4242 + trial : -1),
        producerEpoch: trial % 4,
        topicData,
      };
      assert.deepEqual(await bytesOf(args, false), await bytesOf(args, true), `trial ${trial}`);
    }
    // Headers and compression are left to kafkajs: the one-pass writer knows neither.
    const withHeaders = { acks: -1, timeout: 1000, topicData: [{ topic: 't', partitions: [{ partition: 0, messages: [{ key: 'k', value: 'v', headers: { h: 'x' } }] }] }] };
    assert.deepEqual(await bytesOf(withHeaders, false), await bytesOf(withHeaders, true));
    assert.ok((await bytesOf(withHeaders, false)).includes(Buffer.from('h')));
  } finally {
    Date.now = realNow;
  }
});

test('[idle-request-queue] an idle connection schedules no check of its request queue; a throttled or full one still does', () => {
  const RequestQueue = require('kafkajs/src/network/requestQueue/index.js') as new (
    args: Record<string, unknown>,
  ) => {
    pending: unknown[];
    throttledUntil: number;
    throttleCheckTimeoutId: NodeJS.Timeout | null;
    checkPendingRequests(): void;
    scheduleCheckPendingRequests(): void;
    destroy(): void;
  };
  const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const queue = new RequestQueue({
    instrumentationEmitter: null,
    maxInFlightRequests: 1,
    requestTimeout: 30_000,
    enforceRequestTimeout: false,
    clientId: 't',
    broker: 'b',
    logger,
    isConnected: () => true,
  });
  try {
    // Shipped kafkajs set a timeout of ≤ 0 ms here, whose callback ran this again: a wake-up every millisecond forever.
    queue.checkPendingRequests();
    assert.equal(queue.throttleCheckTimeoutId, null, 'nothing pending, not throttled: no timer');
    queue.throttledUntil = Date.now() + 50;
    queue.scheduleCheckPendingRequests();
    assert.notEqual(queue.throttleCheckTimeoutId, null, 'throttled: checked when the throttle ends');
    clearTimeout(queue.throttleCheckTimeoutId!);
    queue.throttleCheckTimeoutId = null;
    queue.throttledUntil = -1;
    queue.pending.push({});
    queue.scheduleCheckPendingRequests();
    assert.notEqual(queue.throttleCheckTimeoutId, null, 'a request waiting: checked again');
  } finally {
    queue.pending.length = 0;
    queue.destroy();
  }
});

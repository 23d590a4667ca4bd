// Unit tier: a transaction's messages packed into one buffer cross to the worker thread and come out as
// the same keys and values, nulls (tombstones) and byte keys included.
import assert from 'node:assert/strict';
import { MessageChannel, receiveMessageOnPort } from 'node:worker_threads';
import { test } from 'node:test';
import { packMessages, transferables, unpackMessages, type TopicMessages } from '../../../processors/exactly-once/transaction-protocol.js';

const pooled = (text: string) => Buffer.from(text); // small Buffers are slices of node's shared pool

const batch: TopicMessages[] = [
  {
    topic: 'samples',
    messages: [
      { key: 'g1', value: pooled('sample one') },
      { key: 'g2', value: Buffer.alloc(0) },
    ],
  },
  { topic: 'empty', messages: [] },
  {
    topic: 'dead',
    messages: [
      { key: Buffer.from([0, 255, 7]), value: pooled('letter') },
      { key: null, value: pooled('unkeyed') },
    ],
  },
  {
    topic: 'state',
    messages: [
      { key: 'mark-a', value: null },
      { key: 'mark-b', value: pooled('{"status":"emitted"}') },
    ],
  },
];

function plain(topics: readonly TopicMessages[]) {
  return topics.map((t) => ({
    topic: t.topic,
    messages: t.messages.map((m) => ({
      key: m.key === null ? null : Buffer.isBuffer(m.key) ? ['bytes', [...m.key]] : m.key,
      value: m.value === null ? null : m.value.toString('latin1'),
    })),
  }));
}

test('packed messages unpack to the same topics, keys and values, in order', () => {
  assert.deepEqual(plain(unpackMessages(packMessages(batch))), plain(batch));
});

test('packed messages cross a thread boundary with their buffers transferred, not copied', () => {
  const packed = packMessages(batch);
  // Transferable only when each array owns its whole buffer (a pool slice would detach the pool).
  for (const array of [packed.values, packed.counts, packed.ends]) assert.equal(array.byteLength, array.buffer.byteLength);
  const { port1, port2 } = new MessageChannel();
  port1.postMessage(packed, transferables(packed));
  assert.equal(packed.values.byteLength, 0, 'the sender no longer holds the values');
  const received = receiveMessageOnPort(port2)!.message as typeof packed;
  port1.close();
  // Byte keys arrive as Uint8Array (structured clone drops the Buffer class); unpack gives Buffers back.
  const out = unpackMessages(received);
  assert.deepEqual(plain(out), plain(batch));
  assert.ok(Buffer.isBuffer(out[2]!.messages[0]!.key));
});

test('a transaction of tombstones only packs to an empty values buffer', () => {
  const packed = packMessages([
    {
      topic: 'state',
      messages: [
        { key: 'a', value: null },
        { key: 'b', value: null },
      ],
    },
  ]);
  assert.equal(packed.values.byteLength, 0);
  assert.deepEqual([...packed.ends], [-1, -1]);
  assert.deepEqual(plain(unpackMessages(packed)), [
    {
      topic: 'state',
      messages: [
        { key: 'a', value: null },
        { key: 'b', value: null },
      ],
    },
  ]);
});

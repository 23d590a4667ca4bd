// Integration: the patched kafkajs' read_committed against the real broker, in the cases where
// @platformatic/kafka 2.12.1 read aborted records as committed (docs/design/kafka-client.md): one producer that
// aborts, commits and aborts again, and an aborted transaction longer than one fetch; and where the shipped
// kafkajs 2.2.4 filter did: a fetch that starts inside two interleaved aborted transactions. Each topic ends
// with a committed 'end' record, so reading waits for it.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { loadConfig } from '../../core/config.js';
import { createKafka } from '../../streams/kafka-client.js';
import { createTopic, uniqueName, waitFor } from '../helpers/kafka.js';

let kafka: Kafka;
const producers: Producer[] = [];
const topics: string[] = [];

before(() => {
  kafka = createKafka(loadConfig(), { clientId: 'test-read-committed' });
});
after(async () => {
  await Promise.all(producers.map((p) => p.disconnect()));
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics });
  await admin.disconnect();
});

async function transactionalProducer(): Promise<Producer> {
  const producer = kafka.producer({ transactionalId: uniqueName('read-committed-tx'), idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  producers.push(producer);
  return producer;
}

async function topicOf(): Promise<string> {
  const topic = await createTopic(kafka, 'read-committed');
  topics.push(topic);
  return topic;
}

const send = (t: Transaction, topic: string, value: string) => t.send({ topic, messages: [{ value }] });

async function end(producer: Producer, topic: string): Promise<void> {
  const t = await producer.transaction();
  await send(t, topic, 'end');
  await t.commit();
}

/** What a read_committed consumer delivers from `from` (a committed offset; else the start) up to the 'end' record. */
async function readCommitted(topic: string, { maxBytes, from }: { maxBytes?: number; from?: number } = {}): Promise<string[]> {
  const values: string[] = [];
  const groupId = uniqueName('read-committed');
  if (from !== undefined) {
    const admin = kafka.admin();
    await admin.connect();
    await admin.setOffsets({ groupId, topic, partitions: [{ partition: 0, offset: String(from) }] });
    await admin.disconnect();
  }
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 100, ...(maxBytes ? { maxBytes, maxBytesPerPartition: maxBytes } : {}) });
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ autoCommit: false, eachMessage: async ({ message }) => void values.push(String(message.value)) });
    await waitFor(() => values.includes('end'), `the 'end' record of ${topic}`);
  } finally {
    await consumer.disconnect();
  }
  return values.slice(0, values.indexOf('end')).map((v) => v.slice(0, 12));
}

test('one producer aborts, commits, aborts, commits: only the committed records are read', async () => {
  const topic = await topicOf();
  const producer = await transactionalProducer();
  for (const [tag, commit] of [
    ['a1', false],
    ['c1', true],
    ['a2', false],
    ['c2', true],
  ] as const) {
    const t = await producer.transaction();
    for (const i of [0, 1, 2]) await send(t, topic, `${tag}-${i}`);
    await (commit ? t.commit() : t.abort());
  }
  await end(producer, topic);
  assert.deepEqual(await readCommitted(topic), ['c1-0', 'c1-1', 'c1-2', 'c2-0', 'c2-1', 'c2-2']);
});

test('a fetch that starts inside two interleaved aborted transactions reads neither (the shipped kafkajs filter read one)', async () => {
  const topic = await topicOf();
  const [p7, p8, p9] = [await transactionalProducer(), await transactionalProducer(), await transactionalProducer()];
  const [t7, t8] = [await p7.transaction(), await p8.transaction()];
  await send(t7, topic, 'a7-0'); // offset 0
  await send(t8, topic, 'a8-0'); // offset 1
  await send(t8, topic, 'a8-1'); // offset 2: where the fetch starts, a record of the second aborted transaction listed
  await send(t7, topic, 'a7-1');
  await t7.abort();
  await t8.abort();
  const t9 = await p9.transaction();
  await send(t9, topic, 'c9-0');
  await t9.commit();
  await end(p9, topic);
  assert.deepEqual(await readCommitted(topic, { from: 2 }), ['c9-0']);
});

test('an aborted transaction longer than one fetch (40 batches of 30 kB, fetches of 100 kB) is not read', async () => {
  const topic = await topicOf();
  const producer = await transactionalProducer();
  const aborted = await producer.transaction();
  for (let i = 0; i < 40; i++) await send(aborted, topic, `a-${i}-${'x'.repeat(30_000)}`);
  await aborted.abort();
  const committed = await producer.transaction();
  for (const i of [0, 1, 2]) await send(committed, topic, `c-${i}`);
  await committed.commit();
  await end(producer, topic);
  assert.deepEqual(await readCommitted(topic, { maxBytes: 100_000 }), ['c-0', 'c-1', 'c-2']);
});

// kafkajs 2.2.4 against the pinned broker: what trajflow relies on (produce, consume in a group, commit and
// read offsets, admin createTopics/describeConfigs) works. Uses the shared broker and its own topic.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import kafkajs from 'kafkajs';
import type { Admin, EachMessagePayload } from 'kafkajs';
import { loadConfig } from '../../core/config.js';
import { createKafka } from '../../streams/kafka-client.js';
import { waitUntil } from '../../infra/process.js';
import { uniqueSuffix } from './helpers.js';
import { retryRetriable } from '../../streams/retry.js';

const { ConfigResourceTypes, Partitioners } = kafkajs;
const config = loadConfig();
const kafka = createKafka(config, { clientId: 'infra-compat' });
const topic = `infratest-${uniqueSuffix()}.compat`;
let admin: Admin;

before(async () => {
  admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 3, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '-1' }] }] });
});

after(async () => {
  await admin.deleteTopics({ topics: [topic], timeout: 20_000 }).catch(() => undefined);
  await admin.disconnect();
});

test('describeConfigs returns the topic config set at creation', async () => {
  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['retention.ms'] }] });
  assert.equal(described.resources[0]?.configEntries[0]?.configValue, '-1');
});

test('messages produced with keys are consumed in a group, and committed offsets are read back', async () => {
  const producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner, idempotent: true });
  await producer.connect();
  const messages = Array.from({ length: 30 }, (_, i) => ({ key: `group-${i % 5}`, value: `m${i}`, headers: { n: String(i) } }));
  await producer.send({ topic, messages, acks: -1 });
  await producer.disconnect();

  const groupId = `infratest-${uniqueSuffix()}`;
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1000 });
  const seen: EachMessagePayload[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: async (payload) => {
      seen.push(payload);
      await consumer.commitOffsets([{ topic, partition: payload.partition, offset: String(Number(payload.message.offset) + 1) }]);
    },
  });
  const outcome = await waitUntil(async () => seen.length >= messages.length, { timeoutMs: 30_000, intervalMs: 100 });
  await consumer.disconnect();
  assert.equal(outcome, 'ok', `consumed ${seen.length} of ${messages.length}`);

  assert.deepEqual(seen.map((p) => p.message.value?.toString()).sort(), messages.map((m) => m.value).sort());
  // Same key, same partition, in order.
  for (let g = 0; g < 5; g += 1) {
    const mine = seen.filter((p) => p.message.key?.toString() === `group-${g}`);
    assert.equal(new Set(mine.map((p) => p.partition)).size, 1);
    assert.deepEqual(
      mine.map((p) => Number(p.message.headers?.n?.toString())),
      [...mine.map((p) => Number(p.message.headers?.n?.toString()))].sort((a, b) => a - b),
    );
  }
  const committed = await retryRetriable(() => admin.fetchOffsets({ groupId, topics: [topic] }));
  const total = committed[0]!.partitions.reduce((sum, p) => sum + Number(p.offset), 0);
  assert.equal(total, messages.length);
});

// Int: a transaction bigger than a broker takes in one record batch — here a topic at a Kafka cluster's default
// max.message.bytes (1,048,588), where trajflow's own broker allows 16 MiB — is written through the producers'
// worker in several produce requests of the same transaction, all committed together, in order. And a member
// that missed a generation, whose partition's producer another member fenced meanwhile, writes that partition
// again once it is assigned to it (processors/exactly-once/fence-plan.ts).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../../core/config.js';
import { createKafka } from '../../../streams/kafka-client.js';
import { TransactionClient } from '../../../processors/exactly-once/transaction-client.js';
import { splitIntoRequests } from '../../../processors/exactly-once/produce-requests.js';
import { uniqueName, waitFor } from '../../helpers/kafka.js';

const config = loadConfig();
const kafka = createKafka(config, { quiet: true });
const clients: TransactionClient[] = [];
after(async () => {
  await Promise.all(clients.map((c) => c.close()));
});

test('3 MB in one transaction to a topic that takes 1 MB per batch: committed whole, read back in order', async () => {
  const topic = uniqueName('big-transaction');
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [{ topic, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'max.message.bytes', value: '1048588' }] }],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
  const messages = Array.from({ length: 3000 }, (_, i) => ({ key: `group-${i % 7}`, value: Buffer.from(`${String(i).padStart(6, '0')}:${'x'.repeat(1000)}`) }));
  assert.ok(splitIntoRequests([{ topic, messages }]).length >= 3, 'the transaction needs several requests');
  const client = new TransactionClient({ kafka: config.kafka, clientId: 'test-big-transaction', transactionalIdPrefix: uniqueName('txn'), generation: 0 });
  clients.push(client);
  await client.fence([0]);
  const written = await client.write(0, 0, [{ topic, messages }], null);
  assert.equal(written.outcome, 'committed');

  const seen: string[] = [];
  const consumer = kafka.consumer({ groupId: `test-big-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message }) => void seen.push(message.value!.toString('utf8', 0, 6)) });
    await waitFor(() => seen.length >= messages.length, `${messages.length} committed messages`);
  } finally {
    await consumer.disconnect();
  }
  assert.deepEqual(
    seen,
    messages.map((_, i) => String(i).padStart(6, '0')),
  );
});

test('a member that missed a generation gets its partition back: its producer is initialised again and its writes commit', async () => {
  const topic = uniqueName('missed-generation');
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  const prefix = uniqueName('txn');
  const message = (value: string) => [{ topic, messages: [{ key: 'k', value: Buffer.from(value) }] }];
  // X holds partition 0 in generation 1; Y takes it in generation 2, which X (dropped from the group) never sees.
  const x = new TransactionClient({ kafka: config.kafka, clientId: 'test-missed-generation-x', transactionalIdPrefix: prefix, generation: 1 });
  const y = new TransactionClient({ kafka: config.kafka, clientId: 'test-missed-generation-y', transactionalIdPrefix: prefix, generation: 2 });
  clients.push(x, y);
  await x.fence([0]);
  assert.equal((await x.write(0, 1, message('x1'), null)).outcome, 'committed');
  await y.fence([0]);
  assert.equal((await y.write(0, 2, message('y2'), null)).outcome, 'committed');
  // Generation 3 gives partition 0 back to X. Keeping the producer Y had fenced, X's write was refused
  // ('fenced') and every later one found no producer ('unowned'): the partition written by nobody.
  x.generation = 3;
  await x.fence([0]);
  assert.equal((await x.write(0, 3, message('x3'), null)).outcome, 'committed');
  assert.equal((await x.write(0, 3, message('x3b'), null)).outcome, 'committed');
  assert.deepEqual(x.partitions, [0]);
  // Y, the zombie now, is refused.
  assert.equal((await y.write(0, 2, message('y2b'), null)).outcome, 'fenced');

  const seen: string[] = [];
  const consumer = kafka.consumer({ groupId: `test-missed-generation-${randomUUID()}`, maxWaitTimeInMs: 100 });
  await consumer.connect();
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    await consumer.run({ eachMessage: async ({ message: m }) => void seen.push(m.value!.toString()) });
    await waitFor(() => seen.length >= 4, 'the four committed messages');
  } finally {
    await consumer.disconnect();
  }
  assert.deepEqual(seen, ['x1', 'y2', 'x3', 'x3b']);
});

test('a transaction of offsets only, begun right after a commit, commits (its AddOffsetsToTxn meets CONCURRENT_TRANSACTIONS and is retried)', async () => {
  const topic = uniqueName('offsets-only');
  const admin = kafka.admin();
  await admin.connect();
  const groupId = uniqueName('offsets-only-group');
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    const client = new TransactionClient({ kafka: config.kafka, clientId: 'test-offsets-only', transactionalIdPrefix: uniqueName('txn'), generation: 0 });
    clients.push(client);
    await client.fence([0]);
    const offsets = (offset: number) => ({ consumerGroupId: groupId, topics: [{ topic, partitions: [{ partition: 0, offset: String(offset) }] }] });
    // Measured before the retry: 69 of 100 such pairs failed with CONCURRENT_TRANSACTIONS (the pipeline failed with them).
    const outcomes: string[] = [];
    for (let i = 0; i < 20; i++) {
      const withOutput = await client.write(0, 0, [{ topic, messages: [{ key: 'k', value: Buffer.from(`m${i}`) }] }], offsets(2 * i + 1));
      const offsetsOnly = await client.write(0, 0, [], offsets(2 * i + 2));
      outcomes.push(withOutput.outcome, offsetsOnly.outcome);
    }
    assert.deepEqual(new Set(outcomes), new Set(['committed']));
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    assert.equal(committed!.partitions[0]!.offset, '40');
  } finally {
    await admin.disconnect();
  }
});

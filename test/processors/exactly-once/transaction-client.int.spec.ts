// Int: a transaction bigger than a broker takes in one record batch — here a topic at a Kafka cluster's default
// max.message.bytes (1,048,588), where trajflow's own broker allows 16 MiB — is written through the producers'
// worker in several produce requests of the same transaction, all committed together, in order.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../../../core/config.js';
import { createKafka } from '../../../infra/kafka/client.js';
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

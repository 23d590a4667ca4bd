// Broker start/stop rules on a private home and ports (a second broker; the shared one is never touched):
// cold start with format, reuse, restart after the process died with a stale pid file, data kept, stop.
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, test } from 'node:test';
import kafkajs from 'kafkajs';
import { createKafka } from '../../streams/kafka-client.js';
import { kafkaPaths, kafkaStatus, startKafka, stopKafka } from '../../infra/kafka/server.js';
import { isAlive, readPidFile, writePidFile } from '../../infra/process.js';
import { deadPid, privateConfig } from './helpers.js';
import { retryRetriable } from '../../streams/retry.js';

const { Partitioners } = kafkajs;
const config = await privateConfig();
const paths = kafkaPaths(config);
const topic = 'lifecycle';

after(async () => {
  await stopKafka(config);
  rmSync(config.home, { recursive: true, force: true });
});

async function readAll(): Promise<string[]> {
  const admin = createKafka(config).admin();
  await admin.connect();
  // Right after a restart the partition may have no leader yet (NOT_LEADER_FOR_PARTITION, retriable).
  const offsets = await retryRetriable(() => admin.fetchTopicOffsets(topic));
  await admin.disconnect();
  const end = Number(offsets[0]!.high);
  const values: string[] = [];
  const consumer = createKafka(config).consumer({ groupId: `reader-${Date.now()}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await new Promise<void>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) => {
        values.push(message.value!.toString());
        if (Number(message.offset) + 1 >= end) resolve();
      },
    });
  });
  await consumer.disconnect();
  return values;
}

test('a cold start formats the data folder and answers', async () => {
  const started = await startKafka(config);
  assert.equal(started.reused, false);
  assert.equal(started.running, true);
  assert.ok(existsSync(join(paths.dataDir, 'meta.properties')));
  assert.ok(existsSync(paths.clusterIdFile));
  assert.equal(readPidFile(paths.pidFile), started.pid);
  const status = await kafkaStatus(config);
  assert.equal(status.running, true);
  assert.equal(status.clusterId, started.clusterId);
});

test('starting again reuses the running broker', async () => {
  const pid = readPidFile(paths.pidFile);
  const again = await startKafka(config);
  assert.equal(again.reused, true);
  assert.equal(again.pid, pid);
});

test('after the broker died and its pid file is stale, start runs a new one and the data is still there', async () => {
  const admin = createKafka(config).admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
  await admin.disconnect();
  const producer = createKafka(config).producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ value: 'before-crash' }] });
  await producer.disconnect();

  const old = readPidFile(paths.pidFile)!;
  const clusterId = (await kafkaStatus(config)).clusterId;
  process.kill(-old, 'SIGKILL');
  while (isAlive(old)) await new Promise((r) => setTimeout(r, 50));
  writePidFile(paths.pidFile, deadPid());

  const restarted = await startKafka(config);
  assert.equal(restarted.reused, false);
  assert.notEqual(restarted.pid, old);
  assert.equal(restarted.clusterId, clusterId, 'same cluster, not re-formatted');
  assert.deepEqual(await readAll(), ['before-crash']);
});

test('stop then start (what other tests do mid-test) keeps the data', async () => {
  assert.equal(await stopKafka(config), true);
  assert.equal((await kafkaStatus(config)).running, false);
  const started = await startKafka(config);
  assert.equal(started.running, true);
  assert.deepEqual(await readAll(), ['before-crash']);
});

// Kafka's major versions on a private home and ports (the shared broker is never touched): a home formatted and
// written by Kafka 3.9.2 (the default before 4.x) starts as the default 4.x and keeps its data, status names the
// release that runs, and going back to 3.x on that data is refused with a message naming the setting and folder.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import kafkajs from 'kafkajs';
import { DEFAULT_KAFKA_VERSION, loadConfig, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { createKafka } from '../../streams/kafka-client.js';
import { kafkaPaths, kafkaStatus, startKafka, stopKafka } from '../../infra/kafka/server.js';
import { retryRetriable } from '../../streams/retry.js';
import { privateConfig } from './helpers.js';

const { Partitioners } = kafkajs;
const three = await privateConfig({ TRAJFLOW_KAFKA_VERSION: '3.9.2' });
const withVersion = (version: string | undefined): TrajflowConfig =>
  loadConfig({
    ...process.env,
    TRAJFLOW_KAFKA_BROKERS: '',
    TRAJFLOW_CLICKHOUSE_URL: '',
    TRAJFLOW_HOME: three.home,
    TRAJFLOW_KAFKA_PORT: String(three.kafka.port),
    TRAJFLOW_KAFKA_CONTROLLER_PORT: String(three.kafka.controllerPort),
    TRAJFLOW_CLICKHOUSE_HTTP_PORT: String(three.clickhouse.httpPort),
    TRAJFLOW_CLICKHOUSE_TCP_PORT: String(three.clickhouse.tcpPort),
    TRAJFLOW_KAFKA_VERSION: version,
  });
const four = withVersion(undefined);
const topic = 'versions';

after(async () => {
  await stopKafka(four);
  rmSync(three.home, { recursive: true, force: true });
});

async function offsetsEnd(config: TrajflowConfig): Promise<number> {
  const admin = createKafka(config).admin();
  await admin.connect();
  try {
    const offsets = await retryRetriable(() => admin.fetchTopicOffsets(topic));
    return Number(offsets[0]!.high);
  } finally {
    await admin.disconnect();
  }
}

test('a home made by Kafka 3.9.2 starts as the default 4.x with its data; status names the running release', { timeout: 300_000 }, async () => {
  assert.equal(four.kafka.version, DEFAULT_KAFKA_VERSION);
  const first = await startKafka(three);
  assert.equal(first.version, '3.9.2');
  assert.equal((await kafkaStatus(three)).version, '3.9.2');
  const admin = createKafka(three).admin();
  await admin.connect();
  await admin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: 1, replicationFactor: 1 }] });
  await admin.disconnect();
  const producer = createKafka(three).producer({ createPartitioner: Partitioners.DefaultPartitioner });
  await producer.connect();
  await producer.send({ topic, acks: -1, messages: [{ value: 'written by 3.9.2' }] });
  await producer.disconnect();

  // Configured 4.x while 3.9.2 still runs: the running broker is reused and named as what it is.
  const lines: string[] = [];
  const reused = await startKafka(four, (line) => lines.push(line));
  assert.equal(reused.reused, true);
  assert.equal(reused.version, '3.9.2');
  assert.equal((await kafkaStatus(four)).version, '3.9.2');
  assert.ok(
    lines.some((l) => l.includes(`not the configured ${DEFAULT_KAFKA_VERSION}`)),
    lines.join('\n'),
  );

  assert.equal(await stopKafka(four), true);
  const upgraded = await startKafka(four);
  assert.equal(upgraded.reused, false);
  assert.equal(upgraded.version, DEFAULT_KAFKA_VERSION);
  assert.equal(upgraded.clusterId, first.clusterId, 'the same cluster, not re-formatted');
  assert.equal((await kafkaStatus(four)).version, DEFAULT_KAFKA_VERSION);
  assert.equal(await offsetsEnd(four), 1, 'the record 3.9.2 wrote is still there');
});

test('3.x on data a 4.x broker ran on is refused, naming the setting and the folder', { timeout: 120_000 }, async () => {
  await stopKafka(four);
  await assert.rejects(
    startKafka(three),
    (e: unknown) => e instanceof ConfigError && e.message.includes('TRAJFLOW_KAFKA_VERSION=3.9.2') && e.message.includes(kafkaPaths(three).dataDir),
  );
  assert.equal((await kafkaStatus(three)).running, false);
});

// ensureTopics against the shared broker, under a unique prefix per run; the test's topics are deleted after.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { loadConfig, topicName } from '../../core/config.js';
import { createKafka } from '../../streams/kafka-client.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { uniqueSuffix } from './helpers.js';

const { ConfigResourceTypes } = kafkajs;
const config = { ...loadConfig(), topicPrefix: `infratest-${uniqueSuffix()}` };
let admin: Admin;

before(async () => {
  admin = createKafka(config).admin();
  await admin.connect();
});

after(async () => {
  const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 });
  await admin.disconnect();
});

test('ensureTopics creates every topic with its partitions and configs', async () => {
  const report = await ensureTopics(config, admin);
  assert.deepEqual([...report.created].sort(), topicSpecs.map((s) => topicName(config, s.name)).sort());
  assert.deepEqual(report.existing, []);

  const metadata = await admin.fetchTopicMetadata({ topics: report.created });
  for (const spec of topicSpecs) {
    const topic = metadata.topics.find((t) => t.name === topicName(config, spec.name));
    assert.equal(topic?.partitions.length, spec.partitions, spec.name);
  }
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topicSpecs.map((s) => ({ type: ConfigResourceTypes.TOPIC, name: topicName(config, s.name) })),
  });
  for (const spec of topicSpecs) {
    const resource = described.resources.find((r) => r.resourceName === topicName(config, spec.name));
    const values = Object.fromEntries((resource?.configEntries ?? []).map((e) => [e.configName, e.configValue]));
    for (const [name, value] of Object.entries(spec.configs)) assert.equal(values[name], value, `${spec.name} ${name}`);
  }
});

test('a second run finds them all and changes nothing', async () => {
  const report = await ensureTopics(config, admin);
  assert.deepEqual(report.created, []);
  assert.equal(report.existing.length, topicSpecs.length);
  assert.deepEqual(report.partitionsAdded, []);
  assert.deepEqual(report.differences, []);
});

test('a topic with too few partitions grows, and a differing config is reported but left alone', async () => {
  const prefix = `${config.topicPrefix}.drift`;
  const local = { ...config, topicPrefix: prefix };
  const steps = topicName(local, 'env.steps');
  const versions = topicName(local, 'policy.versions');
  await admin.createTopics({
    waitForLeaders: true,
    topics: [
      { topic: steps, numPartitions: 2, replicationFactor: 1, configEntries: [{ name: 'retention.ms', value: '-1' }] },
      { topic: versions, numPartitions: 1, replicationFactor: 1, configEntries: [{ name: 'cleanup.policy', value: 'delete' }] },
    ],
  });
  const report = await ensureTopics(local, admin);
  assert.deepEqual(report.partitionsAdded, [{ topic: steps, from: 2, to: 4 }]);
  assert.deepEqual(
    report.differences.map((d) => [d.topic, d.configs]),
    [[versions, [{ name: 'cleanup.policy', want: 'compact', have: 'delete' }]]],
  );
  const metadata = await admin.fetchTopicMetadata({ topics: [steps] });
  assert.equal(metadata.topics[0]?.partitions.length, 4);
  const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: versions, configNames: ['cleanup.policy'] }] });
  assert.equal(described.resources[0]?.configEntries[0]?.configValue, 'delete', "never changed behind the user's back");
});

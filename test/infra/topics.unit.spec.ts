import assert from 'node:assert/strict';
import { test } from 'node:test';
import kafkajs from 'kafkajs';
import { topicName } from '../../core/config.js';
import { ServiceError } from '../../core/errors.js';
import { describeDifferences, diffTopic, isInSync, retriableKafkaError, topicSpecs } from '../../infra/topics.js';

const spec = (name: string) => {
  const found = topicSpecs.find((s) => s.name === name);
  assert.ok(found, name);
  return found;
};

test('the topic list has the names, partitions and retention the design asks for', () => {
  assert.deepEqual(
    topicSpecs.map((s) => [s.name, s.partitions]),
    [
      ['env.steps', 4],
      ['trajectories', 4],
      ['samples', 4],
      ['learner.steps', 1],
      ['policy.versions', 1],
      ['policy.weights', 1],
      ['alerts', 1],
      ['deadletter', 1],
      ['rollout.stats', 1],
      ['evaluations', 1],
      ['processors.state', 1],
      ['schemas', 1],
    ],
  );
  for (const name of ['env.steps', 'trajectories', 'learner.steps', 'alerts', 'deadletter', 'rollout.stats', 'evaluations'])
    assert.equal(spec(name).configs['retention.ms'], '-1', name);
  assert.equal(spec('samples').configs['retention.ms'], String(7 * 24 * 3600 * 1000));
  assert.equal(spec('policy.versions').configs['cleanup.policy'], 'compact');
  assert.equal(spec('policy.weights').configs['cleanup.policy'], 'compact');
  assert.equal(spec('schemas').configs['cleanup.policy'], 'compact');
  assert.equal(spec('processors.state').configs['cleanup.policy'], 'compact');
  assert.equal(spec('env.steps').key, 'groupId');
  assert.equal(spec('evaluations').key, 'runId');
});

test('topic names go under the prefix and a dot', () => {
  assert.equal(topicName({ topicPrefix: 'run7' }, 'env.steps'), 'run7.env.steps');
});

test('a topic that matches its spec has no differences', () => {
  const s = spec('samples');
  const diff = diffTopic(s, 'p.samples', { partitions: 4, configs: { ...s.configs, 'segment.ms': '1' } });
  assert.ok(isInSync(diff));
  assert.deepEqual(describeDifferences([diff]), []);
});

test('fewer partitions than the spec are to be added; more are only reported', () => {
  const s = spec('env.steps');
  assert.equal(diffTopic(s, 't', { partitions: 2, configs: s.configs }).addPartitions, 2);
  const more = diffTopic(s, 't', { partitions: 6, configs: s.configs });
  assert.equal(more.addPartitions, 0);
  assert.equal(more.extraPartitions, 2);
  assert.match(describeDifferences([more])[0]!, /2 more partition/);
});

test('configs that differ or are missing are reported with both values', () => {
  const s = spec('policy.versions');
  const diff = diffTopic(s, 'p.policy.versions', { partitions: 1, configs: { 'cleanup.policy': 'delete' } });
  assert.deepEqual(diff.configs, [{ name: 'cleanup.policy', want: 'compact', have: 'delete' }]);
  const missing = diffTopic(s, 'x', { partitions: 1, configs: {} });
  assert.deepEqual(missing.configs, [{ name: 'cleanup.policy', want: 'compact', have: undefined }]);
  assert.match(describeDifferences([missing])[0]!, /\(unset\) but the spec says compact/);
});

test('retriableKafkaError: a retriable kafkajs error in the cause chain, not the ServiceError wrapping it', () => {
  const { KafkaJSProtocolError, KafkaJSNumberOfRetriesExceeded, KafkaJSError } = kafkajs;
  const unknownPartition = new KafkaJSProtocolError(
    Object.assign(new Error('This server does not host this topic-partition'), { type: 'UNKNOWN_TOPIC_OR_PARTITION', code: 3, retriable: true }),
  );
  assert.equal(retriableKafkaError(unknownPartition), true);
  assert.equal(retriableKafkaError(new KafkaJSNumberOfRetriesExceeded(unknownPartition, { retryCount: 5, retryTime: 3000 })), true);
  assert.equal(retriableKafkaError(new ServiceError('could not create or check topics', { retriable: true, cause: unknownPartition })), true);
  assert.equal(retriableKafkaError(new ServiceError('could not create or check topics', { retriable: true, cause: new Error('bug') })), false);
  assert.equal(retriableKafkaError(new KafkaJSError('Invalid partitions', { retriable: false })), false);
});

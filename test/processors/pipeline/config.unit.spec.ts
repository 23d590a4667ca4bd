// The processors' config: defaults filled in, the topics under the config's prefix unless named, the
// flush interval and batch window checked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { buildProcessorsConfig } from '../../../processors/pipeline/config.js';

const config = { topicPrefix: 'tf' };

test('defaults: one consumer group under the prefix, groups of 8 (at least 2), 20 ms / 64-group batches, written as queued', () => {
  const s = buildProcessorsConfig(config, {});
  assert.equal(s.consumerGroupId, 'tf.processors');
  assert.deepEqual([s.groupSize, s.minGroupSize, s.idleTimeoutMs, s.groupTimeoutMs], [8, 2, 120_000, 300_000]);
  assert.deepEqual([s.batchWindowMs, s.maxBatchGroups, s.flushIntervalMs, s.writeAsQueued], [20, 64, 100, true]);
  assert.equal(s.iterationIdleMs, undefined, "rollout-batches.ts's own default");
  assert.deepEqual(s.topics, {
    steps: 'tf.env.steps',
    samples: 'tf.samples',
    trajectories: 'tf.trajectories',
    rolloutStats: 'tf.rollout.stats',
    state: 'tf.processors.state',
    deadLetters: 'tf.deadletter',
  });
});

test('given values win; a topic named in the options replaces only that one', () => {
  const s = buildProcessorsConfig(config, { consumerGroupId: 'g', groupSize: 4, iterationIdleMs: 50, writeAsQueued: false, topics: { steps: 'in' } });
  assert.deepEqual([s.consumerGroupId, s.groupSize, s.iterationIdleMs, s.writeAsQueued], ['g', 4, 50, false]);
  assert.equal(s.topics.steps, 'in');
  assert.equal(s.topics.samples, 'tf.samples');
});

test('a flush interval or batch window that is not > 0 is a ConfigError', () => {
  assert.throws(() => buildProcessorsConfig(config, { flushIntervalMs: 0 }), ConfigError);
  assert.throws(() => buildProcessorsConfig(config, { batchWindowMs: -1 }), ConfigError);
  assert.throws(() => buildProcessorsConfig(config, { batchWindowMs: Number.NaN }), ConfigError);
});

// The sink's config: defaults filled in (maxInFlight follows batchRows), bounds checked, and the topic
// each stored event is read from under the config's prefix.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultMaxInFlight, SINK_DEFAULTS, buildSinkConfig } from '../../../storage/sink/config.js';
import { eventNames } from '../../../schemas/index.js';

const config = { topicPrefix: 'tf', clickhouse: { url: 'http://ch:8123', database: 'db' } } as const;

test("defaults: the group under the prefix, every event, 20,000-row batches, 3 batches held, the config's ClickHouse", () => {
  const s = buildSinkConfig(config);
  assert.equal(s.groupId, 'tf.sink');
  assert.deepEqual(s.events, eventNames);
  assert.equal(s.batchRows, SINK_DEFAULTS.batchRows);
  assert.equal(s.flushIntervalMs, 1000);
  assert.equal(s.insertsInFlight, 2);
  assert.equal(s.maxInFlight, 3 * SINK_DEFAULTS.batchRows);
  assert.equal(s.maxInFlightBytes, 256 * 2 ** 20);
  assert.deepEqual([s.retryInitialMs, s.retryMaxMs, s.insertTimeoutMs, s.drainTimeoutMs], [100, 5000, 60_000, 15_000]);
  assert.equal(s.sessionTimeoutMs, undefined, 'the consumer keeps its own default');
  assert.equal(s.includeSampleTokens, false);
  assert.equal(s.transcodeWorker, false);
  assert.deepEqual(s.clickhouse, config.clickhouse);
});

test('maxInFlight follows batchRows unless given', () => {
  assert.equal(buildSinkConfig(config, { batchRows: 500 }).maxInFlight, defaultMaxInFlight(500));
  assert.equal(buildSinkConfig(config, { batchRows: 500, maxInFlight: 7 }).maxInFlight, 7);
});

test('each stored event is read from its own topic under the prefix; other events are not read', () => {
  const s = buildSinkConfig(config, { events: ['step', 'sample', 'dead_letter'] });
  assert.deepEqual(
    [...s.eventByTopic],
    [
      ['tf.env.steps', 'step'],
      ['tf.samples', 'sample'],
      ['tf.deadletter', 'dead_letter'],
    ],
  );
});

test('a batch size, flush interval or insert concurrency out of bounds is a RangeError', () => {
  assert.throws(() => buildSinkConfig(config, { batchRows: 0 }), RangeError);
  assert.throws(() => buildSinkConfig(config, { flushIntervalMs: 0 }), RangeError);
  assert.throws(() => buildSinkConfig(config, { insertsInFlight: 0 }), RangeError);
  assert.throws(() => buildSinkConfig(config, { batchRows: Number.NaN }), RangeError);
});

// rollout_stats v2 adds closedBy (map<int>, default {}): the batch's groups by the reason their assembly closed
// them. A v1 event, written before it, still decodes, with closedBy {}.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { EventCodec, SchemaRegistry, validateEvent } from '../../schemas/index.js';
import { sampleEvents } from '../../bench/load/events.js';

const v1Json = readFileSync(new URL('../../schemas/rollout_stats/v1.avsc', import.meta.url), 'utf8');

test('a v1 rollout_stats event decodes with the current schema, closedBy {}', () => {
  const writer = new SchemaRegistry();
  writer.addVersion('rollout_stats', 1, v1Json);
  const { closedBy, ...v1Event } = sampleEvents.rollout_stats;
  assert.notDeepEqual(closedBy, {});
  const bytes = new EventCodec(writer).encode('rollout_stats', v1Event as never);
  const reader = new EventCodec(SchemaRegistry.fromSchemasDir());
  assert.equal(reader.registry.current('rollout_stats').version, 2);
  const read = reader.decode('rollout_stats', bytes);
  assert.deepStrictEqual(read, { ...v1Event, closedBy: {} });
  assert.equal(validateEvent('rollout_stats', read).ok, true);
});

test('a v2 rollout_stats event keeps its closedBy counts', () => {
  const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
  const event = sampleEvents.rollout_stats;
  assert.deepStrictEqual(codec.decode('rollout_stats', codec.encode('rollout_stats', event)).closedBy, { full: 7, timeout: 1 });
});

test('a negative closedBy count is refused, naming the reason', () => {
  const result = validateEvent('rollout_stats', { ...sampleEvents.rollout_stats, closedBy: { timeout: -1 } });
  assert.equal(result.ok, false);
  assert.match(JSON.stringify(result), /closedBy.*timeout/);
});

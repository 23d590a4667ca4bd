// Unit: the trained ids a learner remembers to refuse a redelivery (recent-samples.ts): the newest ones up to the
// limit, oldest forgotten first, restored from a checkpoint.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RECENT_IDS, RecentSamples } from '../../../learner/loop/recent-samples.js';

test('remembers up to the limit, forgetting the oldest; a repeat keeps its first place', () => {
  const recent = new RecentSamples(['a', 'b'], 3);
  recent.add(['c', 'a', 'd']);
  assert.deepEqual(recent.record(), ['b', 'c', 'd']);
  assert.equal(recent.has('a'), false);
  assert.equal(recent.has('d'), true);
});

test('a checkpoint records at most the limit, restored ones included', () => {
  const restored = Array.from({ length: 5 }, (_, i) => `s${i}`);
  assert.deepEqual(new RecentSamples(restored, 3).record(), ['s2', 's3', 's4']);
  assert.equal(RECENT_IDS, 20_000);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatProgress, type ActorStats } from '../../rollout/index.js';

const stats = (over: Partial<ActorStats>): ActorStats => ({
  episodes: 0,
  steps: 0,
  successes: 0,
  totalReward: 0,
  policyVersion: 0,
  iteration: -1,
  blockedIteration: null,
  ...over,
});

test('the progress line shows rates, success so far and versions', () => {
  const line = formatProgress(
    { stats: stats({ episodes: 300, steps: 900, successes: 30, totalReward: 30, policyVersion: 2, iteration: 4 }), atMs: 10_000 },
    { stats: stats({ episodes: 100, steps: 300 }), atMs: 5_000 },
    { startedAtMs: 0, learnerVersion: 3, maxStaleness: null },
  );
  assert.equal(line, 'actors: 300 episodes (40.0/s now, 30.0/s overall), 900 steps (120/s), success 10.0%, mean return 0.100, iteration 4, policy v2, learner v3');
});

test('a blocked actor says which learner version it waits for', () => {
  const line = formatProgress(
    { stats: stats({ episodes: 8, iteration: 1, blockedIteration: 2 }), atMs: 1000 },
    { stats: stats({}), atMs: 0 },
    { startedAtMs: 0, learnerVersion: 0, maxStaleness: 1 },
  );
  assert.match(line, /waiting: iteration 2 needs learner version ≥ 1 \(max staleness 1\)$/);
});

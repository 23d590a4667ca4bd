// Unit: the staleness bound (staleness.ts, pure): a sample more than --max-staleness versions behind the learner is
// dropped and counted, never trained; replayed samples keep their own rule; an update reports the staleness of its
// live samples, clamped at 0.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { REPLAY_ESTIMATOR_PREFIX } from '../../../learner/replay/marker.js';
import { dropStale, isReplayed, staleDropLine, stalenessOf } from '../../../learner/loop/staleness.js';

const sample = (id: string, policyVersion: number, estimator = 'gigpo') => ({ id, policyVersion, estimator });
const replayed = (id: string, policyVersion: number) => sample(id, policyVersion, `${REPLAY_ESTIMATOR_PREFIX}grpo`);

test('dropStale: past the bound dropped and counted, within it kept in order; null is no bound', () => {
  const samples = [sample('a', 5), sample('b', 3), sample('c', 4), sample('d', 2)];
  const { kept, dropped } = dropStale(samples, 5, 1);
  assert.deepEqual(
    kept.map((s) => s.id),
    ['a', 'c'],
  );
  assert.equal(dropped, 2);
  assert.deepEqual(
    dropStale(samples, 5, 0).kept.map((s) => s.id),
    ['a'],
    "K = 0: only the learner's own version",
  );
  assert.deepEqual(dropStale(samples, 5, null), { kept: samples, dropped: 0 });
});

test('dropStale: a replayed sample is never dropped, however old', () => {
  const { kept, dropped } = dropStale([replayed('r', 0), sample('s', 0)], 10, 1);
  assert.deepEqual(
    kept.map((s) => s.id),
    ['r'],
  );
  assert.equal(dropped, 1);
  assert.equal(isReplayed(replayed('r', 0)), true);
  assert.equal(isReplayed(sample('s', 0)), false);
});

test('stalenessOf: mean and max over the live samples; all of them when every one was replayed, clamped at 0', () => {
  assert.deepEqual(stalenessOf([sample('a', 4), sample('b', 2), replayed('r', 0)], 4), { mean: 1, max: 2 });
  assert.deepEqual(stalenessOf([replayed('r', 9), replayed('q', 2)], 4), { mean: 1, max: 2 }, 'a replay of a later version counts 0');
});

test('staleDropLine: which batch, the oldest version that sampled it, the learner version and the bound', () => {
  assert.equal(staleDropLine(3, { batchId: 'b7', iteration: 7 }, [5, 3, 4], 6, 1), 'learner: dropped 3 stale samples of b7 (iteration 7): sampled with v3, learner at v6, bound 1');
  assert.match(staleDropLine(1, { batchId: null, iteration: -1 }, [0], 2, 0), /of a batch by token budget \(iteration -1\)/);
});

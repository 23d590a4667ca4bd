// Unit: how an update deals its batch (minibatch-plan.ts): `epochs` passes of the same consecutive row ranges; with
// shuffleMinibatches each epoch has its own seeded row order (shuffledRows of the update and epoch), and one
// minibatch is never shuffled (the order could not change its single step).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { shuffledRows } from '../../../learner/train/batch.js';
import { minibatchPlan } from '../../../learner/train/minibatch-plan.js';

test('unshuffled: every epoch the same consecutive ranges, rows as built', () => {
  const plan = minibatchPlan(10, { epochs: 2, minibatches: 3, shuffleMinibatches: false }, 7);
  assert.equal(plan.length, 2);
  for (const epoch of plan) {
    assert.equal(epoch.order, null);
    assert.deepEqual(epoch.minibatches, [
      [0, 3],
      [3, 6],
      [6, 10],
    ]);
  }
});

test('shuffled: each epoch in the order shuffledRows(rows, update, epoch) gives', () => {
  const plan = minibatchPlan(10, { epochs: 3, minibatches: 2, shuffleMinibatches: true }, 7);
  plan.forEach((epoch, i) => assert.deepEqual(epoch.order, shuffledRows(10, 7, i)));
  assert.notDeepEqual(plan[0]!.order, plan[1]!.order);
  assert.deepEqual(minibatchPlan(10, { epochs: 3, minibatches: 2, shuffleMinibatches: true }, 7), plan, 'the same update gives the same plan');
});

test('one minibatch is never shuffled; fewer rows than minibatches gives one row each', () => {
  assert.equal(minibatchPlan(10, { epochs: 1, minibatches: 1, shuffleMinibatches: true }, 0)[0]!.order, null);
  assert.deepEqual(minibatchPlan(2, { epochs: 1, minibatches: 4, shuffleMinibatches: false }, 0)[0]!.minibatches, [
    [0, 1],
    [1, 2],
  ]);
});

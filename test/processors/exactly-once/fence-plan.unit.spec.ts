// Unit: a fence lets go of the producers of partitions no longer assigned and initialises every assigned one
// again, those already held included (a member dropped for a generation cannot tell its producer was fenced).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fencePlan } from '../../../processors/exactly-once/fence-plan.js';

test('a partition held before and assigned again is initialised again, not kept', () => {
  assert.deepEqual(fencePlan([0, 1], [1, 2]), { release: [0], initialise: [1, 2] });
  assert.deepEqual(fencePlan([3], [3]), { release: [], initialise: [3] });
});

test('nothing assigned lets every producer go; nothing held initialises the assignment, each partition once, in order', () => {
  assert.deepEqual(fencePlan([2, 0], []), { release: [0, 2], initialise: [] });
  assert.deepEqual(fencePlan([], [3, 1, 3]), { release: [], initialise: [1, 3] });
});

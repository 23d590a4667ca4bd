// Unit: when the evaluator evaluates — version 0 first, then every `every` versions (the newest, skipping what it
// fell behind on), and the final version whatever its distance; and the learner's env-step count per sample.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { isDue } from '../../../learner/eval/schedule.js';
import { turnsOf } from '../../../learner/train/batch.js';

test('isDue: the first version seen, then every `every` versions, then the final one', () => {
  const schedule = { every: 10, finalVersion: 25 };
  assert.equal(isDue(0, null, schedule), true, 'nothing evaluated yet: the untrained version');
  assert.equal(isDue(3, null, schedule), true, 'joined late: the newest');
  assert.equal(isDue(9, 0, schedule), false);
  assert.equal(isDue(10, 0, schedule), true);
  assert.equal(isDue(17, 0, schedule), true, 'fell behind: the newest is due, the ones between are skipped');
  assert.equal(isDue(24, 17, schedule), false);
  assert.equal(isDue(25, 17, schedule), true, 'the final version, 8 after the last');
  assert.equal(isDue(25, 25, schedule), false, 'never twice');
  assert.equal(isDue(5, 3, { every: 1, finalVersion: null }), true);
});

test("turnsOf: a sample's turns with policy tokens, its runs of loss-mask 1s", () => {
  assert.equal(turnsOf({ lossMask: [0, 0, 1, 0, 0, 1, 1, 0, 1] }), 3);
  assert.equal(turnsOf({ lossMask: [1, 1] }), 1);
  assert.equal(turnsOf({ lossMask: [0, 0] }), 0);
});

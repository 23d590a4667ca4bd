// Unit: which version the evaluator evaluates next (next-evaluation.ts): only the newest announced is kept (a late
// or repeated event does not replace it), it is due by the schedule, and evaluating the final version ends the run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NextEvaluation } from '../../../learner/eval/next-evaluation.js';

const v = (version: number) => ({ version });

test('nothing announced: nothing due; the first version seen is due', () => {
  const next = new NextEvaluation({ every: 5, finalVersion: null });
  assert.equal(next.due(), null);
  next.announced(v(3));
  assert.deepEqual(next.due(), v(3));
});

test('only the newest is kept: versions announced during an evaluation are skipped, an older event ignored', () => {
  const next = new NextEvaluation({ every: 5, finalVersion: null });
  next.announced(v(0));
  assert.equal(next.evaluated(0), false);
  for (const version of [1, 2, 6, 4]) next.announced(v(version));
  assert.deepEqual(next.due(), v(6), 'v6, not v5 on the way; the late v4 does not replace it');
  next.evaluated(6);
  assert.equal(next.due(), null, 'never twice');
  next.announced(v(10));
  assert.equal(next.due(), null, '4 past v6: not yet');
  next.announced(v(11));
  assert.deepEqual(next.due(), v(11));
});

test('the final version is due whatever its distance, and evaluating it ends the evaluator', () => {
  const next = new NextEvaluation({ every: 10, finalVersion: 12 });
  next.announced(v(0));
  next.evaluated(0);
  next.announced(v(10));
  assert.equal(next.evaluated(next.due()!.version), false);
  next.announced(v(12));
  assert.deepEqual(next.due(), v(12));
  assert.equal(next.evaluated(12), true);
});

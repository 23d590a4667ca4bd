import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EvalSeedInTrainingError } from '../../envs/errors.js';
import { assertTrainingSeed, EVAL_SEEDS, isEvalSeed, TRAIN_SEEDS } from '../../envs/seeds.js';

describe('seed split', () => {
  test('training and evaluation ranges are disjoint', () => {
    assert.equal(TRAIN_SEEDS.end, EVAL_SEEDS.first);
    assert.ok(TRAIN_SEEDS.contains(0) && TRAIN_SEEDS.contains(999_999_999));
    assert.ok(!TRAIN_SEEDS.contains(1_000_000_000) && EVAL_SEEDS.contains(1_000_000_000));
    assert.ok(EVAL_SEEDS.end <= 2 ** 32);
    assert.deepEqual(EVAL_SEEDS.take(3), [1_000_000_000, 1_000_000_001, 1_000_000_002]);
    assert.deepEqual(TRAIN_SEEDS.take(2, 10_000), [10_000, 10_001]);
    assert.throws(() => TRAIN_SEEDS.take(2, TRAIN_SEEDS.end - 1), RangeError);
  });

  test('assertTrainingSeed throws for held-out seeds only', () => {
    assert.doesNotThrow(() => assertTrainingSeed(123));
    assert.ok(isEvalSeed(EVAL_SEEDS.first));
    assert.throws(
      () => assertTrainingSeed(EVAL_SEEDS.first + 5),
      (e: unknown) => e instanceof EvalSeedInTrainingError && /TRAIN_SEEDS/.test(e.message) && !e.retriable,
    );
  });
});

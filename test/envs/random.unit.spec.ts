import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EvalSeedInTrainingError } from '../../envs/errors.js';
import { Rng } from '../../envs/random.js';
import { assertTrainingSeed, EVAL_SEEDS, isEvalSeed, TRAIN_SEEDS } from '../../envs/seeds.js';

describe('Rng', () => {
  test('the same seed and stream give the same draws; other seeds and streams differ', () => {
    const draws = (seed: number, stream = 0) => {
      const rng = new Rng(seed, stream);
      return Array.from({ length: 8 }, () => rng.next());
    };
    assert.deepEqual(draws(42), draws(42));
    assert.notDeepEqual(draws(42), draws(43));
    assert.notDeepEqual(draws(42, 1), draws(42, 2));
    // Seeds above 2^32 are folded in, not truncated away.
    assert.notDeepEqual(draws(5), draws(5 + 2 ** 32));
  });

  test('next is uniform in [0, 1); int and intBetween stay in range', () => {
    const rng = new Rng(7);
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const x = rng.next();
      assert.ok(x >= 0 && x < 1);
      buckets[Math.floor(x * 10)] += 1;
    }
    for (const b of buckets) assert.ok(Math.abs(b - 10_000) < 500, `bucket ${b}`);
    for (let i = 0; i < 1000; i++) {
      const n = rng.int(4);
      assert.ok(Number.isInteger(n) && n >= 0 && n < 4);
      const m = rng.intBetween(1, 5);
      assert.ok(m >= 1 && m <= 5);
    }
  });
});

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

// aggLoss (docs/algorithms.md §1.1): each mode on hand-worked 2×3 examples, all-masked rows and batches, tokenCount, guards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, TrajflowError } from '../../../core/errors.js';
import { aggLoss, type LossAggMode } from '../../../learner/loss/index.js';
import { near, scalar, tf, values } from './setup.js';

const loss = () =>
  tf.tensor2d([
    [1, 2, 3],
    [4, 5, 6],
  ]);
const agg = (lossMat: tf.Tensor, mask: number[][], mode: LossAggMode, options?: Parameters<typeof aggLoss>[3]) =>
  tf.tidy(() => scalar(aggLoss(lossMat, tf.tensor2d(mask), mode, options)));

// Example A: row 0 has 3 valid tokens (1, 2, 3), row 1 has 1 (4). Σ = 10 over 4 tokens, T = 3.
const maskA = [
  [1, 1, 1],
  [1, 0, 0],
];

test('token-mean: Σ(loss·mask) / number of valid tokens', () => {
  near(agg(loss(), maskA, 'token-mean'), 10 / 4); // (1+2+3+4)/4 = 2.5
});

test('token-mean with tokenCount divides by the whole batch count instead', () => {
  // This minibatch holds 4 of the batch's 8 valid tokens: 10/8 = 1.25, so two such halves sum to the batch mean.
  near(agg(loss(), maskA, 'token-mean', { tokenCount: 8 }), 1.25);
  // tokenCount applies to token-mean only: seq-mean-token-mean is unchanged (row means 2 and 4 → 3).
  near(agg(loss(), maskA, 'seq-mean-token-mean', { tokenCount: 8 }), 3);
});

test('seq-mean-token-mean: mean per sequence, then mean over sequences', () => {
  near(agg(loss(), maskA, 'seq-mean-token-mean'), 3); // row 0: 6/3 = 2, row 1: 4/1 = 4 → (2+4)/2 = 3
});

test('seq-mean-token-sum: sum per sequence, then mean over sequences', () => {
  near(agg(loss(), maskA, 'seq-mean-token-sum'), 5); // row sums 6 and 4 → (6+4)/2 = 5
});

test('seq-mean-token-sum-norm: Σ over all tokens / T, or / lossScaleFactor; not divided by the number of sequences', () => {
  near(agg(loss(), maskA, 'seq-mean-token-sum-norm'), 10 / 3); // 10 / T(3) = 3.3333
  near(agg(loss(), maskA, 'seq-mean-token-sum-norm', { lossScaleFactor: 5 }), 2); // 10 / 5
});

// Example B: row 1 is all masked. Row 0 has tokens 2 and 3 (Σ 5, 2 tokens).
const maskB = [
  [0, 1, 1],
  [0, 0, 0],
];

test('an all-masked row: token modes ignore it, seq-mean modes leave it out of the count of sequences', () => {
  near(agg(loss(), maskB, 'token-mean'), 2.5); // 5 / 2 tokens
  near(agg(loss(), maskB, 'seq-mean-token-mean'), 2.5); // only row 0: 5/2 (not (2.5 + 0)/2 = 1.25)
  near(agg(loss(), maskB, 'seq-mean-token-sum'), 5); // only row 0: 5 (not (5 + 0)/2 = 2.5; current verl excludes it too)
  near(agg(loss(), maskB, 'seq-mean-token-sum-norm'), 5 / 3); // 5 / T
});

test('NaN or Inf under the mask does not reach the value', () => {
  const dirty = tf.tensor2d([
    [Number.NaN, 2, 3],
    [Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.NaN],
  ]);
  near(agg(dirty, maskB, 'token-mean'), 2.5);
  near(agg(dirty, maskB, 'seq-mean-token-mean'), 2.5);
  near(agg(dirty, maskB, 'seq-mean-token-sum'), 5);
  near(agg(dirty, maskB, 'seq-mean-token-sum-norm'), 5 / 3);
});

test('an all-masked batch gives 0 (not NaN) in every mode, with a zero gradient', () => {
  const none = [
    [0, 0, 0],
    [0, 0, 0],
  ];
  for (const mode of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const) {
    assert.equal(agg(loss(), none, mode), 0, mode);
    const grad = tf.tidy(() => values(tf.grad((x: tf.Tensor) => aggLoss(x, tf.tensor2d(none), mode))(loss())));
    assert.deepEqual(
      grad.map((g) => g === 0),
      [true, true, true, true, true, true],
      `${mode} gradient ${grad}`,
    );
  }
  assert.equal(agg(loss(), none, 'token-mean', { tokenCount: 0 }), 0);
});

test('gradient of token-mean wrt the loss matrix is mask / count', () => {
  const grad = tf.tidy(() => values(tf.grad((x: tf.Tensor) => aggLoss(x, tf.tensor2d(maskA), 'token-mean'))(loss())));
  near(grad, [0.25, 0.25, 0.25, 0.25, 0, 0]); // 1/4 on the 4 valid tokens
});

test('a bool or int32 mask works like the float one', () => {
  const value = tf.tidy(() => scalar(aggLoss(loss(), tf.tensor2d(maskA, undefined, 'bool'), 'seq-mean-token-mean')));
  near(value, 3);
  near(
    tf.tidy(() => scalar(aggLoss(loss(), tf.tensor2d(maskA, undefined, 'int32'), 'token-mean'))),
    2.5,
  );
});

test('bad arguments throw with the fix in the message', () => {
  assert.throws(
    () => aggLoss(loss(), tf.ones([2, 2]), 'token-mean'),
    (e: unknown) => e instanceof TrajflowError && /lossMat must be \[B, T\]/.test(e.message),
  );
  assert.throws(
    () => aggLoss(loss(), tf.ones([2, 3]), 'token-sum' as LossAggMode),
    (e: unknown) => e instanceof ConfigError && /must be one of 'token-mean'/.test(e.message),
  );
  assert.throws(() => aggLoss(loss(), tf.ones([2, 3]), 'token-mean', { tokenCount: -1 }), ConfigError);
  assert.throws(() => aggLoss(loss(), tf.ones([2, 3]), 'seq-mean-token-sum-norm', { lossScaleFactor: 0 }), /lossScaleFactor must be a finite number > 0/);
});

test('no tensor is left behind and the inputs stay alive', () => {
  const lossMat = loss();
  const mask = tf.tensor2d(maskB);
  const before = tf.memory().numTensors;
  for (const mode of ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'] as const) {
    tf.tidy(() => {
      aggLoss(lossMat, mask, mode, { tokenCount: 3 });
    });
  }
  assert.equal(tf.memory().numTensors, before);
  assert.equal(lossMat.isDisposed || mask.isDisposed, false);
  tf.dispose([lossMat, mask]);
});

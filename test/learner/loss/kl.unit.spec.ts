// klPenalty (docs/algorithms.md §2.4): each estimator's value and gradient, k3's clamps, and the straight-through "+" variants.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { klPenalty, type KlEstimator } from '../../../learner/loss/index.js';
import { near, tf, values } from './setup.js';

// logp = 0 everywhere, so d = logp − refLogp = −refLogp: d = [0.5, −0.5, −1, 0].
const logp = () => tf.zeros([1, 4]);
const ref = () => tf.tensor2d([[-0.5, 0.5, 1, 0]]);
const E = Math.exp;

const valueOf = (estimator: KlEstimator, refLogp = ref(), lp = logp()) => tf.tidy(() => values(klPenalty(lp, refLogp, estimator)));
const gradOf = (estimator: KlEstimator, refLogp = ref(), lp = logp()) => tf.tidy(() => values(tf.grad((x: tf.Tensor) => tf.sum(klPenalty(x, refLogp, estimator)))(lp)));

test('k1 = d, gradient 1', () => {
  near(valueOf('k1'), [0.5, -0.5, -1, 0]);
  near(gradOf('k1'), [1, 1, 1, 1]);
});

test('abs = |d|, gradient sign(d) (0 at d = 0, as torch)', () => {
  near(valueOf('abs'), [0.5, 0.5, 1, 0]);
  near(gradOf('abs'), [1, -1, -1, 0]);
});

test('k2 = 0.5·d², gradient d', () => {
  near(valueOf('k2'), [0.125, 0.125, 0.5, 0]); // 0.5·0.25, 0.5·0.25, 0.5·1, 0
  near(gradOf('k2'), [0.5, -0.5, -1, 0]);
});

test('k3 = e^{−d} − (−d) − 1, gradient 1 − e^{−d}', () => {
  // d = 0.5: e^{−0.5} + 0.5 − 1 = 0.60653066 − 0.5 = 0.10653066
  // d = −0.5: e^{0.5} − 0.5 − 1 = 1.64872127 − 1.5 = 0.14872127
  // d = −1: e − 1 − 1 = 0.71828183;  d = 0: 1 + 0 − 1 = 0
  near(valueOf('k3'), [E(-0.5) - 0.5, E(0.5) - 1.5, Math.E - 2, 0]);
  near(valueOf('k3'), [0.10653066, 0.14872127, 0.71828183, 0]);
  // d/dlogp (e^{−d} + d − 1) = 1 − e^{−d}: 1 − 0.60653066 = 0.39346934, 1 − 1.64872127 = −0.64872127, 1 − e = −1.71828183, 0
  near(gradOf('k3'), [0.39346934, -0.64872127, -1.71828183, 0]);
});

test('k3 clamps −d to [−20, 20] and the result to [−10, 10]; a clamp zeroes the gradient', () => {
  // d = −25: −d = 25 → 20; e^20 − 20 − 1 ≈ 4.85e8 → 10.   d = 25: −d = −25 → −20; e^{−20} + 20 − 1 ≈ 19 → 10.
  // d = −3: −d = 3 (inside); e^3 − 3 − 1 = 16.0855 → 10 (output clamp only).   d = −2: e^2 − 3 = 4.3890561 (no clamp).
  const far = () => tf.tensor2d([[25, -25, 3, 2]]); // refLogp, so d = −refLogp = [−25, 25, −3, −2]
  near(valueOf('k3', far()), [10, 10, 10, 4.3890561]);
  near(gradOf('k3', far()), [0, 0, 0, 1 - E(2)]); // 1 − e^2 = −6.3890561 on the unclamped token
});

test('k1+ and k3+: the value of k1 / k3, the gradient of k2 (= d)', () => {
  assert.deepEqual(valueOf('k1+'), valueOf('k1'));
  assert.deepEqual(valueOf('k3+'), valueOf('k3'));
  near(gradOf('k1+'), [0.5, -0.5, -1, 0]);
  near(gradOf('k3+'), [0.5, -0.5, -1, 0]);
  // Even where k3 is clamped (its own gradient 0), k3+ passes k2's gradient d: [−25, 25, −3, −2].
  const far = () => tf.tensor2d([[25, -25, 3, 2]]);
  assert.deepEqual(valueOf('k3+', far()), valueOf('k3', far()));
  near(gradOf('k3+', far()), [-25, 25, -3, -2]);
});

test("gradient wrt refLogp of the straight-through variants is k2's too (−d)", () => {
  const grad = tf.tidy(() => values(tf.grad((r: tf.Tensor) => tf.sum(klPenalty(logp(), r, 'k3+')))(ref())));
  near(grad, [-0.5, 0.5, 1, 0]);
});

test('bad estimator or shapes throw', () => {
  assert.throws(
    () => klPenalty(logp(), ref(), 'low_var_kl' as KlEstimator),
    (e: unknown) => e instanceof ConfigError && /KL estimator must be one of 'k1'/.test(e.message),
  );
  assert.throws(() => klPenalty(logp(), tf.zeros([1, 3]), 'k1'), /refLogp must be \[B, T\]/);
});

test('no tensor is left behind and the inputs stay alive', () => {
  const lp = logp();
  const r = ref();
  const before = tf.memory().numTensors;
  for (const estimator of ['k1', 'abs', 'k2', 'k3', 'k1+', 'k3+'] as const) {
    tf.tidy(() => {
      klPenalty(lp, r, estimator);
    });
  }
  assert.equal(tf.memory().numTensors, before);
  assert.equal(lp.isDisposed || r.isDisposed, false);
  tf.dispose([lp, r]);
});

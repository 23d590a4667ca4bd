// entropyFromLogits (docs/algorithms.md §8): logsumexp(z) − Σ softmax(z)·z against hand values, its gradient, stability and shapes;
// marginalEntropyFromLogits: the entropy of the average distribution over the masked positions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TrajflowError } from '../../../core/errors.js';
import { entropyFromLogits, marginalEntropyFromLogits } from '../../../learner/loss/index.js';
import { near, tf, values } from './setup.js';

const LN2 = Math.LN2;

test('uniform over V gives log V, whatever the common logit', () => {
  // [B=2, T=1, V=4]: zeros and sevens are both uniform → ln 4 = 1.38629436
  const h = tf.tidy(() => entropyFromLogits(tf.tensor3d([[[0, 0, 0, 0]], [[7, 7, 7, 7]]])));
  assert.deepEqual(h.shape, [2, 1]);
  near(values(h), [Math.log(4), Math.log(4)]);
  h.dispose();
});

test('two known 3-logit cases', () => {
  // z = [0, ln 2, 0] → softmax [1/4, 1/2, 1/4] → H = 2·(1/4)·ln 4 + (1/2)·ln 2 = 1.5·ln 2 = 1.03972077
  // z = [1, 2, 3]: lse = 3 + ln(1 + e^{−1} + e^{−2}) = 3 + ln 1.50321472 = 3.40760596
  //   softmax = e^{z − lse} = [0.09003057, 0.24472847, 0.66524096]
  //   Σ p·z = 0.09003057 + 0.48945694 + 1.99572288 = 2.57521039 → H = 3.40760596 − 2.57521039 = 0.83239558
  const h = tf.tidy(() =>
    values(
      entropyFromLogits(
        tf.tensor3d([
          [
            [0, LN2, 0],
            [1, 2, 3],
          ],
        ]),
      ),
    ),
  );
  near(h, [1.5 * LN2, 0.83239558]);
});

test("temperature is the caller's: logits / 2 flatten the distribution", () => {
  // z = [1, 2, 3] / 2 = [0.5, 1, 1.5]: lse = 1.5 + ln(1 + e^{−0.5} + e^{−1}) = 1.5 + ln 1.97441945 = 2.18026967
  //   softmax = [0.18632372, 0.30719589, 0.50648039], Σ p·z = 0.09316186 + 0.30719589 + 0.75972059 = 1.16007834
  //   H = 2.18026967 − 1.16007834 = 1.02019133 (> 0.83239558 at temperature 1)
  const h = tf.tidy(() => values(entropyFromLogits(tf.div(tf.tensor3d([[[1, 2, 3]]]), 2))));
  near(h, [1.02019133]);
});

test('large logits stay finite (a near one-hot distribution has entropy ≈ 0)', () => {
  const h = tf.tidy(() => values(entropyFromLogits(tf.tensor3d([[[1000, 0, 0]]]))));
  assert.ok(Number.isFinite(h[0]!));
  near(h, [0], 1e-4);
});

test('gradient: dH/dz_i = −p_i·(log p_i + H)', () => {
  // z = [0, ln 2, 0]: p = [1/4, 1/2, 1/4], log p = [−2 ln 2, −ln 2, −2 ln 2], H = 1.5 ln 2
  //   i = 0, 2: −(1/4)(−2 ln 2 + 1.5 ln 2) = 0.125 ln 2 = 0.08664340;  i = 1: −(1/2)(−ln 2 + 1.5 ln 2) = −0.25 ln 2 = −0.17328680
  const g = tf.tidy(() => values(tf.grad((z: tf.Tensor) => tf.sum(entropyFromLogits(z)))(tf.tensor3d([[[0, LN2, 0]]]))));
  near(g, [0.125 * LN2, -0.25 * LN2, 0.125 * LN2]);
});

test('logits must be [B, T, V]; no tensor is left behind', () => {
  assert.throws(
    () => entropyFromLogits(tf.zeros([2, 3])),
    (e: unknown) => e instanceof TrajflowError && /logits must be \[B, T, V\]/.test(e.message),
  );
  const logits = tf.tensor3d([[[1, 2, 3]]]);
  const before = tf.memory().numTensors;
  tf.tidy(() => {
    entropyFromLogits(logits);
  });
  assert.equal(tf.memory().numTensors, before);
  assert.equal(logits.isDisposed, false);
  logits.dispose();
});

test('marginal entropy: sure but different choices at two positions average to ln 2; masked positions do not count', () => {
  // Position 1 sure of token 0, position 2 sure of token 1, position 3 (masked out) sure of token 2.
  const logits = tf.tensor3d([
    [
      [30, 0, 0],
      [0, 30, 0],
      [0, 0, 30],
    ],
  ]);
  const mask = tf.tensor2d([[1, 1, 0]]);
  const h = marginalEntropyFromLogits(logits, mask);
  near(values(h), [LN2]);
  const perToken = tf.tidy(() => entropyFromLogits(logits));
  assert.ok(Math.max(...values(perToken)) < 1e-9, 'each position on its own is sure');
  const same = tf.tidy(() =>
    marginalEntropyFromLogits(
      tf.tensor3d([
        [
          [30, 0, 0],
          [30, 0, 0],
        ],
      ]),
      tf.tensor2d([[1, 1]]),
    ),
  );
  assert.ok(values(same)[0]! < 1e-9, 'the same sure choice everywhere: no spread');
  tf.dispose([logits, mask, h, perToken, same]);
});

test('marginal entropy: its gradient pushes a shared preference back towards the other tokens', () => {
  const logits = tf.variable(
    tf.tensor3d([
      [
        [1, 0],
        [1, 0],
      ],
    ]),
  );
  const mask = tf.tensor2d([[1, 1]]);
  const { grads } = tf.variableGrads(() => tf.neg(marginalEntropyFromLogits(logits, mask)), [logits]);
  const g = values(grads[logits.name]!);
  assert.ok(g[0]! > 0 && g[1]! < 0, `minimising −H lowers the preferred token's logit: ${g.join(', ')}`);
  assert.throws(() => marginalEntropyFromLogits(tf.tensor2d([[1, 0]]), mask), TrajflowError);
  tf.dispose([logits, mask, ...Object.values(grads)]);
});

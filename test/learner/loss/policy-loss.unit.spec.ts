// policyLoss (docs/algorithms.md §2.1–2.4, §8): clipping on both sides, dual clip, clip fractions, masking and its gradient, IS weights, entropy/KL terms, no leak.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { buildPolicyLossConfig, policyLoss, type PolicyLossInputs, type PolicyLossOutput } from '../../../learner/loss/index.js';
import { near, scalar, tf, values } from './setup.js';

const L = Math.log;
const defaults = buildPolicyLossConfig(); // ε_low 0.2, ε_high 0.28, c 3, token-mean

/** Reads every scalar of an output (then disposes it). */
function read(out: PolicyLossOutput) {
  const r = {
    loss: scalar(out.loss),
    pgLoss: scalar(out.pgLoss),
    entropy: scalar(out.entropy),
    kl: scalar(out.kl),
    clipFracHigh: scalar(out.metrics.clipFracHigh),
    clipFracLow: scalar(out.metrics.clipFracLow),
    clipFracDual: scalar(out.metrics.clipFracDual),
    ppoKl: scalar(out.metrics.ppoKl),
  };
  tf.dispose(out as unknown as tf.TensorContainer);
  return r;
}

// The clipping example. oldLogp = −1 everywhere and logp = −1 + ln(ratio), so log_ratio = ln(ratio).
//            ratio   A      L1 = −A·r   L2 = −A·clip(r, 0.8, 1.28)   Lclip = max   dual (A<0): min(Lclip, −3A)
// row 0 t0   1.5    +1     −1.5        −1.28                        −1.28 (high clip)
//       t1   0.5    −1     +0.5        +0.8                         +0.8  (low clip)   min(0.8, 3) = 0.8
//       t2   1.1    +2     −2.2        −2.2                         −2.2  (inside)
//       t3   1.0    −0.5   +0.5        +0.5                         +0.5  (inside)     min(0.5, 1.5) = 0.5
// row 1 t0   10     −1     +10         +1.28                        +10               min(10, 3) = 3 (dual clip)
//       t1   0.5    +1     −0.5        −0.8                         −0.5  (A>0, r<0.8: not clipped)
//       t2, t3: masked, with wild values (A ±100, log_ratio 5 and 20).
// pg sum over the 6 valid tokens = −1.28 + 0.8 − 2.2 + 0.5 + 3 − 0.5 = 0.32 → token-mean 0.32/6 = 0.05333333
const clipInputs = (): PolicyLossInputs => ({
  logp: tf.tensor2d([
    [L(1.5) - 1, L(0.5) - 1, L(1.1) - 1, -1],
    [L(10) - 1, L(0.5) - 1, 4, 19],
  ]),
  oldLogp: tf.fill([2, 4], -1),
  advantages: tf.tensor2d([
    [1, -1, 2, -0.5],
    [-1, 1, 100, -100],
  ]),
  mask: tf.tensor2d([
    [1, 1, 1, 1],
    [1, 1, 0, 0],
  ]),
});

test('clipped surrogate with Clip-Higher and dual clip, and the clip fractions', () => {
  const r = tf.tidy(() => read(policyLoss(clipInputs(), defaults)));
  near(r.pgLoss, 0.32 / 6);
  near(r.loss, 0.32 / 6);
  // Fractions over the 6 valid tokens: high clip row 0 t0; low clip row 0 t1; dual clip row 1 t0 (Lclip 10 > −A·c = 3).
  near(r.clipFracHigh, 1 / 6);
  near(r.clipFracLow, 1 / 6);
  near(r.clipFracDual, 1 / 6);
  // ppo_kl = mean(−log_ratio) = −ln(1.5·0.5·1.1·1·10·0.5)/6 = −ln(4.125)/6 = −1.41706602/6 = −0.23617767
  near(r.ppoKl, -L(4.125) / 6);
  near(r.entropy, 0);
  near(r.kl, 0);
});

test('gradient wrt logp: zero where a clip is active or the token is masked, −A·ratio/N elsewhere', () => {
  const inputs = clipInputs();
  const grad = tf.tidy(() => values(tf.grad((logp: tf.Tensor) => policyLoss({ ...inputs, logp }, defaults).loss)(inputs.logp)));
  // d(−A·ratio)/d logp = −A·ratio, divided by N = 6:
  //   row 0: t0 high-clipped 0, t1 low-clipped 0, t2 −2·1.1/6 = −0.36666667, t3 +0.5·1/6 = 0.08333333
  //   row 1: t0 dual-clipped (−A·c is constant) 0, t1 −1·0.5/6 = −0.08333333, t2 and t3 masked 0
  near(grad, [0, 0, -2.2 / 6, 0.5 / 6, 0, -0.5 / 6, 0, 0]);
  tf.dispose(inputs as unknown as tf.TensorContainer);
});

test('clipRatioC null turns dual clip off', () => {
  const r = tf.tidy(() => read(policyLoss(clipInputs(), buildPolicyLossConfig({ clipRatioC: null }))));
  // row 1 t0 keeps Lclip = 10 instead of 3: (0.32 − 3 + 10)/6 = 7.32/6 = 1.22
  near(r.pgLoss, 7.32 / 6);
  near(r.clipFracDual, 0);
  near(r.clipFracHigh, 1 / 6);
});

test('a larger dual-clip constant bites later', () => {
  // c = 12 > 10: row 1 t0 is no longer dual-clipped; same as no dual clip.
  const r = tf.tidy(() => read(policyLoss(clipInputs(), buildPolicyLossConfig({ clipRatioC: 12 }))));
  near(r.pgLoss, 7.32 / 6);
  near(r.clipFracDual, 0);
});

// The masking example: ratio 1 everywhere (inside the clip range), so pg = −A on every token.
//   A = [[1, −2, 3], [0.5, 7, −7]], mask = [[1, 1, 0], [1, 0, 0]] → pg on the 3 valid tokens: −1, 2, −0.5
//   token-mean = (−1 + 2 − 0.5)/3 = 0.5/3 = 0.16666667; gradient −A/3 on valid tokens.
const maskLogp = () =>
  tf.tensor2d([
    [-0.7, -1.2, -2],
    [-0.1, -3, -0.5],
  ]);
const maskInputs = (logp = maskLogp()): PolicyLossInputs => ({
  logp,
  oldLogp: maskLogp(),
  advantages: tf.tensor2d([
    [1, -2, 3],
    [0.5, 7, -7],
  ]),
  mask: tf.tensor2d([
    [1, 1, 0],
    [1, 0, 0],
  ]),
});

test('masked tokens change nothing in the loss', () => {
  const base = tf.tidy(() => read(policyLoss(maskInputs(), defaults)));
  near(base.pgLoss, 0.5 / 3);
  // Same valid tokens; the masked ones get other advantages, a far-off logp and huge old log-probs.
  const other = tf.tidy(() =>
    read(
      policyLoss(
        {
          logp: tf.tensor2d([
            [-0.7, -1.2, 30],
            [-0.1, -50, 8],
          ]),
          oldLogp: tf.tensor2d([
            [-0.7, -1.2, -40],
            [-0.1, 60, -9],
          ]),
          advantages: tf.tensor2d([
            [1, -2, -1e6],
            [0.5, 1e6, 3],
          ]),
          mask: tf.tensor2d([
            [1, 1, 0],
            [1, 0, 0],
          ]),
        },
        defaults,
      ),
    ),
  );
  assert.equal(other.loss, base.loss);
  assert.equal(other.pgLoss, base.pgLoss);
  assert.equal(other.ppoKl, base.ppoKl);
  assert.equal(other.clipFracHigh + other.clipFracLow + other.clipFracDual, 0);
});

test('gradient wrt logp is exactly zero on masked tokens and −A/N on the others', () => {
  const inputs = maskInputs();
  const grad = tf.tidy(() => values(tf.grad((logp: tf.Tensor) => policyLoss({ ...inputs, logp }, defaults).loss)(inputs.logp)));
  // valid: −1/3 = −0.33333333, +2/3 = 0.66666667, −0.5/3 = −0.16666667; masked: exactly 0
  near(grad, [-1 / 3, 2 / 3, 0, -0.5 / 3, 0, 0]);
  assert.deepEqual(
    [2, 4, 5].map((i) => grad[i] === 0),
    [true, true, true],
  );
  assert.ok([0, 1, 3].every((i) => grad[i] !== 0));
});

test('oldLogp is a constant: passing logp itself (on-policy) still gives the policy gradient −A/N', () => {
  const inputs = maskInputs();
  const grad = tf.tidy(() => values(tf.grad((logp: tf.Tensor) => policyLoss({ ...inputs, logp, oldLogp: logp }, defaults).loss)(inputs.logp)));
  near(grad, [-1 / 3, 2 / 3, 0, -0.5 / 3, 0, 0]);
});

test('tokenCount divides the token-mean by the whole batch count', () => {
  const r = tf.tidy(() => read(policyLoss(maskInputs(), defaults, { tokenCount: 6 })));
  near(r.pgLoss, 0.5 / 6); // 0.08333333
  near(r.ppoKl, 0); // metrics stay plain means over this minibatch
});

test('isWeights multiply the per-token loss and its gradient, and get no gradient themselves', () => {
  const inputs = maskInputs();
  const isWeights = tf.tensor2d([
    [2, 0.5, 9],
    [3, 9, 9],
  ]);
  // pg·w on valid tokens: −1·2 = −2, 2·0.5 = 1, −0.5·3 = −1.5 → (−2 + 1 − 1.5)/3 = −2.5/3 = −0.83333333
  const r = tf.tidy(() => read(policyLoss({ ...inputs, isWeights }, defaults)));
  near(r.pgLoss, -2.5 / 3);
  const [gLogp, gWeights] = tf.tidy(() =>
    tf
      .grads((logp: tf.Tensor, w: tf.Tensor) => policyLoss({ ...inputs, logp, isWeights: w }, defaults).loss)([inputs.logp, isWeights])
      .map(values),
  );
  near(gLogp!, [-2 / 3, 1 / 3, 0, -1.5 / 3, 0, 0]); // −A·w/3
  assert.ok(
    gWeights!.every((g) => g === 0),
    `isWeights gradient ${gWeights}`,
  );
});

test('entropy bonus and KL loss enter the total; returned entropy/kl are masked token means', () => {
  const inputs = maskInputs();
  const entropy = tf.tensor2d([
    [1, 2, 50],
    [3, 50, 50],
  ]); // masked mean (1 + 2 + 3)/3 = 2
  const refLogp = tf.sub(inputs.logp, 0.5); // d = 0.5 on every token; k1 mean 0.5
  const config = buildPolicyLossConfig({ entropyCoeff: 0.01, klCoeff: 0.1, klEstimator: 'k1' });
  const r = tf.tidy(() => read(policyLoss({ ...inputs, entropy, refLogp }, config)));
  // loss = 0.5/3 − 0.01·2 + 0.1·0.5 = 0.16666667 − 0.02 + 0.05 = 0.19666667
  near(r.loss, 0.5 / 3 - 0.02 + 0.05);
  near(r.pgLoss, 0.5 / 3);
  near(r.entropy, 2);
  near(r.kl, 0.5);
  // Gradients: wrt logp, −A/3 + 0.1·(1/3) from k1 (= 0.03333333); wrt entropy, −0.01/3 = −0.00333333 on valid tokens.
  const [gLogp, gEntropy] = tf.tidy(() =>
    tf
      .grads((logp: tf.Tensor, h: tf.Tensor) => policyLoss({ ...inputs, logp, entropy: h, refLogp }, config).loss)([inputs.logp, entropy])
      .map(values),
  );
  near(gLogp!, [-1 / 3 + 0.1 / 3, 2 / 3 + 0.1 / 3, 0, -0.5 / 3 + 0.1 / 3, 0, 0]);
  near(gEntropy!, [-0.01 / 3, -0.01 / 3, 0, -0.01 / 3, 0, 0]);
});

test('entropyTarget caps the bonus: below the target it pushes as the plain bonus, above it the loss has no entropy term and no entropy gradient', () => {
  const inputs = maskInputs();
  const entropy = tf.tensor2d([
    [1, 2, 50],
    [3, 50, 50],
  ]); // masked mean 2
  for (const [target, bonus, gradient] of [
    [3, 0.01 * 2, -0.01 / 3],
    [1.5, 0.01 * 1.5, 0],
  ] as const) {
    const config = buildPolicyLossConfig({ entropyCoeff: 0.01, entropyTarget: target });
    const r = tf.tidy(() => read(policyLoss({ ...inputs, entropy }, config)));
    near(r.loss, 0.5 / 3 - bonus);
    near(r.entropy, 2);
    const [gEntropy] = tf.tidy(() =>
      tf
        .grads((h: tf.Tensor) => policyLoss({ ...inputs, entropy: h }, config).loss)([entropy])
        .map(values),
    );
    near(gEntropy!, [gradient, gradient, 0, gradient, 0, 0]);
  }
});

test('the entropy and KL terms use the configured aggregation; the logged values stay token means', () => {
  const inputs = maskInputs();
  const entropy = tf.tensor2d([
    [1, 2, 50],
    [3, 50, 50],
  ]);
  const refLogp = tf.sub(inputs.logp, 0.5);
  const config = buildPolicyLossConfig({ entropyCoeff: 0.01, klCoeff: 0.1, klEstimator: 'k1', lossAggMode: 'seq-mean-token-sum' });
  const r = tf.tidy(() => read(policyLoss({ ...inputs, entropy, refLogp }, config)));
  // seq-mean-token-sum: pg row sums −1 + 2 = 1 and −0.5 → 0.25; entropy 1 + 2 = 3 and 3 → 3; k1 0.5 + 0.5 = 1 and 0.5 → 0.75
  // loss = 0.25 − 0.01·3 + 0.1·0.75 = 0.25 − 0.03 + 0.075 = 0.295
  near(r.pgLoss, 0.25);
  near(r.loss, 0.295);
  near(r.entropy, 2);
  near(r.kl, 0.5);
});

test('with zero coefficients entropy and KL are only logged; without inputs they are 0', () => {
  const inputs = maskInputs();
  const entropy = tf.tensor2d([
    [1, 2, 50],
    [3, 50, 50],
  ]);
  const refLogp = tf.sub(inputs.logp, 0.5);
  const logged = tf.tidy(() => read(policyLoss({ ...inputs, entropy, refLogp }, defaults)));
  near(logged.loss, 0.5 / 3);
  near(logged.entropy, 2);
  // default estimator k3 with d = 0.5: e^{−0.5} + 0.5 − 1 = 0.10653066 on every token
  near(logged.kl, 0.10653066);
  const bare = tf.tidy(() => read(policyLoss(inputs, defaults)));
  assert.equal(bare.entropy, 0);
  assert.equal(bare.kl, 0);
});

test('klCoeff > 0 without refLogp is an error that says what to do', () => {
  assert.throws(
    () => policyLoss(maskInputs(), buildPolicyLossConfig({ klCoeff: 0.001 })),
    (e: unknown) => e instanceof ConfigError && /klCoeff is 0\.001 but no refLogp was given: pass the reference policy's log-probs, or set klCoeff to 0/.test(e.message),
  );
});

test('marginalEntropyCoeff: −coeff·H(Ā) joins the loss; without the marginal entropy it is an error that says what to do', () => {
  const inputs = maskInputs();
  const config = buildPolicyLossConfig({ marginalEntropyCoeff: 0.5 });
  const bare = tf.tidy(() => read(policyLoss(inputs, defaults)));
  const withBonus = tf.tidy(() => read(policyLoss({ ...inputs, marginalEntropy: tf.scalar(1.2) }, config)));
  near(withBonus.loss, bare.loss - 0.6);
  assert.throws(
    () => policyLoss(inputs, config),
    (e: unknown) => e instanceof ConfigError && /marginalEntropyCoeff is 0\.5 but no marginalEntropy was given/.test(e.message),
  );
});

test('inputs of another shape than the mask are rejected', () => {
  const inputs = maskInputs();
  assert.throws(() => policyLoss({ ...inputs, advantages: tf.zeros([2, 4]) }, defaults), /advantages must be \[B, T\] with the shape of mask \[2, 3\]; got \[2, 4\]/);
  assert.throws(() => policyLoss({ ...inputs, isWeights: tf.zeros([3]) }, defaults), /isWeights must be \[B, T\]/);
});

test('no tensor leak: inside tf.tidy (and inside a gradient) numTensors is unchanged; inputs stay alive', () => {
  const inputs = { ...clipInputs(), entropy: tf.ones([2, 4]), refLogp: tf.zeros([2, 4]), isWeights: tf.ones([2, 4]) };
  const config = buildPolicyLossConfig({ entropyCoeff: 0.01, klCoeff: 0.1, klEstimator: 'k3+' });
  const before = tf.memory().numTensors;
  tf.tidy(() => {
    policyLoss(inputs, config);
  });
  assert.equal(tf.memory().numTensors, before);
  tf.tidy(() => {
    tf.grad((logp: tf.Tensor) => policyLoss({ ...inputs, logp }, config).loss)(inputs.logp);
  });
  assert.equal(tf.memory().numTensors, before);
  assert.ok(Object.values(inputs).every((t) => !t.isDisposed));
  // loss and pgLoss are distinct tensors even with no extra term, so each can be disposed on its own.
  tf.tidy(() => {
    const out = policyLoss(clipInputs(), defaults);
    assert.notEqual(out.loss, out.pgLoss);
  });
  tf.dispose(inputs as unknown as tf.TensorContainer);
});

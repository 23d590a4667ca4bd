// The value head and its loss on WASM: a model with valueHead starts from the same weights as one without, the
// batch carries each turn's value target (episode reward, turns left), the value loss lowers the head's error on a
// fixed batch, a value loss without a value head is a config error naming the fix, centerByAction leaves every
// reply token with a zero mean advantage, and the critic's advantage is the whitened residual of the value head.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { ConfigError } from '../../../core/errors.js';
import { selectBackend } from '../../../learner/backend.js';
import { buildPolicyLossConfig, criticAdvantages, turnAdvantages, type PolicyLossConfig } from '../../../learner/loss/index.js';
import { createPolicyBundle, disposeBundle, type PolicyBundle } from '../../../learner/policy/bundle.js';
import { advantagesCentredByAction, buildBatch } from '../../../learner/train/batch.js';
import { buildOptimizerConfig } from '../../../learner/train/config.js';
import { PolicyTrainer } from '../../../learner/train/trainer.js';
import { syntheticSamples } from './helpers.js';

await selectBackend('wasm');

const valueBundle = (valueHead: boolean): PolicyBundle =>
  createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 32, layers: 2, heads: 4, contextLength: 64, seed: 1, valueHead });

test('a value head adds value/kernel and value/bias and leaves every other initial weight as it was', async () => {
  const plain = valueBundle(false);
  const withValue = valueBundle(true);
  try {
    const a = await plain.model.values();
    const b = await withValue.model.values();
    assert.deepEqual(
      [...b.keys()].filter((k) => !a.has(k)),
      ['value/kernel', 'value/bias'],
    );
    for (const [name, values] of a) assert.deepEqual(b.get(name), values, name);
    const ids = tf.tensor2d([[3, 10, 11, 4]], [1, 4], 'int32');
    const { logits, values } = withValue.model.logitsAndValues(ids, withValue.head);
    assert.deepEqual(values.shape, [1, 4]);
    assert.deepEqual(logits.dataSync(), plain.model.logits(ids, plain.head).dataSync(), 'the value head does not change the logits');
    assert.throws(() => plain.model.logitsAndValues(ids, plain.head), /valueHead: true/);
    tf.dispose([ids, logits, values]);
  } finally {
    disposeBundle(plain);
    disposeBundle(withValue);
  }
});

test('buildBatch: each scored position carries its episode reward and the turns left after its turn', () => {
  const bundle = valueBundle(true);
  try {
    // 32 tokens: 4 turns of 5 prompt ids then 3 reply ids.
    const [sample] = syntheticSamples(bundle, 1, 32);
    const batch = buildBatch([{ ...sample!, reward: 0.5 }], bundle.head, 64);
    const scored = [...batch.mask.keys()].filter((i) => batch.mask[i] === 1);
    assert.equal(scored.length, 12);
    assert.deepEqual(
      scored.map((i) => batch.turnsLeft[i]),
      [3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0],
    );
    assert.ok(scored.every((i) => batch.episodeReward[i] === 0.5));
  } finally {
    disposeBundle(bundle);
  }
});

function trainer(bundle: PolicyBundle, loss: Partial<PolicyLossConfig>): PolicyTrainer {
  return new PolicyTrainer({ ...bundle, optimizer: buildOptimizerConfig({ learningRate: 3e-3 }), loss: buildPolicyLossConfig(loss) });
}

/** Mean squared error of the value head against reward·γ^turnsLeft on the batch's scored positions. */
function valueError(bundle: PolicyBundle, batch: ReturnType<typeof buildBatch>, gamma: number): number {
  return tf.tidy(() => {
    const ids = tf.tensor2d(batch.ids, [batch.rows, batch.time], 'int32');
    const values = bundle.model.logitsAndValues(ids, bundle.head).values.dataSync();
    let sum = 0;
    for (let i = 0; i < values.length; i++) if (batch.mask[i] === 1) sum += (values[i]! - batch.episodeReward[i]! * gamma ** batch.turnsLeft[i]!) ** 2;
    return sum / batch.lossTokens;
  });
}

test('the value loss lowers the value head error on a fixed batch; without it the value head is untouched', () => {
  const bundle = valueBundle(true);
  const batch = buildBatch(syntheticSamples(bundle, 6, 33), bundle.head, 64);
  const learning = trainer(bundle, { valueCoeff: 1, valueDiscount: 0.9 });
  try {
    const before = valueError(bundle, batch, 0.9);
    for (let i = 0; i < 20; i++) learning.update(batch);
    const after = valueError(bundle, batch, 0.9);
    assert.ok(after < before * 0.5, `value error ${before.toFixed(4)} → ${after.toFixed(4)}`);
  } finally {
    learning.dispose();
    disposeBundle(bundle);
  }
  const other = valueBundle(true);
  const policyOnly = trainer(other, {});
  try {
    const kernel = () => other.model.parameters.get('value/kernel')!.dataSync().slice();
    const start = kernel();
    policyOnly.update(buildBatch(syntheticSamples(other, 6, 33), other.head, 64));
    assert.deepEqual(kernel(), start);
  } finally {
    policyOnly.dispose();
    disposeBundle(other);
  }
});

test('valueCoeff > 0 without a value head is a ConfigError that says to set model.valueHead', () => {
  const bundle = valueBundle(false);
  try {
    assert.throws(
      () => trainer(bundle, { valueCoeff: 0.25 }),
      (e: unknown) => e instanceof ConfigError && /model\.valueHead/.test(e.message),
    );
  } finally {
    disposeBundle(bundle);
  }
});

test('the value options are checked: valueDiscount outside [0, 1] and a negative valueCoeff are refused by name', () => {
  assert.throws(() => buildPolicyLossConfig({ valueDiscount: 1.5 }), /valueDiscount/);
  assert.throws(() => buildPolicyLossConfig({ valueCoeff: -1 }), /valueCoeff/);
  assert.throws(() => buildPolicyLossConfig({ centerByAction: 'yes' as unknown as boolean }), /centerByAction/);
});

test("centerByAction: every reply token's non-zero advantages average 0; zeros and unscored positions keep theirs", () => {
  const batch = {
    mask: Float32Array.from([1, 1, 1, 0, 1, 1]),
    targets: Int32Array.from([1, 2, 1, 0, 2, 1]),
    advantages: Float32Array.from([1, 0.5, 0, 7, -0.5, -0.5]),
  };
  assert.deepEqual([...advantagesCentredByAction(batch)], [0.75, 0.5, 0, 7, -0.5, -0.75]);
});

test("turnAdvantages: GAE over each episode's turns (rows of one turn or of a whole episode); λ = 1 is the discounted return minus the value", () => {
  // Two episodes. Row 0: a whole episode of 3 turns (2 scored positions each), reward 1. Rows 1–2: an episode of
  // 2 turns cut into one row per turn, reward −1. Values are read at each turn's first scored position.
  const time = 6;
  const mask = Float32Array.from([1, 1, 1, 1, 1, 1, /**/ 1, 1, 0, 0, 0, 0, /**/ 1, 0, 0, 0, 0, 0]);
  const turnsLeft = Float32Array.from([2, 2, 1, 1, 0, 0, /**/ 1, 1, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 0, 0]);
  const episodeReward = Float32Array.from([1, 1, 1, 1, 1, 1, /**/ -1, -1, 0, 0, 0, 0, /**/ -1, 0, 0, 0, 0, 0]);
  const batch = { rows: 3, time, mask, turnsLeft, episodeReward };
  const values = Float32Array.from([0.2, 9, 0.5, 9, 0.6, 9, /**/ -0.3, 9, 0, 0, 0, 0, /**/ -0.4, 0, 0, 0, 0, 0]);
  const g = 0.9;
  const close = (actual: Float32Array, expected: number[], label: string) =>
    expected.forEach((e, i) => assert.ok(Math.abs(actual[i]! - e) < 1e-5, `${label} position ${i}: ${actual[i]} vs ${e}`));
  const mc = turnAdvantages(batch, values, g, 1);
  const a0 = g ** 2 - 0.2;
  const a1 = g - 0.5;
  const a2 = 1 - 0.6;
  const b0 = -1 * g - -0.3;
  const b1 = -1 - -0.4;
  close(mc, [a0, a0, a1, a1, a2, a2, b0, b0, 0, 0, 0, 0, b1, 0, 0, 0, 0, 0], 'λ = 1');
  const td = turnAdvantages(batch, values, g, 0);
  close(td, [g * 0.5 - 0.2, g * 0.5 - 0.2, g * 0.6 - 0.5, g * 0.6 - 0.5, a2, a2, g * -0.4 - -0.3, g * -0.4 - -0.3, 0, 0, 0, 0, b1, 0, 0, 0, 0, 0], 'λ = 0');
  const white = criticAdvantages(batch, values, g, 1);
  const scored = [...white].filter((_, i) => mask[i] === 1);
  const mean = scored.reduce((a, b) => a + b, 0) / scored.length;
  const sd = Math.sqrt(scored.reduce((a, b) => a + (b - mean) ** 2, 0) / scored.length);
  assert.ok(Math.abs(mean) < 1e-5 && Math.abs(sd - 1) < 1e-4, `whitened: mean ${mean}, deviation ${sd}`);
  assert.ok(
    [...white].every((v, i) => mask[i] === 1 || v === 0),
    'unscored positions stay 0',
  );
});

test("criticAdvantageCoeff adds the critic's advantage to the update, and needs a value loss", () => {
  const update = (loss: Partial<PolicyLossConfig>) => {
    const bundle = valueBundle(true);
    const batch = buildBatch(syntheticSamples(bundle, 6, 33), bundle.head, 64);
    batch.advantages.fill(0);
    const learning = trainer(bundle, loss);
    try {
      const metrics = learning.update(batch);
      const kernel = [...bundle.model.parameters.get('head/kernel')!.dataSync()];
      learning.update(batch);
      const tensors = tf.memory().numTensors;
      learning.update(batch);
      assert.equal(tf.memory().numTensors, tensors, `${JSON.stringify(loss)}: no tensor leak`);
      return { kernel, pgLoss: metrics.pgLoss };
    } finally {
      learning.dispose();
      disposeBundle(bundle);
    }
  };
  const without = update({ valueCoeff: 0.25 });
  const withCritic = update({ valueCoeff: 0.25, criticAdvantageCoeff: 1 });
  assert.equal(without.pgLoss, 0, 'zero advantages: no policy-gradient loss');
  assert.notEqual(withCritic.pgLoss, 0, "the critic's advantage reaches the policy loss");
  assert.notDeepEqual(withCritic.kernel, without.kernel);
  assert.throws(() => buildPolicyLossConfig({ criticAdvantageCoeff: 1 }), /criticAdvantageCoeff > 0 needs a trained critic: set valueCoeff/);
  assert.throws(() => buildPolicyLossConfig({ valueCoeff: 1, criticAdvantageCoeff: -1 }), /criticAdvantageCoeff/);
  assert.throws(() => buildPolicyLossConfig({ valueCoeff: 1, criticAdvantageCoeff: 1, criticLambda: 1.5 }), /criticLambda/);
});

// PolicyTrainer.update on WASM: no tensor leak across updates, bit-for-bit determinism for the same seed (and different weights for another model seed), and a non-finite gradient (NaN or ±Infinity advantage on a trained token) skips the optimizer step leaving the weights untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { buildPolicyLossConfig } from '../../../learner/loss/index.js';
import { createPolicyBundle, disposeBundle, type PolicyBundle } from '../../../learner/policy/bundle.js';
import { buildBatch } from '../../../learner/train/batch.js';
import { buildOptimizerConfig, type OptimizerConfig } from '../../../learner/train/config.js';
import { PolicyTrainer } from '../../../learner/train/trainer.js';
import { assertSameWeights, smallBundle, syntheticBatch, syntheticSamples, weightsOf, withoutDuration } from './helpers.js';

await selectBackend('wasm');

function trainerFor(bundle: PolicyBundle, optimizer: Partial<OptimizerConfig> = {}): PolicyTrainer {
  return new PolicyTrainer({ ...bundle, optimizer: buildOptimizerConfig({ learningRate: 1e-3, ...optimizer }), loss: buildPolicyLossConfig({ entropyCoeff: 0.01 }) });
}

test('no tensor leak: tf.memory().numTensors is the same after update 2 and after update 5 (with minibatches and recompute)', () => {
  for (const optimizer of [{}, { minibatches: 2, epochs: 2, proximal: 'recompute' as const }]) {
    const bundle = smallBundle();
    const trainer = trainerFor(bundle, optimizer);
    try {
      const batch = syntheticBatch(bundle);
      trainer.update(batch);
      trainer.update(batch); // Adam's moments exist from the first step on
      const after2 = tf.memory().numTensors;
      for (let i = 0; i < 3; i++) trainer.update(batch);
      assert.equal(tf.memory().numTensors, after2, `${JSON.stringify(optimizer)}: tensors after update 5 vs 2`);
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  }
});

test('determinism: two fresh bundles with the same seed give identical metrics and weights after 2 updates; another model seed does not', async () => {
  const run = async (seed: number) => {
    const bundle = smallBundle(seed);
    const trainer = trainerFor(bundle);
    try {
      const batch = syntheticBatch(bundle);
      const metrics = [trainer.update(batch), trainer.update(batch)].map(withoutDuration);
      return { metrics, weights: await weightsOf(bundle) };
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  };
  const a = await run(1);
  const b = await run(1);
  const c = await run(2);
  assert.deepEqual(b.metrics, a.metrics);
  assert.ok(a.metrics.every((m) => m.skippedSteps === 0 && m.optimizerSteps === 1 && Number.isFinite(m.loss)));
  assertSameWeights(b.weights, a.weights, 'same seed');
  const differing = [...a.weights].filter(([name, w]) => name.endsWith('kernel') && w.some((x, i) => x !== c.weights.get(name)![i])).length;
  assert.equal(differing, [...a.weights.keys()].filter((n) => n.endsWith('kernel')).length, 'every kernel differs with another model seed');
});

for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
  test(`an advantage of ${bad} on a trained token skips the optimizer step and leaves the weights unchanged`, async () => {
    const bundle = smallBundle();
    const trainer = trainerFor(bundle);
    try {
      const batch = syntheticBatch(bundle);
      const before = await weightsOf(bundle);
      const advantages = batch.advantages.slice();
      advantages[batch.mask.indexOf(1)] = bad;
      const metrics = trainer.update({ ...batch, advantages });
      assert.equal(metrics.optimizerSteps, 1);
      assert.equal(metrics.skippedSteps, 1);
      assert.ok(!Number.isFinite(metrics.gradNorm), `gradNorm ${metrics.gradNorm}`);
      assertSameWeights(await weightsOf(bundle), before, 'after the skipped step');
      // The trainer is still usable: a clean batch is applied.
      const next = trainer.update(batch);
      assert.equal(next.skippedSteps, 0);
      assert.ok(Number.isFinite(next.gradNorm) && next.gradNorm > 0);
      const after = await weightsOf(bundle);
      assert.ok([...after].some(([name, w]) => w.some((x, i) => x !== before.get(name)![i])), 'a clean update changes the weights');
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  });
}

test('turnRows: one row per turn for a turn-attention policy with token-mean; a batch wider than the context is refused with the fix in the message', () => {
  const plain = smallBundle();
  const turn = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 32, layers: 2, heads: 4, contextLength: 64, seed: 1, attentionSpan: 'turn' });
  try {
    assert.equal(trainerFor(plain).turnRows, false);
    assert.equal(trainerFor(turn).turnRows, true);
    assert.equal(new PolicyTrainer({ ...turn, optimizer: buildOptimizerConfig({}), loss: buildPolicyLossConfig({ lossAggMode: 'seq-mean-token-mean' }) }).turnRows, false);
    // Samples of 90 tokens kept whole (turnRows) but trained by a trainer that does not split them.
    const whole = buildBatch(syntheticSamples(plain, 2, 90), plain.head, 64, { turnRows: true });
    assert.throws(() => trainerFor(plain).update(whole), /exceed the model's contextLength 64: build the batch with buildBatch\(…, \{ turnRows: trainer.turnRows \}\)/);
  } finally {
    disposeBundle(plain);
    disposeBundle(turn);
  }
});

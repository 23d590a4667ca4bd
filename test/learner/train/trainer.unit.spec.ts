// PolicyTrainer.update on WASM: no tensor leak across updates, bit-for-bit determinism for the same seed (and different weights for another model seed), the same next updates after a restore of its state, shuffled minibatches as a seeded row order, and a non-finite gradient (NaN or ±Infinity advantage on a trained token) skips the optimizer step leaving the weights untouched.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { buildPolicyLossConfig, marginalEntropyFromLogits } from '../../../learner/loss/index.js';
import { createPolicyBundle, disposeBundle, type PolicyBundle } from '../../../learner/policy/bundle.js';
import { buildBatch, shuffledRows, type TrainingBatch } from '../../../learner/train/batch.js';
import { buildOptimizerConfig, type OptimizerConfig } from '../../../learner/train/config.js';
import { PolicyTrainer } from '../../../learner/train/trainer.js';
import { assertSameWeights, smallBundle, syntheticBatch, syntheticSamples, weightsOf, withoutDuration } from './helpers.js';

await selectBackend('wasm');

function trainerFor(bundle: PolicyBundle, optimizer: Partial<OptimizerConfig> = {}): PolicyTrainer {
  return new PolicyTrainer({ ...bundle, optimizer: buildOptimizerConfig({ learningRate: 1e-3, ...optimizer }), loss: buildPolicyLossConfig({ entropyCoeff: 0.01 }) });
}

test('no tensor leak: tf.memory().numTensors is the same after update 2 and after update 5 (with minibatches and recompute)', () => {
  for (const optimizer of [{}, { minibatches: 2, epochs: 2, proximal: 'recompute' as const }, { minibatches: 3, epochs: 2, shuffleMinibatches: true }]) {
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
      assert.ok(
        [...after].some(([name, w]) => w.some((x, i) => x !== before.get(name)![i])),
        'a clean update changes the weights',
      );
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  });
}

test("resume: a trainer restored from another's weights, Adam state and update count makes its next updates bit for bit", async () => {
  const stopped = smallBundle();
  const never = trainerFor(stopped);
  const batch = syntheticBatch(stopped);
  // Five Adam steps: tfjs's own restore recomputes β^(t+1) as a power, which here differs in the last bits from the product the steps accumulated.
  for (let i = 0; i < 5; i++) never.update(batch);
  const { vocabSize: _, ...shape } = stopped.model.config;
  const resumedBundle = createPolicyBundle(stopped.vocabulary.words, shape, await weightsOf(stopped));
  const resumed = trainerFor(resumedBundle);
  try {
    await resumed.restoreOptimizerState(await never.optimizerState());
    resumed.updates = never.updates;
    for (let i = 0; i < 3; i++) assert.deepEqual(withoutDuration(resumed.update(batch)), withoutDuration(never.update(batch)), `update ${5 + i}`);
    assertSameWeights(await weightsOf(resumedBundle), await weightsOf(stopped), 'after 3 updates past the resume');
  } finally {
    never.dispose();
    resumed.dispose();
    disposeBundle(stopped);
    disposeBundle(resumedBundle);
  }
});

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

test('shuffled minibatches: an epoch deals the rows in shuffledRows order — the same update as the rows permuted by hand, unshuffled', async () => {
  const permuted = (batch: TrainingBatch, order: Int32Array): TrainingBatch => {
    const take = <A extends Int32Array | Float32Array>(values: A): A => {
      const out = values.slice() as A;
      order.forEach((from, to) => out.set(values.subarray(from * batch.time, (from + 1) * batch.time), to * batch.time));
      return out;
    };
    return {
      ...batch,
      ids: take(batch.ids),
      targets: take(batch.targets),
      mask: take(batch.mask),
      advantages: take(batch.advantages),
      behaviourLogProbs: take(batch.behaviourLogProbs),
    };
  };
  const run = async (optimizer: Partial<OptimizerConfig>, order?: Int32Array) => {
    const bundle = smallBundle();
    const trainer = trainerFor(bundle, { minibatches: 3, ...optimizer });
    try {
      const batch = syntheticBatch(bundle, 6);
      const metrics = withoutDuration(trainer.update(order ? permuted(batch, order) : batch));
      return { metrics, weights: await weightsOf(bundle) };
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  };
  const order = shuffledRows(6, 0, 0);
  assert.notDeepEqual([...order], [0, 1, 2, 3, 4, 5], 'the seeded order moves rows');
  const shuffled = await run({ shuffleMinibatches: true });
  const byHand = await run({}, order);
  const consecutive = await run({});
  assert.deepEqual(shuffled.metrics, byHand.metrics);
  assertSameWeights(shuffled.weights, byHand.weights, 'shuffled vs permuted by hand');
  assert.ok(
    [...consecutive.weights].some(([name, w]) => w.some((x, i) => x !== shuffled.weights.get(name)![i])),
    'consecutive minibatches give another update',
  );
  // Two epochs: a second order, still the same run to run.
  const twice = [await run({ shuffleMinibatches: true, epochs: 2 }), await run({ shuffleMinibatches: true, epochs: 2 })];
  assert.deepEqual(twice[0]!.metrics, twice[1]!.metrics);
  assertSameWeights(twice[0]!.weights, twice[1]!.weights, 'two shuffled epochs, run twice');
});

test('shuffledRows: a permutation of the rows, fixed by (update, epoch), different across them', () => {
  const orders = [
    [0, 0],
    [0, 1],
    [1, 0],
    [7, 3],
  ].map(([update, epoch]) => [...shuffledRows(64, update!, epoch!)]);
  for (const order of orders)
    assert.deepEqual(
      [...order].sort((a, b) => a - b),
      Array.from({ length: 64 }, (_, i) => i),
    );
  assert.deepEqual([...shuffledRows(64, 7, 3)], orders[3]);
  assert.equal(new Set(orders.map((o) => o.join())).size, orders.length);
  assert.deepEqual([...shuffledRows(1, 0, 0)], [0]);
  assert.deepEqual([...shuffledRows(0, 0, 0)], []);
});

test('targetKl: a minibatch whose PPO-KL passes 1.5 × targetKl takes no step and ends the update; a high targetKl changes nothing', async () => {
  const run = async (targetKl: number | null, certain: boolean) => {
    const bundle = smallBundle();
    const trainer = trainerFor(bundle, { epochs: 2, minibatches: 2, targetKl });
    try {
      // Behaviour log-probs of 0 (probability 1) on every loss token: PPO-KL = mean(−log π_θ) ≈ log(replies) > 1 nat.
      const samples = syntheticSamples(bundle, 6, 33).map((s) => (certain ? { ...s, behaviourLogProbs: s.behaviourLogProbs.map(() => 0) } : s));
      const before = await weightsOf(bundle);
      const metrics = trainer.update(buildBatch(samples, bundle.head, bundle.model.config.contextLength));
      return { metrics, before, after: await weightsOf(bundle) };
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  };
  const stopped = await run(0.1, true);
  assert.equal(stopped.metrics.klEarlyStop, 1);
  assert.ok(stopped.metrics.klAtStop > 0.15, `PPO-KL at the stop ${stopped.metrics.klAtStop}`);
  assert.equal(stopped.metrics.optimizerSteps, 0);
  assertSameWeights(stopped.after, stopped.before, 'no step taken');

  const off = await run(null, false);
  const high = await run(1e6, false);
  assert.equal(off.metrics.optimizerSteps, 4);
  assert.equal(off.metrics.klEarlyStop, 0);
  assert.deepEqual(withoutDuration(high.metrics), withoutDuration(off.metrics));
  assertSameWeights(high.after, off.after, 'a targetKl never reached');
  assert.throws(() => buildOptimizerConfig({ targetKl: 0 }), /learner\.targetKl must be a positive number/);
});

test('marginalEntropyCoeff: with no advantage signal the update spreads the average reply distribution; without it nothing moves', () => {
  const marginal = (bundle: PolicyBundle, batch: TrainingBatch) =>
    tf.tidy(() => {
      const ids = tf.tensor2d(batch.ids, [batch.rows, batch.time], 'int32');
      return marginalEntropyFromLogits(bundle.model.logits(ids, bundle.head), tf.tensor2d(batch.mask, [batch.rows, batch.time])).dataSync()[0]!;
    });
  const after = (marginalEntropyCoeff: number) => {
    const bundle = smallBundle();
    // A policy that prefers one reply token everywhere: its output bias raised by 3 nats.
    const bias = bundle.model.variables().find((v) => v.name.startsWith('head/bias'))!;
    const preferred = bundle.head.tokenIds[0]!;
    tf.tidy(() =>
      bias.assign(
        tf.add(
          bias,
          tf
            .oneHot(tf.tensor1d([preferred], 'int32'), bias.shape[0]!)
            .reshape(bias.shape)
            .mul(3),
        ),
      ),
    );
    const flat = syntheticBatch(bundle);
    const batch = { ...flat, advantages: new Float32Array(flat.advantages.length) };
    const trainer = new PolicyTrainer({ ...bundle, optimizer: buildOptimizerConfig({ learningRate: 1e-2 }), loss: buildPolicyLossConfig({ marginalEntropyCoeff }) });
    try {
      const before = marginal(bundle, batch);
      for (let i = 0; i < 5; i++) trainer.update(batch);
      return { before, after: marginal(bundle, batch) };
    } finally {
      trainer.dispose();
      disposeBundle(bundle);
    }
  };
  const off = after(0);
  assert.equal(off.after, off.before, 'zero advantages and no bonus: the policy stays');
  const on = after(1);
  assert.ok(on.after > on.before + 1e-4, `the bonus raises H(Ā): ${on.before} → ${on.after}`);
});

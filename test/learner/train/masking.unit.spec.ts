// Observation masking reaches the parameters on WASM: changing targets, advantages and behaviour log-probs at masked positions leaves every parameter gradient of the PPO loss (with an entropy bonus) exactly unchanged, while changing one unmasked advantage changes them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { buildPolicyLossConfig, entropyFromLogits, policyLoss } from '../../../learner/loss/index.js';
import { oneHotFloat } from '../../../learner/model/ops.js';
import type { PolicyBundle } from '../../../learner/policy/bundle.js';
import type { TrainingBatch } from '../../../learner/train/batch.js';
import { smallBundle, syntheticBatch } from './helpers.js';

await selectBackend('wasm');

const lossConfig = buildPolicyLossConfig({ entropyCoeff: 0.01 });

/**
 * Gradients of the loss PolicyTrainer.update differentiates (its tokenLogProbs at temperature 1 and
 * policyLoss), by parameter name.
 */
function gradients(bundle: PolicyBundle, batch: TrainingBatch): Map<string, Float32Array> {
  const shape: [number, number] = [batch.rows, batch.time];
  const out = new Map<string, Float32Array>();
  tf.tidy(() => {
    const ids = tf.tensor2d(batch.ids, shape, 'int32');
    const targets = tf.tensor2d(batch.targets, shape, 'int32');
    const { grads } = tf.variableGrads(() => {
      const logits = bundle.model.logits(ids, bundle.head);
      const logp = tf.sum(tf.mul(tf.logSoftmax(logits), oneHotFloat(targets, bundle.head.size)), -1);
      const inputs = {
        logp,
        oldLogp: tf.tensor2d(batch.behaviourLogProbs, shape),
        advantages: tf.tensor2d(batch.advantages, shape),
        mask: tf.tensor2d(batch.mask, shape),
        entropy: entropyFromLogits(logits),
      };
      return policyLoss(inputs, lossConfig).loss;
    }, bundle.model.variables());
    for (const [name, variable] of bundle.model.parameters) out.set(name, grads[variable.name]!.dataSync().slice() as Float32Array);
  });
  return out;
}

test('gradients ignore whatever sits at masked positions; an unmasked advantage changes them', () => {
  const bundle = smallBundle();
  try {
    const batch = syntheticBatch(bundle);
    assert.ok(batch.lossTokens > 0 && batch.lossTokens < batch.rows * batch.time, 'the batch has masked and unmasked positions');
    const base = gradients(bundle, batch);
    const norm = [...base.values()].reduce((s, g) => s + g.reduce((a, x) => a + x * x, 0), 0);
    assert.ok(norm > 0, 'the loss has a gradient');

    // Garbage where mask is 0: other targets, large advantages of both signs, other behaviour log-probs.
    const targets = batch.targets.slice();
    const advantages = batch.advantages.slice();
    const behaviour = batch.behaviourLogProbs.slice();
    let changed = 0;
    batch.mask.forEach((m, i) => {
      if (m === 0) {
        targets[i] = (i * 7) % bundle.head.size;
        advantages[i] = i % 2 ? 37 : -52;
        behaviour[i] = -0.01 * (i % 13) - 3;
        changed++;
      }
    });
    assert.ok(changed > 0);
    const masked = gradients(bundle, { ...batch, targets, advantages, behaviourLogProbs: behaviour });
    for (const [name, g] of base) assert.deepEqual(masked.get(name), g, `gradient of ${name} changed by masked positions`);

    // Control: the same kind of change on one unmasked position does move the gradient.
    const unmasked = batch.mask.indexOf(1);
    const moved = batch.advantages.slice();
    moved[unmasked] = moved[unmasked]! + 5;
    const control = gradients(bundle, { ...batch, advantages: moved });
    const differs = [...base].filter(([name, g]) => g.some((x, i) => x !== control.get(name)![i])).length;
    assert.ok(differs > base.size / 2, `only ${differs} of ${base.size} gradients changed with an unmasked advantage`);
  } finally {
    bundle.model.dispose();
    bundle.head.dispose();
  }
});

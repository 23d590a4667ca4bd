// Unit: non-finite constants on masked tokens (advantages, old log-probs, importance weights) reach
// neither the loss nor its gradient.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { buildPolicyLossConfig, policyLoss } from '../../../learner/loss/index.js';
import './setup.js';

test('NaN and Infinity under the mask leave the gradient finite and equal to the clean one', () => {
  const config = buildPolicyLossConfig();
  const logp = tf.tensor2d([[-0.5, -1.0, -0.2]]);
  const mask = tf.tensor2d([[1, 0, 1]]);
  const gradOf = (bad: number) =>
    tf
      .grad(
        (x: tf.Tensor) =>
          policyLoss({ logp: x, oldLogp: tf.tensor2d([[-0.6, bad, -0.2]]), advantages: tf.tensor2d([[1, bad, -1]]), mask, isWeights: tf.tensor2d([[1, bad, 1]]) }, config).loss,
      )(logp)
      .arraySync() as number[][];
  const clean = gradOf(0);
  for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
    const g = gradOf(bad);
    assert.ok(g[0]!.every(Number.isFinite), `finite gradient with ${bad}: ${g}`);
    assert.deepEqual(g, clean);
  }
});

// Unit: cross-scoring teacher-forces each reply after each prompt with the learner's own head and
// temperature: a reply's score under a prompt equals the learner's log-prob of that reply after it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { choosePairs, crossScore, measureTemplateCollapse } from '../../../learner/collapse/index.js';
import { oneHotFloat } from '../../../learner/model/ops.js';
import { buildBatch } from '../../../learner/train/batch.js';
import { disposeBundle } from '../../../learner/policy/bundle.js';
import { selectBackend } from '../../../learner/backend.js';
import { smallBundle, syntheticSamples } from '../train/helpers.js';

await selectBackend('wasm');
const bundle = smallBundle(5);
after(() => disposeBundle(bundle));

/** The learner's path: Σ log π of the last turn's reply tokens of a sample ending with that reply. */
function learnerReplyLogProb(tokenIds: number[], replyLength: number, temperature: number): number {
  const lossMask = tokenIds.map((_, t) => (t >= tokenIds.length - replyLength ? 1 : 0));
  const [sample] = syntheticSamples(bundle, 1, 8);
  const batch = buildBatch(
    [{ ...sample!, tokenIds, lossMask, advantages: lossMask.map(() => 0), behaviourLogProbs: lossMask.map(() => 0) }],
    bundle.head,
    bundle.model.config.contextLength,
  );
  return tf.tidy(() => {
    const logits = tf.div(bundle.model.logits(tf.tensor2d(batch.ids, [1, batch.time], 'int32'), bundle.head), temperature) as tf.Tensor3D;
    const logp = tf.sum(tf.mul(tf.logSoftmax(logits), oneHotFloat(tf.tensor2d(batch.targets, [1, batch.time], 'int32'), bundle.head.size)), -1);
    return tf.sum(tf.mul(logp, tf.tensor2d(batch.mask, [1, batch.time]))).dataSync()[0]!;
  });
}

test('every cell is the learner log-prob of that reply after that prompt (own and foreign prompts, temperature)', () => {
  const samples = syntheticSamples(bundle, 4, 24, 11);
  const pairs = choosePairs(samples, 4, 3);
  assert.equal(pairs.replies.length, 4);
  const temperature = 0.7;
  const m = crossScore(bundle.model, bundle.head, pairs, { temperature, microBatch: 3 });
  assert.equal(m.rows, 4);
  assert.equal(m.columns, pairs.prompts.length);
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < m.columns; j++) {
      const reply = pairs.replies[i]!.tokens;
      const expected = learnerReplyLogProb([...pairs.prompts[j]!, ...reply], reply.length, temperature);
      assert.ok(Math.abs(m.scores[i * m.columns + j]! - expected) < 1e-4, `cell ${i},${j}: ${m.scores[i * m.columns + j]} vs ${expected}`);
    }
  }
  const whole = crossScore(bundle.model, bundle.head, pairs, { temperature });
  for (let k = 0; k < whole.scores.length; k++) assert.ok(Math.abs(whole.scores[k]! - m.scores[k]!) < 1e-4, 'micro-batching does not change a score');
});

test('prompts longer than the context lose their oldest tokens, as in training; the metrics come out finite', () => {
  const samples = syntheticSamples(bundle, 6, 150, 12); // contextLength 64
  const settings = { pairs: 6, turns: 'uniform', temperature: 1 } as const;
  measureTemplateCollapse(bundle.model, bundle.head, samples, 9, settings); // the model caches its attention masks per length
  const before = tf.memory().numTensors;
  const metrics = measureTemplateCollapse(bundle.model, bundle.head, samples, 9, settings);
  assert.equal(tf.memory().numTensors, before, 'no tensor leaks');
  assert.ok(metrics);
  for (const [key, value] of Object.entries(metrics!)) if (typeof value === 'number') assert.ok(Number.isFinite(value), `${key} = ${value}`);
  assert.ok(metrics!.mutualInformation <= metrics!.miUpperBound + 1e-9);
  assert.equal(measureTemplateCollapse(bundle.model, bundle.head, samples.slice(0, 1), 9, { pairs: 6, turns: 'first', temperature: 1 }), null, 'one prompt: nothing to tell apart');
});

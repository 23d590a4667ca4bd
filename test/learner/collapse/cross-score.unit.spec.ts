// Unit: cross-scoring teacher-forces each reply after each prompt with the learner's own head and
// temperature: a reply's score under a prompt equals the learner's log-prob of that reply after it.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { choosePairs, crossScore, measureTemplateCollapse } from '../../../learner/collapse/index.js';
import { oneHotFloat } from '../../../learner/model/ops.js';
import { buildBatch } from '../../../learner/train/batch.js';
import { createPolicyBundle, disposeBundle, type PolicyBundle } from '../../../learner/policy/bundle.js';
import { SpecialToken } from '../../../tokenizer/word-pieces.js';
import { selectBackend } from '../../../learner/backend.js';
import { smallBundle, syntheticSamples } from '../train/helpers.js';

await selectBackend('wasm');
const bundle = smallBundle(5);
// The same shape attending within a turn only, as the grid-puzzle presets' policies do.
const turnBundle = createPolicyBundle(['Left', 'Down', 'Right', 'Up'], { width: 32, layers: 2, heads: 4, contextLength: 64, seed: 5, attentionSpan: 'turn' });
after(() => {
  disposeBundle(bundle);
  disposeBundle(turnBundle);
});

/** The learner's path: Σ log π of the last turn's reply tokens of a sample ending with that reply (the whole sequence in one row). */
function learnerReplyLogProb(tokenIds: number[], replyLength: number, temperature: number, policy: PolicyBundle = bundle): number {
  const lossMask = tokenIds.map((_, t) => (t >= tokenIds.length - replyLength ? 1 : 0));
  const [sample] = syntheticSamples(policy, 1, 8);
  const batch = buildBatch(
    [{ ...sample!, tokenIds, lossMask, advantages: lossMask.map(() => 0), behaviourLogProbs: lossMask.map(() => 0) }],
    policy.head,
    policy.model.config.contextLength,
  );
  return tf.tidy(() => {
    const logits = tf.div(policy.model.logits(tf.tensor2d(batch.ids, [1, batch.time], 'int32'), policy.head), temperature) as tf.Tensor3D;
    const logp = tf.sum(tf.mul(tf.logSoftmax(logits), oneHotFloat(tf.tensor2d(batch.targets, [1, batch.time], 'int32'), policy.head.size)), -1);
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

test('a policy attending within a turn is scored on the last turn of each prompt: the scores of the whole prompt', () => {
  // Turns of 8 tokens opened by OBS; prompts of up to 5 turns, all inside the context.
  const samples = syntheticSamples(turnBundle, 4, 40, 13).map((s) => ({ ...s, tokenIds: s.tokenIds.map((id, t) => (t % 8 === 0 ? SpecialToken.OBS : id)) }));
  const pairs = choosePairs(samples, 4, 5);
  assert.ok(
    pairs.prompts.some((p) => p.filter((id) => id === SpecialToken.OBS).length > 1),
    'some prompt holds earlier turns',
  );
  const m = crossScore(turnBundle.model, turnBundle.head, pairs, { temperature: 1 });
  for (let i = 0; i < m.rows; i++) {
    for (let j = 0; j < m.columns; j++) {
      const reply = pairs.replies[i]!.tokens;
      const expected = learnerReplyLogProb([...pairs.prompts[j]!, ...reply], reply.length, 1, turnBundle);
      assert.ok(Math.abs(m.scores[i * m.columns + j]! - expected) < 1e-4, `cell ${i},${j}: ${m.scores[i * m.columns + j]} vs ${expected}`);
    }
  }
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

// attentionSpan 'turn': a token attends only to its own turn (from the turn's BOS/OBS on), so the logits of
// a turn inside a whole episode equal the logits of that turn alone; splitTurnRows cuts a batch into one
// row per scored turn without changing any token's log-prob; the sampler's current-turn window matches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { buildModelConfig } from '../../../learner/model/config.js';
import { initialValues } from '../../../learner/model/init.js';
import { currentTurnStart, ReplyHead, TransformerModel, turnAttentionBias } from '../../../learner/model/transformer.js';
import { SpecialToken } from '../../../learner/tokenizer/index.js';
import { splitTurnRows, type TrainingBatch } from '../../../learner/train/batch.js';
import { Rng } from '../../../envs/random.js';

await selectBackend('wasm');

const config = buildModelConfig({ vocabSize: 40, contextLength: 64, width: 32, heads: 4, layers: 2, seed: 5, attentionSpan: 'turn' });
const values = initialValues(config);
for (const [name, data] of values) if (!name.includes('ln')) for (let i = 0; i < data.length; i++) data[i]! *= 20;
const model = new TransformerModel(config, values);

/** An episode of `turns` turns: [BOS] OBS x… ACT a, with ids ≥ 5 for observation and action tokens. */
function episode(turns: number, seed: number): number[] {
  const rng = new Rng(seed);
  const ids: number[] = [SpecialToken.BOS];
  for (let t = 0; t < turns; t++) {
    ids.push(SpecialToken.OBS);
    const length = 3 + Math.floor(rng.next() * 6);
    for (let i = 0; i < length; i++) ids.push(5 + Math.floor(rng.next() * 35));
    ids.push(SpecialToken.ACT, 5 + Math.floor(rng.next() * 4));
  }
  return ids;
}

function logits(rows: number[][]): Float32Array {
  const time = Math.max(...rows.map((r) => r.length));
  const padded = rows.map((r) => [...r, ...new Array(time - r.length).fill(SpecialToken.PAD)]);
  return tf.tidy(() => model.logits(tf.tensor2d(padded, undefined, 'int32')).dataSync() as Float32Array);
}

test('turnAttentionBias: keys ≤ query in the same turn only', () => {
  const ids = [SpecialToken.BOS, SpecialToken.OBS, 9, SpecialToken.ACT, SpecialToken.OBS, 9];
  const bias = turnAttentionBias(ids, 1, 6);
  const open = (q: number) => [...bias.subarray(q * 6, q * 6 + 6)].map((v, k) => (v === 0 ? k : -1)).filter((k) => k >= 0);
  assert.deepEqual(open(0), [0]);
  assert.deepEqual(open(1), [1]);
  assert.deepEqual(open(3), [1, 2, 3]);
  assert.deepEqual(open(4), [4]);
  assert.deepEqual(open(5), [4, 5]);
  assert.equal(currentTurnStart(ids), 4);
  assert.equal(currentTurnStart([SpecialToken.BOS, SpecialToken.OBS, 7]), 1);
});

test("a turn's logits inside the episode equal the turn's logits alone", () => {
  const ids = episode(4, 1);
  const full = logits([ids]);
  const v = config.vocabSize;
  let worst = 0;
  let largest = 0;
  for (let at = 0; at < ids.length; ) {
    const start = at;
    at++;
    while (at < ids.length && ids[at] !== SpecialToken.OBS) at++;
    const alone = logits([ids.slice(start, at)]);
    for (let t = 0; t < at - start; t++) {
      for (let j = 0; j < v; j++) {
        const expected = alone[t * v + j]!;
        worst = Math.max(worst, Math.abs(full[(start + t) * v + j]! - expected));
        largest = Math.max(largest, Math.abs(expected));
      }
    }
  }
  assert.ok(largest > 0.5, `logits too small to test (${largest})`);
  assert.ok(worst <= 1e-4 * Math.max(1, largest), `largest difference ${worst}`);
});

test('splitTurnRows keeps every scored token with its context and log-prob', () => {
  const episodes = [episode(3, 2), episode(5, 3)];
  const time = Math.max(...episodes.map((e) => e.length)) - 1;
  const rows = episodes.length;
  const ids = new Int32Array(rows * time);
  const targets = new Int32Array(rows * time);
  const mask = new Float32Array(rows * time);
  const advantages = new Float32Array(rows * time);
  const behaviourLogProbs = new Float32Array(rows * time);
  let lossTokens = 0;
  episodes.forEach((e, r) => {
    for (let t = 0; t < e.length - 1; t++) {
      ids[r * time + t] = e[t]!;
      if (e[t] === SpecialToken.ACT) {
        targets[r * time + t] = e[t + 1]! - 5;
        mask[r * time + t] = 1;
        advantages[r * time + t] = r + t / 100;
        behaviourLogProbs[r * time + t] = -t / 10;
        lossTokens++;
      }
    }
  });
  const batch: TrainingBatch = { samples: [], rows, time, ids, targets, mask, advantages, behaviourLogProbs, lossTokens, tokens: 0, skipped: [] };
  const split = splitTurnRows(batch);
  assert.equal(split.rows, 3 + 5);
  assert.equal(split.lossTokens, lossTokens);
  assert.ok(split.time < time);
  const sum = (a: Float32Array) => a.reduce((s, x) => s + x, 0);
  assert.equal(sum(split.mask), lossTokens);
  assert.ok(Math.abs(sum(split.advantages) - sum(advantages)) < 1e-4);
  assert.ok(Math.abs(sum(split.behaviourLogProbs) - sum(behaviourLogProbs)) < 1e-4);
  for (let r = 0; r < split.rows; r++) assert.equal(split.ids[r * split.time], SpecialToken.OBS);
  // Reply-head log-probs of the scored tokens: the same on the split rows as on the whole episodes.
  const head = new ReplyHead([5, 6, 7, 8], config.vocabSize);
  const scored = (b: TrainingBatch) =>
    tf.tidy(() => {
      const lp = tf.logSoftmax(model.logits(tf.tensor2d(b.ids, [b.rows, b.time], 'int32'), head));
      const flat = lp.dataSync();
      const out: number[] = [];
      for (let i = 0; i < b.rows * b.time; i++) if (b.mask[i] === 1) out.push(flat[i * 4 + b.targets[i]!]!);
      return out;
    });
  const a = scored(batch);
  const b = scored(split);
  assert.equal(a.length, b.length);
  a.forEach((x, i) => assert.ok(Math.abs(x - b[i]!) < 1e-4, `token ${i}: ${x} vs ${b[i]}`));
  head.dispose();
});

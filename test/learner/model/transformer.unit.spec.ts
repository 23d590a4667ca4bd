// TransformerModel on WASM: logits equal a plain reference forward (full-matrix causal attention, tanh GELU) for short and blocked lengths, the model is causal (logits at t ignore tokens after t), the reply head equals the full head's columns, and the same seed gives the same weights.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { buildModelConfig, type PolicyModelConfig } from '../../../learner/model/config.js';
import { SpecialToken } from '../../../tokenizer/index.js';
import { ReplyHead, TransformerModel } from '../../../learner/model/transformer.js';
import { initialValues } from '../../../learner/model/init.js';
import { Rng } from '../../../core/rng.js';

await selectBackend('wasm');

const config: PolicyModelConfig = buildModelConfig({ vocabSize: 40, contextLength: 160, width: 32, heads: 4, layers: 2, seed: 3 });
// Initial weights are small (std 0.02): scale them up so attention is far from uniform and a mistake shows.
const values = initialValues(config);
for (const [name, data] of values) if (!name.includes('ln')) for (let i = 0; i < data.length; i++) data[i]! *= 20;
const model = new TransformerModel(config, values);

function randomIds(rows: number, time: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: rows }, () => Array.from({ length: time }, () => Math.floor(rng.next() * config.vocabSize)));
}

function logitsOf(ids: number[][], head?: ReplyHead): Float32Array {
  return tf.tidy(() => model.logits(tf.tensor2d(ids, undefined, 'int32'), head).dataSync() as Float32Array);
}

/** The textbook forward: the whole T×T attention matrix with a causal mask, GELU with tanh and pow, a gather embedding. */
function referenceLogits(ids: number[][]): Float32Array {
  return tf.tidy(() => {
    const c = config;
    const [batch, time] = [ids.length, ids[0]!.length];
    const hw = c.width / c.heads;
    const p = (name: string) => model.parameters.get(name)! as tf.Tensor;
    const ln = (x: tf.Tensor, prefix: string) => {
      const { mean, variance } = tf.moments(x, -1, true);
      return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), p(`${prefix}/gain`)), p(`${prefix}/bias`));
    };
    const lin = (x: tf.Tensor, prefix: string) => tf.add(tf.matMul(x as tf.Tensor2D, p(`${prefix}/kernel`) as tf.Tensor2D), p(`${prefix}/bias`));
    const mask = tf.tensor2d(
      Array.from({ length: time * time }, (_, i) => (i % time > Math.floor(i / time) ? -1e9 : 0)),
      [time, time],
    );
    // Turn-relative positions (the default): the count restarts at every BOS/OBS id.
    const positionIds = ids.map((row) => {
      let at = 0;
      return row.map((id) => (id === SpecialToken.OBS || id === SpecialToken.BOS ? ((at = 1), 0) : at++));
    });
    const positions =
      c.positionMode === 'turn' ? tf.gather(p('embed/positions'), tf.tensor2d(positionIds, undefined, 'int32')) : tf.slice(p('embed/positions'), [0, 0], [time, c.width]);
    let x: tf.Tensor = tf.reshape(tf.add(tf.gather(p('embed/tokens'), tf.tensor2d(ids, undefined, 'int32')), positions), [batch * time, c.width]);
    for (let l = 0; l < c.layers; l++) {
      const qkv = lin(ln(x, `block${l}/ln1`), `block${l}/attn/qkv`);
      const [q, k, v] = [0, 1, 2].map((i) => tf.transpose(tf.reshape(tf.slice(qkv, [0, i * c.width], [-1, c.width]), [batch, time, c.heads, hw]), [0, 2, 1, 3]) as tf.Tensor4D);
      const weights = tf.softmax(tf.add(tf.div(tf.matMul(q!, k!, false, true), Math.sqrt(hw)), mask));
      const merged = tf.reshape(tf.transpose(tf.matMul(weights, v!), [0, 2, 1, 3]), [batch * time, c.width]);
      x = tf.add(x, lin(merged, `block${l}/attn/out`));
      const hidden = lin(ln(x, `block${l}/ln2`), `block${l}/mlp/in`);
      const g = tf.mul(tf.mul(0.5, hidden), tf.add(1, tf.tanh(tf.mul(Math.sqrt(2 / Math.PI), tf.add(hidden, tf.mul(0.044715, tf.pow(hidden, 3)))))));
      x = tf.add(x, lin(g, `block${l}/mlp/out`));
    }
    return lin(ln(x, 'final_ln'), 'head').dataSync() as Float32Array;
  });
}

for (const time of [1, 9, 40, 100, 160]) {
  test(`logits equal the reference forward at ${time} positions`, () => {
    const ids = randomIds(3, time, time);
    const actual = logitsOf(ids);
    const expected = referenceLogits(ids);
    let worst = 0;
    let largest = 0;
    for (let i = 0; i < expected.length; i++) {
      worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!));
      largest = Math.max(largest, Math.abs(expected[i]!));
    }
    assert.ok(largest > 0.5, `logits too small to test (${largest})`);
    assert.ok(worst <= 1e-4 * Math.max(1, largest), `largest difference ${worst} (logits up to ${largest})`);
  });
}

test('causal: logits at positions ≤ t do not change when tokens after t change', () => {
  for (const [time, t] of [
    [20, 7],
    [100, 30],
    [100, 74],
    [160, 120],
  ] as const) {
    const ids = randomIds(2, time, 1000 + time);
    const changed = ids.map((row) => row.map((id, i) => (i > t ? (id + 1 + i) % config.vocabSize : id)));
    const a = logitsOf(ids);
    const b = logitsOf(changed);
    const v = config.vocabSize;
    for (let r = 0; r < 2; r++) {
      for (let i = 0; i < time; i++) {
        const at = (r * time + i) * v;
        const same = a.subarray(at, at + v).every((x, j) => Math.abs(x - b[at + j]!) <= 1e-6);
        if (i <= t) assert.ok(same, `T=${time}: row ${r} position ${i} ≤ ${t} changed`);
        else if (i === t + 1) assert.ok(!same, `T=${time}: position ${i} should see its own changed token`);
      }
    }
  }
});

test("the reply head gives the full head's logits at the reply ids", () => {
  const replyIds = [2, 17, 5, 39];
  const head = new ReplyHead(replyIds, config.vocabSize);
  try {
    const ids = randomIds(2, 12, 77);
    const full = logitsOf(ids);
    const reply = logitsOf(ids, head);
    for (let row = 0; row < 2 * 12; row++) {
      replyIds.forEach((id, j) => assert.ok(Math.abs(reply[row * replyIds.length + j]! - full[row * config.vocabSize + id]!) <= 1e-5, `position ${row}, id ${id}`));
    }
  } finally {
    head.dispose();
  }
});

test('the same seed gives the same weights, another seed different ones', () => {
  const a = initialValues(config);
  const b = initialValues(config);
  const other = initialValues({ ...config, seed: 4 });
  for (const [name, data] of a) {
    assert.deepEqual(data, b.get(name), name);
    if (name.endsWith('kernel')) assert.notDeepEqual(data, other.get(name), name);
  }
});

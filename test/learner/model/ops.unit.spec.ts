// The model's custom-gradient ops (learner/model/ops.ts) on WASM: dense's and embed's gradients equal tfjs' own gradients of matMul + bias and of gather (computed on the cpu backend); gelu equals the tanh formula (value and gradient); oneHotFloat is exact.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { dense, embed, gelu, oneHotFloat } from '../../../learner/model/ops.js';
import { Rng } from '../../../core/rng.js';

await selectBackend('wasm');

const rng = new Rng(5);
const randoms = (n: number) => Array.from({ length: n }, () => rng.next() * 2 - 1);

/** Runs `f` on the cpu backend (tfjs' reference kernels and gradients), then returns to wasm. */
async function onCpu<T>(f: () => T): Promise<T> {
  await tf.setBackend('cpu');
  try {
    return f();
  } finally {
    await tf.setBackend('wasm');
  }
}

function assertClose(actual: ArrayLike<number>, expected: ArrayLike<number>, label: string, tolerance = 1e-5): void {
  assert.equal(actual.length, expected.length, `${label}: length`);
  let worst = 0;
  for (let i = 0; i < actual.length; i++) worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / Math.max(1, Math.abs(expected[i]!)));
  assert.ok(worst <= tolerance, `${label}: largest difference ${worst} > ${tolerance}`);
}

test('dense: value and gradients (x, kernel, bias) equal plain matMul + bias differentiated by tfjs on cpu', async () => {
  assert.equal(tf.getBackend(), 'wasm');
  const [n, k, m] = [7, 5, 3];
  const x = randoms(n * k);
  const w = randoms(k * m);
  const b = randoms(m);
  const weights = randoms(n * m); // a non-uniform upstream gradient
  const run = (op: (x: tf.Tensor2D, w: tf.Tensor2D, b: tf.Tensor1D) => tf.Tensor2D) =>
    tf.tidy(() => {
      const inputs = [tf.tensor2d(x, [n, k]), tf.tensor2d(w, [k, m]), tf.tensor1d(b)] as const;
      const r = tf.tensor2d(weights, [n, m]);
      const value = op(...inputs)
        .dataSync()
        .slice();
      const grads = tf.grads((a: tf.Tensor, c: tf.Tensor, d: tf.Tensor) => tf.sum(tf.mul(op(a as tf.Tensor2D, c as tf.Tensor2D, d as tf.Tensor1D), r)))([...inputs]);
      return { value, grads: grads.map((g) => g.dataSync().slice()) };
    });
  const custom = run(dense);
  const reference = await onCpu(() => run((a, c, d) => tf.add(tf.matMul(a, c), d)));
  assertClose(custom.value, reference.value, 'value');
  ['x', 'kernel', 'bias'].forEach((name, i) => assertClose(custom.grads[i]!, reference.grads[i]!, `d/d${name}`));
});

test('embed: value and table gradient equal gather differentiated by tfjs on cpu, repeated ids accumulating', async () => {
  const [vocab, d] = [11, 4];
  const table = randoms(vocab * d);
  const ids = [3, 0, 3, 10, 7, 3, 1];
  const weights = randoms(ids.length * d);
  const run = (op: (t: tf.Tensor2D, i: tf.Tensor1D) => tf.Tensor2D) =>
    tf.tidy(() => {
      const t = tf.tensor2d(table, [vocab, d]);
      const i = tf.tensor1d(ids, 'int32');
      const r = tf.tensor2d(weights, [ids.length, d]);
      const value = op(t, i).dataSync().slice();
      const grad = tf
        .grad((tt: tf.Tensor) => tf.sum(tf.mul(op(tt as tf.Tensor2D, i), r)))(t)
        .dataSync()
        .slice();
      return { value, grad };
    });
  const custom = run(embed);
  const reference = await onCpu(() => run((t, i) => tf.gather(t, i)));
  assertClose(custom.value, reference.value, 'value', 0);
  assertClose(custom.grad, reference.grad, 'd/dtable');
  // Rows never looked up get exactly zero gradient.
  for (const row of [2, 4, 5, 6, 8, 9]) for (let j = 0; j < d; j++) assert.equal(custom.grad[row * d + j], 0, `row ${row}`);
});

test('embed: an id outside the table is an error, not a row of zeros', () => {
  tf.tidy(() => {
    const table = tf.tensor2d(randoms(3 * 2), [3, 2]);
    for (const id of [3, -1]) assert.throws(() => embed(table, tf.tensor1d([0, id], 'int32')), /outside the table's 3 rows/);
  });
});

test('gelu equals 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))) in value and gradient', () => {
  const values = [-6, -3, -1.5, -0.5, -1e-3, 0, 1e-3, 0.3, 1, 2.5, 6, ...randoms(20).map((v) => v * 4)];
  const tanhForm = (x: tf.Tensor) => tf.mul(tf.mul(0.5, x), tf.add(1, tf.tanh(tf.mul(Math.sqrt(2 / Math.PI), tf.add(x, tf.mul(0.044715, tf.pow(x, 3)))))));
  tf.tidy(() => {
    const x = tf.tensor2d(values, [1, values.length]);
    assertClose(gelu(x as tf.Tensor2D).dataSync(), tanhForm(x).dataSync(), 'value', 1e-6);
    assertClose(
      tf
        .grad((t: tf.Tensor) => tf.sum(gelu(t as tf.Tensor2D)))(x)
        .dataSync(),
      tf
        .grad((t: tf.Tensor) => tf.sum(tanhForm(t)))(x)
        .dataSync(),
      'gradient',
      1e-5,
    );
  });
});

test('oneHotFloat is exactly 0/1 on wasm (tf.oneHot float32 is not)', () => {
  const out = tf.tidy(() =>
    oneHotFloat(tf.tensor1d([2, 0, 1], 'int32'), 3)
      .dataSync()
      .slice(),
  );
  assert.deepEqual(Array.from(out), [0, 0, 1, 1, 0, 0, 0, 1, 0]);
});

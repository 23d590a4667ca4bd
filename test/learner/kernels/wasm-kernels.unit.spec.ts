// Unit: trajflow's WASM kernels (learner/kernels) — the committed bytes are the .wat's; the SIMD batched matMul gives, bit for bit, what the
// backend's own kernel gives, for every layout the backward pass uses, odd sizes and sums longer than the
// backend's 48-wide blocks; gradients through it are unchanged; the zero-copy Identity shares data safely.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import { selectBackend } from '../../../learner/backend.js';
import { planProduct, useWasmKernels, wasmKernelCounters } from '../../../learner/kernels/wasm-kernels.js';
import { BATCH_MATMUL_WASM_BASE64 } from '../../../learner/kernels/batch-matmul.wasm.js';
import { compiledKernel } from '../../../scripts/build-wasm-kernels.mjs';

await selectBackend('wasm');

/** Runs f with the backend's kernels and with trajflow's, returning both results' data. */
function bothWays(f: () => tf.Tensor): { backend: Float32Array; simd: Float32Array } {
  useWasmKernels(false);
  try {
    const backend = tf.tidy(f).dataSync() as Float32Array;
    useWasmKernels(true);
    const simd = tf.tidy(f).dataSync() as Float32Array;
    return { backend, simd };
  } finally {
    useWasmKernels(true);
  }
}

function assertBitsEqual(actual: Float32Array, expected: Float32Array, label: string): void {
  assert.equal(actual.length, expected.length, label);
  const a = new Uint32Array(actual.buffer, actual.byteOffset, actual.length);
  const e = new Uint32Array(expected.buffer, expected.byteOffset, expected.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== e[i]) assert.fail(`${label}: element ${i} is ${actual[i]}, the backend gives ${expected[i]}`);
}

test('the committed kernel bytes are batch-matmul.wat compiled (else: node scripts/build-wasm-kernels.mjs)', async () => {
  assert.ok(
    (await compiledKernel('BATCH_MATMUL_WASM_BASE64')) === BATCH_MATMUL_WASM_BASE64,
    'learner/kernels/batch-matmul.wasm.ts is stale: run node scripts/build-wasm-kernels.mjs',
  );
});

test('batched products equal the backend bit for bit, every transpose, odd sizes, k past 48', () => {
  tf.setBackend('wasm');
  const shapes: [number, number, number, number][] = [
    [2, 3, 5, 7],
    [4, 32, 128, 16],
    [3, 9, 17, 20],
    [2, 1, 1, 1],
    [5, 13, 31, 40],
    [3, 32, 16, 128],
    [2, 7, 9, 49],
    [2, 12, 20, 97],
    [2, 5, 6, 144],
    [1, 6, 10, 50],
  ];
  const before = wasmKernelCounters.simdBatchMatMul;
  let seed = 1;
  for (const [batch, m, n, k] of shapes) {
    for (const ta of [false, true]) {
      for (const tb of [false, true]) {
        const a = tf.randomNormal(ta ? [batch, k, m] : [batch, m, k], 0, 1, 'float32', seed++);
        const b = tf.randomNormal(tb ? [batch, n, k] : [batch, k, n], 0, 1, 'float32', seed++);
        const { backend, simd } = bothWays(() => tf.matMul(a, b, ta, tb));
        assertBitsEqual(simd, backend, `[${batch}, ${m}, ${n}, ${k}] transposeA ${ta} transposeB ${tb}`);
        tf.dispose([a, b]);
      }
    }
  }
  // Every case but the single untransposed products (left to XNNPACK) took the SIMD kernel.
  assert.equal(wasmKernelCounters.simdBatchMatMul - before, shapes.length * 4 - 1);
});

test('the products are right, not only equal: a float64 reference', () => {
  const [batch, m, n, k] = [3, 6, 11, 70];
  const a = tf.randomNormal([batch, k, m], 0, 1, 'float32', 11);
  const b = tf.randomNormal([batch, n, k], 0, 1, 'float32', 12);
  const got = tf.matMul(a, b, true, true).arraySync() as number[][][];
  const A = a.arraySync() as number[][][];
  const B = b.arraySync() as number[][][];
  for (let x = 0; x < batch; x++)
    for (let i = 0; i < m; i++)
      for (let j = 0; j < n; j++) {
        let sum = 0;
        for (let q = 0; q < k; q++) sum += A[x]![q]![i]! * B[x]![j]![q]!;
        assert.ok(Math.abs(sum - got[x]![i]![j]!) < 1e-4 * Math.sqrt(k), `C[${x}][${i}][${j}] = ${got[x]![i]![j]} ≠ ${sum}`);
      }
  tf.dispose([a, b]);
});

test('a single matrix broadcast against a batch, and rank-4 attention shapes', () => {
  const w = tf.randomNormal([1, 16, 24], 0, 1, 'float32', 3);
  const x = tf.randomNormal([5, 9, 16], 0, 1, 'float32', 4);
  const broadcast = bothWays(() => tf.matMul(x, w));
  assertBitsEqual(broadcast.simd, broadcast.backend, 'batch against one matrix');
  const q = tf.randomNormal([2, 4, 32, 16], 0, 1, 'float32', 5);
  const keys = tf.randomNormal([2, 4, 96, 16], 0, 1, 'float32', 6);
  const scores = bothWays(() => tf.matMul(q, keys, false, true));
  assertBitsEqual(scores.simd, scores.backend, 'Q·Kᵀ per head');
  tf.dispose([w, x, q, keys]);
});

test('gradients through attention-like products are unchanged', () => {
  const q = tf.randomNormal([3, 2, 8, 16], 0, 1, 'float32', 7);
  const keys = tf.randomNormal([3, 2, 56, 16], 0, 1, 'float32', 8);
  const values = tf.randomNormal([3, 2, 56, 16], 0, 1, 'float32', 9);
  const loss = (qq: tf.Tensor, kk: tf.Tensor, vv: tf.Tensor) => tf.sum(tf.square(tf.matMul(tf.softmax(tf.matMul(qq, kk, false, true)), vv)));
  const grads = tf.grads(loss as (...xs: tf.Tensor[]) => tf.Tensor);
  for (let i = 0; i < 3; i++) {
    const { backend, simd } = bothWays(() => grads([q, keys, values])[i]!);
    assertBitsEqual(simd, backend, `gradient of input ${i}`);
  }
  tf.dispose([q, keys, values]);
});

test('plans: strides per layout, broadcasts it can do, and the ones it leaves to the backend', () => {
  assert.deepEqual(planProduct([2, 3, 4], [2, 4, 5], false, false), {
    outShape: [2, 3, 5],
    batch: 2,
    m: 3,
    n: 5,
    k: 4,
    n8: 8,
    aBatch: 12,
    aRs: 4,
    aKs: 1,
    bBatch: 20,
    bKs: 5,
    bJs: 1,
  });
  assert.deepEqual(planProduct([2, 4, 3], [2, 5, 4], true, true), {
    outShape: [2, 3, 5],
    batch: 2,
    m: 3,
    n: 5,
    k: 4,
    n8: 8,
    aBatch: 12,
    aRs: 1,
    aKs: 3,
    bBatch: 20,
    bKs: 1,
    bJs: 4,
  });
  assert.equal(planProduct([6, 3, 4], [4, 5], false, false)?.bBatch, 0);
  assert.equal(planProduct([2, 3, 4], [3, 4, 5], false, false), undefined); // 2 against 3: not broadcastable
  assert.equal(planProduct([2, 1, 3, 4], [1, 3, 4, 5], false, false), undefined); // a real broadcast of both: backend
  assert.equal(planProduct([2, 3, 4], [2, 5, 5], false, false), undefined); // inner sizes differ
});

test('Identity shares the data: a clone costs no memory and outlives its source', () => {
  const source = tf.tensor2d([
    [1, 2],
    [3, 4],
  ]);
  const buffers = tf.backend().numDataIds();
  const copy = tf.clone(source);
  assert.equal(tf.backend().numDataIds(), buffers, 'the clone allocated a buffer of its own');
  source.dispose();
  assert.deepEqual(Array.from(copy.dataSync()), [1, 2, 3, 4]);
  copy.dispose();
  const tensors = tf.memory().numTensors;
  tf.tidy(() => {
    tf.clone(tf.clone(tf.ones([3])));
  });
  assert.equal(tf.memory().numTensors, tensors);
});

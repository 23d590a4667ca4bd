// The model's building blocks, written for the WASM backend's strengths (the costs behind each choice are in
// docs/results/learner.md):
// - `dense`: matMul's built-in gradient multiplies with transposeA/transposeB set, which WASM runs far
//   slower than a plain product; this custom gradient transposes explicitly first.
// - `embed`: WASM has no UnsortedSegmentSum, the kernel behind gather's gradient, so the embedding's
//   gradient is summed in JS (scatterAddRows; it was a one-hot product, oneHot(ids)ᵀ · dy). Its forward
//   copies the rows in JS too, which is much faster than WASM's own GatherV2.
// Everything else is plain differentiable tfjs ops.
import * as tf from '@tensorflow/tfjs-core';

/** x [n, in] · kernel [in, out] + bias. */
export function dense(x: tf.Tensor2D, kernel: tf.Tensor2D, bias: tf.Tensor1D): tf.Tensor2D {
  return tf.add(matMulFastGrad(x, kernel), bias);
}

const matMulFastGrad = tf.customGrad(((x: tf.Tensor, w: tf.Tensor, save: tf.GradSaveFunc) => {
  save([x, w]);
  return {
    value: tf.matMul(x as tf.Tensor2D, w as tf.Tensor2D),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => {
      const [xs, ws] = saved as [tf.Tensor2D, tf.Tensor2D];
      return [tf.matMul(dy as tf.Tensor2D, tf.transpose(ws)), tf.matMul(tf.transpose(xs), dy as tf.Tensor2D)];
    },
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (x: tf.Tensor2D, w: tf.Tensor2D) => tf.Tensor2D;

/** Rows of `table` [vocab, d] for `ids` [n] (int32) → [n, d]; gradient by one-hot product. */
export function embed(table: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor2D {
  return embedFastGrad(table, ids);
}

// ids is an input of the op (with a zero gradient) so the tape keeps it alive until the backward pass.
const embedFastGrad = tf.customGrad(((table: tf.Tensor, ids: tf.Tensor, save: tf.GradSaveFunc) => {
  save([ids]);
  const vocab = table.shape[0]!;
  return {
    value: lookupRows(table as tf.Tensor2D, ids as tf.Tensor1D),
    gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) => [scatterAddRows(dy as tf.Tensor2D, saved[0] as tf.Tensor1D, vocab), tf.zerosLike(saved[0]!)],
  };
}) as unknown as Parameters<typeof tf.customGrad>[0]) as unknown as (table: tf.Tensor2D, ids: tf.Tensor1D) => tf.Tensor2D;

/** table[ids] as tf.gather computes it (the same values: a copy), built in JS from the two tensors' data. */
function lookupRows(table: tf.Tensor2D, ids: tf.Tensor1D): tf.Tensor2D {
  const [vocab, width] = table.shape;
  const rows = table.dataSync() as Float32Array;
  const index = ids.dataSync();
  const out = new Float32Array(index.length * width);
  for (let i = 0; i < index.length; i++) {
    const id = index[i]!;
    if (!(id >= 0 && id < vocab)) throw new RangeError(`embed: id ${id} is outside the table's ${vocab} rows`);
    out.set(rows.subarray(id * width, (id + 1) * width), i * width);
  }
  return tf.tensor2d(out, [index.length, width]);
}

/**
 * The table's gradient: row ids[i] of the result accumulates dy[i], in index order. The same sums as
 * oneHot(ids)ᵀ · dy (in another order, so equal up to float rounding), without the [vocab, n] · [n, d] product.
 */
function scatterAddRows(dy: tf.Tensor2D, ids: tf.Tensor1D, vocab: number): tf.Tensor2D {
  const width = dy.shape[1];
  const grads = dy.dataSync() as Float32Array;
  const index = ids.dataSync();
  const out = new Float32Array(vocab * width);
  for (let i = 0; i < index.length; i++) {
    const to = index[i]! * width;
    const from = i * width;
    for (let j = 0; j < width; j++) out[to + j] = out[to + j]! + grads[from + j]!;
  }
  return tf.tensor2d(out, [vocab, width]);
}

/**
 * One-hot rows as float32. Not tf.oneHot(…, 'float32'): the WASM backend (tfjs 4.22) writes the integer
 * bit pattern into the float buffer (1 becomes 1.4e-45), so build int32 and cast.
 */
export function oneHotFloat(indices: tf.Tensor, depth: number): tf.Tensor {
  return tf.cast(tf.oneHot(indices as tf.Tensor1D, depth), 'float32');
}

/** log p(target) at every position from logits [B, T, V] and target indices [B, T] (< depth): [B, T]. */
export function targetLogProbs(logits: tf.Tensor3D, targets: tf.Tensor2D, depth: number): tf.Tensor2D {
  return tf.sum(tf.mul(tf.logSoftmax(logits), oneHotFloat(targets, depth)), -1) as tf.Tensor2D;
}

/** Layer norm over the last axis (ε 1e-5, as GPT-2). */
export function layerNorm(x: tf.Tensor2D, gain: tf.Tensor1D, bias: tf.Tensor1D): tf.Tensor2D {
  const { mean, variance } = tf.moments(x, -1, true);
  return tf.add(tf.mul(tf.div(tf.sub(x, mean), tf.sqrt(tf.add(variance, 1e-5))), gain), bias);
}

/**
 * GELU, tanh approximation (GPT-2): 0.5·x·(1 + tanh(z)), z = √(2/π)·(x + 0.044715·x³), computed as the
 * identical x·sigmoid(2z), since WASM's tanh and pow are much slower than its sigmoid and multiply.
 */
export function gelu(x: tf.Tensor2D): tf.Tensor2D {
  const inner = tf.mul(2 * Math.sqrt(2 / Math.PI), tf.add(x, tf.mul(0.044715, tf.mul(tf.mul(x, x), x))));
  return tf.mul(x, tf.sigmoid(inner));
}

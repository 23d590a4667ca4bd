// Shared setup for the loss specs: the cpu backend with gradients registered, and float32 comparisons.
import assert from 'node:assert/strict';
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
// tfjs-core registers no gradients by itself; the learner gets them from learner/backend.ts (which loads
// the @tensorflow/tfjs bundle), so the specs load it the same way.
import '../../../learner/backend.js';

await tf.setBackend('cpu');
await tf.ready();

export { tf };

/** A tensor's values as a plain array (tests only: reads the data synchronously). */
export const values = (t: tf.Tensor): number[] => Array.from(t.dataSync());

/** Scalar value of a tensor. */
export const scalar = (t: tf.Tensor): number => values(t)[0]!;

/** Elementwise |actual − expected| ≤ tolerance (float32 arithmetic: 1e-5 by default). */
export function near(actual: number | readonly number[], expected: number | readonly number[], tolerance = 1e-5, label = ''): void {
  const a = typeof actual === 'number' ? [actual] : actual;
  const e = typeof expected === 'number' ? [expected] : expected;
  assert.equal(a.length, e.length, `${label} length: ${a} vs ${e}`);
  a.forEach((x, i) => assert.ok(Math.abs(x - e[i]!) <= tolerance, `${label} index ${i}: ${x} vs ${e[i]} (tolerance ${tolerance})`));
}

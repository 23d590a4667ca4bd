// tfjs-core has no stopGradient (torch's .detach()): the learner's loss needs one for the straight-through
// KL estimators (docs/algorithms.md §2.4) and for the importance weights that must stay constants. A customGrad
// whose forward is the identity and whose backward is zero gives exactly that, on every backend (no
// kernel of its own: Identity forward, ZerosLike backward).
import * as tf from '@tensorflow/tfjs-core';

const stop = tf.customGrad((...args: Array<tf.Tensor | tf.GradSaveFunc>) => {
  const x = args[0] as tf.Tensor;
  // A clone, not `x` itself: the op's output must be a new tensor, or the tape would see a cycle.
  return { value: tf.clone(x), gradFunc: (dy: tf.Tensor) => tf.zerosLike(dy) };
});

/** `x` as a constant: same value, zero gradient to whatever produced it. Does not dispose `x`. */
export function stopGradient<T extends tf.Tensor>(x: T): T {
  return stop(x) as T;
}

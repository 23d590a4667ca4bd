// Per-token entropy of the policy's next-token distribution (docs/algorithms.md §8, verl
// `entropy_from_logits`): H = logsumexp(z) − Σ_v softmax(z)_v·z_v. It is logged as the rollout entropy
// and, with entropyCoeff > 0, enters the loss as a bonus. Callers divide the logits by the rollout
// temperature first. Built from logSumExp and elementwise ops only (no softmax kernel), so it runs and
// differentiates on cpu and wasm alike. Logits must be finite (a −Inf logit would give 0·(−Inf) = NaN).
import * as tf from '@tensorflow/tfjs-core';
import { TrajflowError } from '../../core/errors.js';

/** logits [B, T, V] → entropy [B, T] (nats). Disposes nothing it was given. */
export function entropyFromLogits(logits: tf.Tensor): tf.Tensor {
  if (logits.rank !== 3) {
    throw new TrajflowError('SHAPE', `logits must be [B, T, V]; got [${logits.shape.join(', ')}].`);
  }
  return tf.tidy(() => {
    const lse = tf.logSumExp(logits, -1); // [B, T]
    const probs = tf.exp(tf.sub(logits, tf.expandDims(lse, -1))); // softmax, [B, T, V]
    return tf.sub(lse, tf.sum(tf.mul(probs, logits), -1));
  });
}

/**
 * The entropy of the policy's average next-token distribution over the scored positions, H(Ā) (nats): logits
 * [B, T, V] and mask [B, T] → scalar. High when the policy spreads its choices over the tokens across states, even
 * where each state's own choice is sure; a bonus on it counters a drift of the state-independent preference.
 */
export function marginalEntropyFromLogits(logits: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  if (logits.rank !== 3 || mask.rank !== 2) {
    throw new TrajflowError('SHAPE', `logits must be [B, T, V] and mask [B, T]; got [${logits.shape.join(', ')}] and [${mask.shape.join(', ')}].`);
  }
  return tf.tidy(() => {
    const probs = tf.exp(tf.sub(logits, tf.expandDims(tf.logSumExp(logits, -1), -1)));
    const weights = tf.expandDims(tf.cast(mask, 'float32'), -1);
    const average = tf.div(tf.sum(tf.mul(probs, weights), [0, 1]), tf.maximum(tf.sum(weights), 1));
    return tf.neg(tf.sum(tf.mul(average, tf.log(tf.maximum(average, 1e-12))))) as tf.Scalar;
  });
}

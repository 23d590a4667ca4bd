// The critic's advantage (an actor-critic's baseline, Sutton & Barto §13.4; PPO's whitened advantages): each
// scored position's value target minus the value head's estimate of it, whitened over the batch's scored
// positions. It gives a state its own expectation, where a group-relative estimator needs several rollouts of
// one task to compare against.
import * as tf from '@tensorflow/tfjs-core';
import { maskedMean } from './aggregate.js';

/** (target − value), centred and scaled to unit deviation over the positions where mask is 1; 0 elsewhere. */
export function criticAdvantages(values: tf.Tensor2D, valueTargets: tf.Tensor2D, mask: tf.Tensor2D): tf.Tensor2D {
  return tf.tidy(() => {
    const residual = tf.sub(valueTargets, values);
    const centred = tf.sub(residual, maskedMean(residual, mask));
    const std = tf.sqrt(maskedMean(tf.square(tf.mul(centred, mask)), mask));
    return tf.mul(tf.div(centred, tf.add(std, 1e-6)), mask) as tf.Tensor2D;
  });
}

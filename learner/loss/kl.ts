// Per-token KL estimators between the policy and the frozen reference policy (docs/algorithms.md §2.4, verl
// `kl_penalty_forward`), for KL-as-loss (loss += klCoeff·agg(kl)) and for logging. With d = logp − refLogp:
//   k1   d                         (verl 'kl')
//   abs  |d|
//   k2   0.5·d²                    (verl 'mse')
//   k3   e^{−d} − (−d) − 1         (verl 'low_var_kl'); −d clamped to [−20, 20], the result to [−10, 10]
//   k1+ / k3+  straight-through: forward value of k1 / k3, gradient of k2 (= d), computed as
//              0.5·d² − stopgrad(0.5·d²) + stopgrad(fwd)
// Only verl's short names are accepted (buildPolicyLossConfig's message maps the long ones).
import * as tf from '@tensorflow/tfjs-core';
import { ConfigError } from '../../core/errors.js';
import { assertSameShape2d } from './aggregate.js';
import { stopGradient } from './stop-gradient.js';

export type KlEstimator = 'k1' | 'abs' | 'k2' | 'k3' | 'k1+' | 'k3+';

export const KL_ESTIMATORS: readonly KlEstimator[] = ['k1', 'abs', 'k2', 'k3', 'k1+', 'k3+'];

export function isKlEstimator(value: unknown): value is KlEstimator {
  return typeof value === 'string' && (KL_ESTIMATORS as readonly string[]).includes(value);
}

/** k3 from d = logp − refLogp, with verl's clamps (which also zero the gradient where they bite). */
function k3(d: tf.Tensor): tf.Tensor {
  const kl = tf.clipByValue(tf.neg(d), -20, 20);
  return tf.clipByValue(tf.sub(tf.sub(tf.exp(kl), kl), 1), -10, 10);
}

/** Per-token KL penalty, same shape as the inputs ([B, T]). Unmasked: aggregate with aggLoss. Disposes nothing it was given. */
export function klPenalty(logp: tf.Tensor, refLogp: tf.Tensor, estimator: KlEstimator): tf.Tensor {
  assertSameShape2d('refLogp', refLogp, logp, 'logp');
  if (!isKlEstimator(estimator)) {
    throw new ConfigError(`KL estimator must be one of ${KL_ESTIMATORS.map((k) => `'${k}'`).join(', ')}; got ${JSON.stringify(estimator)}.`);
  }
  return tf.tidy(() => {
    const d = tf.sub(logp, refLogp);
    switch (estimator) {
      case 'k1':
        return d;
      case 'abs':
        // d·sign(d), not tf.abs: tfjs' Abs gradient is −1 at 0 (torch's is 0), and d is exactly 0 on every
        // token while the policy still equals the reference.
        return tf.mul(d, tf.sign(d));
      case 'k2':
        return tf.mul(tf.square(d), 0.5);
      case 'k3':
        return k3(d);
      case 'k1+':
      case 'k3+': {
        const k2 = tf.mul(tf.square(d), 0.5);
        const forward = estimator === 'k1+' ? d : k3(d);
        // For finite values k2 − k2 is exactly 0, so the value is exactly `forward`.
        return tf.add(tf.sub(k2, stopGradient(k2)), stopGradient(forward));
      }
    }
  });
}

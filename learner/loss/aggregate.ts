// Loss aggregation (docs/algorithms.md §1.1, verl `agg_loss`): turns a per-token loss matrix [B, T] and its
// loss mask into the scalar that is differentiated. The mode decides how much each token and each sequence
// weighs, which is an algorithm choice in itself (DAPO's token-mean vs GRPO's per-sample 1/|o_i| vs
// Dr. GRPO's constant divisor), so it lives in one place and every loss term uses it.
//
// Choices where §1.1 leaves room:
// - Masked positions are replaced by 0 with `where` before summing (not only multiplied by the mask), so a
//   NaN/Inf sitting under the mask (padding) cannot reach the value. Their gradient is exactly 0.
// - seq-mean-token-sum averages over the sequences with ≥ 1 valid token, like seq-mean-token-mean (current
//   verl excludes fully masked sequences in both modes; older verl's torch.mean counted them as 0).
// - Every division is guarded: an all-masked batch (or row) gives 0, never NaN. With 0/1 masks the guard
//   max(count, 1) changes nothing when count ≥ 1.
// - `tokenCount` applies to token-mean only (verl's global batch_num_tokens; dp_size is 1 here).
import * as tf from '@tensorflow/tfjs-core';
import { ConfigError, TrajflowError } from '../../core/errors.js';

export type LossAggMode = 'token-mean' | 'seq-mean-token-mean' | 'seq-mean-token-sum' | 'seq-mean-token-sum-norm';

export const LOSS_AGG_MODES: readonly LossAggMode[] = ['token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum', 'seq-mean-token-sum-norm'];

export interface AggLossOptions {
  /** seq-mean-token-sum-norm's divisor C (Dr. GRPO: a fixed number such as the max response length). Default: T. */
  lossScaleFactor?: number;
  /**
   * token-mean's divisor instead of this tensor's own count of valid tokens: the whole batch's count, so
   * that the minibatches of one batch add up to the batch's token-mean (verl's global token count).
   */
  tokenCount?: number;
}

export function isLossAggMode(value: unknown): value is LossAggMode {
  return typeof value === 'string' && (LOSS_AGG_MODES as readonly string[]).includes(value);
}

/** Throws unless both tensors are [B, T] with the same shape. */
export function assertSameShape2d(name: string, tensor: tf.Tensor, reference: tf.Tensor, referenceName = 'mask'): void {
  if (tensor.rank !== 2 || !tf.util.arraysEqual(tensor.shape, reference.shape)) {
    throw new TrajflowError('SHAPE', `${name} must be [B, T] with the shape of ${referenceName} [${reference.shape.join(', ')}]; got [${tensor.shape.join(', ')}].`);
  }
}

/** The mask as float32 (it may arrive as bool or int32). */
export function floatMask(mask: tf.Tensor): tf.Tensor {
  return mask.dtype === 'float32' ? mask : tf.cast(mask, 'float32');
}

/** lossMat·mask with masked positions forced to exactly 0 (even when lossMat holds NaN/Inf there). */
function maskedValues(lossMat: tf.Tensor, mask: tf.Tensor): tf.Tensor {
  return tf.where(tf.greater(mask, 0), tf.mul(lossMat, mask), tf.zerosLike(lossMat));
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigError(`${name} must be a finite number > 0; got ${value}. Leave it unset to use the default.`);
  }
  return value;
}

/** Aggregates a [B, T] per-token loss over the tokens where mask is 1; returns a scalar. Disposes nothing it was given. */
export function aggLoss(lossMat: tf.Tensor, mask: tf.Tensor, mode: LossAggMode, options: AggLossOptions = {}): tf.Scalar {
  assertSameShape2d('lossMat', lossMat, mask);
  if (!isLossAggMode(mode)) {
    throw new ConfigError(`loss aggregation mode must be one of ${LOSS_AGG_MODES.map((m) => `'${m}'`).join(', ')}; got ${JSON.stringify(mode)}.`);
  }
  const { lossScaleFactor, tokenCount } = options;
  if (lossScaleFactor !== undefined) positive('lossScaleFactor', lossScaleFactor);
  if (tokenCount !== undefined && (!Number.isFinite(tokenCount) || tokenCount < 0)) {
    throw new ConfigError(`tokenCount must be the batch's number of valid tokens (a finite number ≥ 0); got ${tokenCount}.`);
  }
  return tf.tidy(() => {
    const m = floatMask(mask);
    const values = maskedValues(lossMat, m);
    switch (mode) {
      case 'token-mean': {
        // tokenCount 0 means the whole batch is masked, so the sum is 0 too: divide by 1.
        const count = tokenCount !== undefined ? tf.scalar(tokenCount > 0 ? tokenCount : 1) : tf.maximum(tf.sum(m), 1);
        return tf.div(tf.sum(values), count) as tf.Scalar;
      }
      case 'seq-mean-token-mean':
      case 'seq-mean-token-sum': {
        const perSeqCount = tf.sum(m, -1); // [B]
        const perSeqSum = tf.sum(values, -1);
        const seqLoss = mode === 'seq-mean-token-mean' ? tf.div(perSeqSum, tf.maximum(perSeqCount, 1)) : perSeqSum;
        // A fully masked row has seqLoss exactly 0; it is left out of the count of sequences.
        const validSeqs = tf.sum(tf.cast(tf.greater(perSeqCount, 0), 'float32'));
        return tf.div(tf.sum(seqLoss), tf.maximum(validSeqs, 1)) as tf.Scalar;
      }
      case 'seq-mean-token-sum-norm': {
        // Σ over all tokens / C, no division by the number of sequences (docs/algorithms.md §1.1).
        const c = lossScaleFactor ?? (mask.shape[1] as number);
        return tf.div(tf.sum(values), Math.max(c, 1)) as tf.Scalar;
      }
    }
  });
}

/** Plain masked mean over all valid tokens (0 when none): the value logged for metrics. */
export function maskedMean(values: tf.Tensor, mask: tf.Tensor): tf.Scalar {
  return aggLoss(values, mask, 'token-mean');
}

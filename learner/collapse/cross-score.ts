// RAGEN-2's cross-scoring on the policy: every chosen reply teacher-forced after every distinct prompt,
// ℓ_j(z_i) = Σ_t log π(z_t | x_j, z_<t) under the same constrained reply head and temperature the sampler
// and the learner use (so ℓ_own(z) is the reply's behaviour log-prob when the weights have not moved).
// Forward passes only, in micro-batches of rows; long prompts lose their oldest tokens, as in training, and a
// turn-span policy reads each prompt's last turn only, as it samples (visibleContext).
import * as tf from '@tensorflow/tfjs-core';
import { targetLogProbs } from '../model/ops.js';
import { visibleContext, type ReplyHead, type TransformerModel } from '../model/transformer.js';
import type { CrossScores } from './metrics.js';
import type { ScoringPairs } from './pairs.js';

export interface CrossScoreOptions {
  readonly temperature: number;
  /** Sequences per forward pass (RAGEN-2 uses 128). */
  readonly microBatch?: number;
}

/** The replies × prompts matrix of summed reply log-probs. */
export function crossScore(model: TransformerModel, head: ReplyHead, pairs: ScoringPairs, options: CrossScoreOptions): CrossScores {
  const { prompts, replies } = pairs;
  const columns = prompts.length;
  const rows = replies.length;
  const contextLength = model.config.contextLength;
  const visible = prompts.map((prompt) => visibleContext(prompt, model.config.attentionSpan));
  const microBatch = Math.max(1, options.microBatch ?? 128);
  const scores = new Float64Array(rows * columns);

  // One sequence per (reply, prompt): input ids and the reply's targets at the positions that predict them.
  const cells: { at: number; ids: number[]; from: number; targets: number[] }[] = [];
  replies.forEach((reply, i) => {
    const targets = reply.tokens.map((id) => {
      const index = head.indexOf(id);
      if (index === undefined) throw new RangeError(`cross-scoring: reply token ${id} is not in the policy's reply vocabulary`);
      return index;
    });
    visible.forEach((prompt, j) => {
      // Input = prompt + reply without its last token; keep the newest contextLength inputs.
      const full = [...prompt, ...reply.tokens];
      const start = Math.max(0, full.length - 1 - contextLength);
      const ids = full.slice(start, full.length - 1);
      cells.push({ at: i * columns + j, ids, from: prompt.length - 1 - start, targets });
    });
  });

  for (let first = 0; first < cells.length; first += microBatch) {
    const chunk = cells.slice(first, first + microBatch);
    const time = Math.max(...chunk.map((c) => c.ids.length));
    const ids = new Int32Array(chunk.length * time);
    const targets = new Int32Array(chunk.length * time);
    const mask = new Float32Array(chunk.length * time);
    chunk.forEach((cell, r) => {
      ids.set(cell.ids, r * time);
      cell.targets.forEach((target, k) => {
        const position = cell.from + k;
        if (position < 0) return; // the prompt was cut away entirely (reply longer than the context)
        targets[r * time + position] = target;
        mask[r * time + position] = 1;
      });
    });
    const summed = tf.tidy(() => {
      const logits = tf.div(model.logits(tf.tensor2d(ids, [chunk.length, time], 'int32'), head), options.temperature) as tf.Tensor3D;
      const logp = targetLogProbs(logits, tf.tensor2d(targets, [chunk.length, time], 'int32'), head.size);
      return tf.sum(tf.mul(logp, tf.tensor2d(mask, [chunk.length, time])), -1);
    });
    const values = summed.dataSync();
    summed.dispose();
    chunk.forEach((cell, r) => (scores[cell.at] = values[r]!));
  }
  return { scores, rows, columns, own: replies.map((r) => r.own), replyTokens: replies.map((r) => r.tokens.length) };
}

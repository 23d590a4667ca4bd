// One learner update on a batch: optional proximal/reference log-probs (no gradient), then `epochs`
// passes of `minibatches` optimizer steps, each: PPO loss → gradients → total norm before clipping →
// skip when not finite → clip to gradClip → Adam. Metrics come back as plain numbers; every tensor made
// here is freed (tf.memory().numTensors stays flat across updates, see the leak test).
import * as tf from '@tensorflow/tfjs-core';
import { entropyFromLogits, policyLoss, type PolicyLossConfig } from '../loss/index.js';
import { targetLogProbs } from '../model/ops.js';
import type { ReplyHead, TransformerModel } from '../model/transformer.js';
import { minibatchRows, shuffledRows, splitTurnRows, type TrainingBatch } from './batch.js';
import { learningRateAt, type OptimizerConfig } from './config.js';

export interface UpdateMetrics {
  readonly loss: number;
  readonly pgLoss: number;
  readonly entropy: number;
  readonly kl: number;
  /** The KL and entropy terms as they entered the loss: klCoeff·kl and −entropyCoeff·entropy. */
  readonly klLoss: number;
  readonly entropyLoss: number;
  readonly ppoKl: number;
  readonly clipFracHigh: number;
  readonly clipFracLow: number;
  readonly clipFracDual: number;
  /** Total gradient norm before clipping (max over the update's optimizer steps). */
  readonly gradNorm: number;
  readonly learningRate: number;
  readonly optimizerSteps: number;
  /** Optimizer steps skipped because the gradient norm was not finite. */
  readonly skippedSteps: number;
  /** 1 when the update stopped early on optimizer.targetKl (the PPO-KL of the step it stopped at in klAtStop), else 0. */
  readonly klEarlyStop: number;
  readonly klAtStop: number;
  readonly lossTokens: number;
  readonly tokens: number;
  readonly samples: number;
  /** Importance weights (recompute mode / replay): mean, max, and how many were truncated at the cap. */
  readonly importanceWeightMean: number;
  readonly importanceWeightMax: number;
  readonly truncatedWeights: number;
  readonly durationMs: number;
}

export interface TrainerOptions {
  readonly model: TransformerModel;
  readonly head: ReplyHead;
  readonly optimizer: OptimizerConfig;
  readonly loss: PolicyLossConfig;
  /** Frozen reference policy for the KL term (required when loss.klCoeff > 0). */
  readonly reference?: TransformerModel;
}

export class PolicyTrainer {
  private readonly adam: tf.AdamOptimizer;
  /** Updates done so far (drives the learning-rate schedule; restored from checkpoints). */
  updates = 0;

  constructor(private readonly options: TrainerOptions) {
    const o = options.optimizer;
    if (options.loss.klCoeff > 0 && !options.reference) throw new RangeError('loss.klCoeff > 0 needs a reference model');
    this.adam = tf.train.adam(o.learningRate, o.beta1, o.beta2, o.epsilon);
  }

  /** Adam's state (step count and moments), for checkpoints. */
  async optimizerState(): Promise<{ name: string; values: Float32Array; shape: number[] }[]> {
    const weights = await this.adam.getWeights();
    return Promise.all(weights.map(async (w) => ({ name: w.name, shape: [...w.tensor.shape], values: (await w.tensor.data()) as Float32Array })));
  }

  async restoreOptimizerState(state: readonly { name: string; values: Float32Array; shape: readonly number[] }[]): Promise<void> {
    if (state.length === 0) return;
    await this.adam.setWeights(state.map((s) => ({ name: s.name, tensor: tf.tensor(s.values, [...s.shape], 'float32') })));
  }

  /**
   * Whether update() trains one row per turn. Within-turn attention gives the same token log-probs on rows
   * ~maxTurns times shorter; only with token-mean aggregation, where rows do not weigh tokens (seq-mean-*
   * modes average per sample). Build its batches with buildBatch(…, { turnRows }) so that no turn is cut.
   */
  get turnRows(): boolean {
    const { model, loss, reference } = this.options;
    return model.config.attentionSpan === 'turn' && loss.lossAggMode === 'token-mean' && (!reference || reference.config.attentionSpan === 'turn');
  }

  /** One update on `batch`. `recompute` forces the decoupled objective (replayed samples). */
  update(input: TrainingBatch, options: { recompute?: boolean } = {}): UpdateMetrics {
    const started = performance.now();
    const { model, head, optimizer: o, loss: lossConfig, reference } = this.options;
    const batch = this.turnRows ? splitTurnRows(input, model.config.contextLength) : input;
    if (batch.time > model.config.contextLength) {
      throw new RangeError(`batch rows of ${batch.time} positions exceed the model's contextLength ${model.config.contextLength}: build the batch with buildBatch(…, { turnRows: trainer.turnRows })`);
    }
    const learningRate = learningRateAt(o, this.updates);
    (this.adam as unknown as { learningRate: number }).learningRate = learningRate;
    const shape: [number, number] = [batch.rows, batch.time];
    const recompute = options.recompute === true || o.proximal === 'recompute';
    const sums = { loss: 0, pgLoss: 0, entropy: 0, kl: 0, ppoKl: 0, clipFracHigh: 0, clipFracLow: 0, clipFracDual: 0 };
    let gradNorm = 0;
    let steps = 0;
    let skipped = 0;
    let klAtStop = 0;
    let weightStats = { mean: 1, max: 1, truncated: 0 };

    // Constants of the whole update: ratio anchor, importance weights, reference log-probs.
    const full = tf.tidy(() => {
      const ids = tf.tensor2d(batch.ids, shape, 'int32');
      const targets = tf.tensor2d(batch.targets, shape, 'int32');
      const mask = tf.tensor2d(batch.mask, shape);
      const behaviour = tf.tensor2d(batch.behaviourLogProbs, shape);
      let oldLogp: tf.Tensor2D = behaviour;
      let isWeights: tf.Tensor2D | undefined;

      if (recompute) {
        oldLogp = tf.mul(this.tokenLogProbs(model, ids, targets).logp, mask) as tf.Tensor2D;
        const raw = tf.mul(tf.exp(tf.clipByValue(tf.sub(oldLogp, behaviour), -20, 20)), mask);
        isWeights = tf.minimum(raw, o.importanceCap) as tf.Tensor2D;
        const [sum, max, truncated] = [tf.sum(raw), tf.max(raw), tf.sum(tf.cast(tf.greater(raw, o.importanceCap), 'float32'))].map((t) => t.dataSync()[0]!) as [number, number, number];
        weightStats = { mean: batch.lossTokens > 0 ? sum / batch.lossTokens : 1, max, truncated };
      }
      const refLogp = reference ? (tf.mul(this.tokenLogProbs(reference, ids, targets).logp, mask) as tf.Tensor2D) : undefined;
      return { ids, targets, mask, advantages: tf.tensor2d(batch.advantages, shape), oldLogp, isWeights, refLogp };
    });

    try {
      update: for (let epoch = 0; epoch < o.epochs; epoch++) {
        // Shuffled: this epoch's tensors with their rows in a seeded order, cut into consecutive minibatches.
        const dealt = o.shuffleMinibatches && o.minibatches > 1 ? shuffled(full, shuffledRows(batch.rows, this.updates, epoch)) : full;
        try {
          for (const [from, to] of minibatchRows(batch.rows, o.minibatches)) {
            const rows = (t: tf.Tensor2D | undefined) => (t ? tf.slice(t, [from, 0], [to - from, batch.time]) : undefined);
            const kept: tf.Scalar[] = [];
            const { value, grads } = tf.variableGrads(() => {
              const ids = rows(dealt.ids)!;
              const { logp, entropy } = this.tokenLogProbs(model, ids, rows(dealt.targets)!);
              const out = policyLoss(
                { logp, oldLogp: rows(dealt.oldLogp)!, advantages: rows(dealt.advantages)!, mask: rows(dealt.mask)!, isWeights: rows(dealt.isWeights), entropy, refLogp: rows(dealt.refLogp) },
                lossConfig,
              );
              kept.push(...[out.pgLoss, out.entropy, out.kl, out.metrics.ppoKl, out.metrics.clipFracHigh, out.metrics.clipFracLow, out.metrics.clipFracDual].map((t) => tf.keep(t)));
              return out.loss;
            }, model.variables());
            const values = [value, ...kept].map((t) => t.dataSync()[0]!);
            tf.dispose([value, ...kept]);
            const [loss, pgLoss, entropy, kl, ppoKl, high, low, dual] = values as [number, number, number, number, number, number, number, number];
            if (o.targetKl !== null && ppoKl > 1.5 * o.targetKl) {
              // SB3's rule: this minibatch already sees the policy too far from the behaviour one; no step, no more epochs.
              klAtStop = ppoKl;
              tf.dispose(Object.values(grads));
              break update;
            }
            const norm = tf.tidy(() => Math.sqrt(tf.addN(Object.values(grads).map((g) => tf.sum(tf.square(g)))).dataSync()[0]!));
            steps++;
            gradNorm = Math.max(gradNorm, norm);
            if (!Number.isFinite(norm)) {
              skipped++;
              tf.dispose(Object.values(grads));
              continue;
            }
            const scale = Math.min(1, o.gradClip / (norm + 1e-6));
            const clipped: tf.NamedTensorMap = tf.tidy(() => Object.fromEntries(Object.entries(grads).map(([name, g]) => [name, scale < 1 ? tf.mul(g, scale) : tf.clone(g)])));
            tf.dispose(Object.values(grads));
            this.adam.applyGradients(clipped as Parameters<tf.AdamOptimizer["applyGradients"]>[0]);
            tf.dispose(Object.values(clipped));
            sums.loss += loss;
            sums.pgLoss += pgLoss;
            sums.entropy += entropy;
            sums.kl += kl;
            sums.ppoKl += ppoKl;
            sums.clipFracHigh += high;
            sums.clipFracLow += low;
            sums.clipFracDual += dual;
          }
        } finally {
          if (dealt !== full) tf.dispose(tensorsOf(dealt));
        }
      }
    } finally {
      tf.dispose(tensorsOf(full));
    }
    this.updates++;
    const done = Math.max(1, steps - skipped);
    return {
      loss: sums.loss / done,
      pgLoss: sums.pgLoss / done,
      entropy: sums.entropy / done,
      kl: sums.kl / done,
      klLoss: (lossConfig.klCoeff * sums.kl) / done,
      entropyLoss: (-lossConfig.entropyCoeff * sums.entropy) / done,
      ppoKl: sums.ppoKl / done,
      clipFracHigh: sums.clipFracHigh / done,
      clipFracLow: sums.clipFracLow / done,
      clipFracDual: sums.clipFracDual / done,
      gradNorm,
      learningRate,
      optimizerSteps: steps,
      skippedSteps: skipped,
      klEarlyStop: klAtStop > 0 ? 1 : 0,
      klAtStop,
      lossTokens: batch.lossTokens,
      tokens: input.tokens,
      samples: input.rows,
      importanceWeightMean: weightStats.mean,
      importanceWeightMax: weightStats.max,
      truncatedWeights: weightStats.truncated,
      durationMs: performance.now() - started,
    };
  }

  /** log π(target) and the entropy at every position, over the reply vocabulary, at the sampling temperature. */
  private tokenLogProbs(model: TransformerModel, ids: tf.Tensor2D, targets: tf.Tensor2D): { logp: tf.Tensor2D; entropy: tf.Tensor2D } {
    const logits = tf.div(model.logits(ids, this.options.head), this.options.optimizer.temperature) as tf.Tensor3D;
    const logp = targetLogProbs(logits, targets, this.options.head.size);
    return { logp, entropy: entropyFromLogits(logits) as tf.Tensor2D };
  }

  dispose(): void {
    this.adam.dispose();
  }
}

/** Every tensor of `full` with its rows (axis 0) in `order`. */
function shuffled<T extends Record<string, tf.Tensor2D | undefined>>(full: T, order: Int32Array): T {
  return tf.tidy(() => {
    const indices = tf.tensor1d(order, 'int32');
    return Object.fromEntries(Object.entries(full).map(([name, t]) => [name, t === undefined ? undefined : tf.gather(t, indices)])) as T;
  });
}

/** The tensors of a record whose optional entries may be absent. */
function tensorsOf(record: Record<string, tf.Tensor2D | undefined>): tf.Tensor2D[] {
  return Object.values(record).filter((t): t is tf.Tensor2D => t !== undefined);
}

// One learner update on a batch: optional proximal/reference log-probs (no gradient), then `epochs`
// passes of `minibatches` optimizer steps, each: PPO loss → gradients → total norm before clipping →
// skip when not finite → clip to gradClip → Adam. Which rows each step takes is minibatch-plan.ts's; the
// decisions on numbers (stop early, skip, clip scale) and the metrics are update-tally.ts's; this file does the
// tensor work, in that order. Metrics come back as plain numbers; every tensor made here is freed
// (tf.memory().numTensors stays flat across updates, see the leak test).
import * as tf from '@tensorflow/tfjs-core';
import { ConfigError } from '../../core/errors.js';
import { criticAdvantages, entropyFromLogits, marginalEntropyFromLogits, maskedMean, policyLoss, type PolicyLossConfig } from '../loss/index.js';
import { targetLogProbs } from '../model/ops.js';
import type { ReplyHead, TransformerModel } from '../model/transformer.js';
import { advantagesCentredByAction, splitTurnRows, type TrainingBatch } from './batch.js';
import { learningRateAt, type OptimizerConfig } from './config.js';
import { minibatchPlan } from './minibatch-plan.js';
import { clipScale, UpdateTally, type MinibatchValues, type UpdateMetrics } from './update-tally.js';

export type { UpdateMetrics } from './update-tally.js';

/** The tensors of one update, one row per batch row: inputs, ratio anchor, importance weights, reference log-probs. */
type UpdateTensors = {
  readonly ids: tf.Tensor2D;
  readonly targets: tf.Tensor2D;
  readonly mask: tf.Tensor2D;
  readonly advantages: tf.Tensor2D;
  readonly oldLogp: tf.Tensor2D;
  readonly isWeights: tf.Tensor2D | undefined;
  readonly refLogp: tf.Tensor2D | undefined;
  /** The value head's target per position (reward·γ^turnsLeft); undefined without a value loss. */
  readonly valueTargets: tf.Tensor2D | undefined;
};

export interface TrainerOptions {
  readonly model: TransformerModel;
  readonly head: ReplyHead;
  readonly optimizer: OptimizerConfig;
  readonly loss: PolicyLossConfig;
  /** Frozen reference policy for the KL term (required when loss.klCoeff > 0). */
  readonly reference?: TransformerModel;
  /**
   * Called before every applied optimizer step with each parameter's gradient norm (before clipping), keyed by
   * parameter name (e.g. `block0/attn/qkv/kernel`): the per-layer view of a diagnosis. Off (not computed) when unset.
   */
  readonly observeGradients?: (norms: ReadonlyMap<string, number>) => void;
}

export class PolicyTrainer {
  private readonly adam: tf.AdamOptimizer;
  /** Updates done so far (drives the learning-rate schedule; restored from checkpoints). */
  updates = 0;

  constructor(private options: TrainerOptions) {
    const o = options.optimizer;
    if (options.loss.klCoeff > 0 && !options.reference) throw new RangeError('loss.klCoeff > 0 needs a reference model');
    if (options.loss.valueCoeff > 0 && !options.model.config.valueHead) {
      throw new ConfigError('loss.valueCoeff > 0 needs a model with a value head: set model.valueHead to true (or valueCoeff to 0)');
    }
    this.adam = tf.train.adam(o.learningRate, o.beta1, o.beta2, o.epsilon);
  }

  /** Adam's state (step count, moments and its running powers of β₁ and β₂), for checkpoints. */
  async optimizerState(): Promise<{ name: string; values: Float32Array; shape: number[] }[]> {
    const internals = this.adam as unknown as AdamInternals;
    const weights = [...(await this.adam.getWeights()), ...ADAM_POWERS.map(([name, field]) => ({ name, tensor: internals[field] }))];
    return Promise.all(weights.map(async (w) => ({ name: w.name, shape: [...w.tensor.shape], values: (await w.tensor.data()) as Float32Array })));
  }

  async restoreOptimizerState(state: readonly { name: string; values: Float32Array; shape: readonly number[] }[]): Promise<void> {
    if (state.length === 0) return;
    const isPower = (name: string) => ADAM_POWERS.some(([power]) => power === name);
    const weights = state.filter((s) => !isPower(s.name));
    await this.adam.setWeights(weights.map((s) => ({ name: s.name, tensor: tf.tensor(s.values, [...s.shape], 'float32') })));
    // The saved powers, not tfjs's recomputed β^(t+1) (which differs in the last bits), so the next steps are an uninterrupted run's.
    const internals = this.adam as unknown as AdamInternals;
    for (const [name, field] of ADAM_POWERS) {
      const saved = state.find((s) => s.name === name);
      if (saved) tf.tidy(() => internals[field].assign(tf.scalar(saved.values[0]!, 'float32')));
    }
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

  /** Trains with `loss` from the next update on (a benchmark of the collapse detectors stages faults with it). */
  setLoss(loss: PolicyLossConfig): void {
    this.options = { ...this.options, loss };
  }

  /**
   * One update on `batch`. `recompute` forces the decoupled objective (replayed samples); `learningRateScale`
   * multiplies the scheduled rate of this update only (a staged learning-rate spike).
   */
  update(input: TrainingBatch, options: { recompute?: boolean; learningRateScale?: number } = {}): UpdateMetrics {
    const started = performance.now();
    const { optimizer: o, loss: lossConfig } = this.options;
    const batch = this.rowsOf(input);
    const learningRate = learningRateAt(o, this.updates) * (options.learningRateScale ?? 1);
    (this.adam as unknown as { learningRate: number }).learningRate = learningRate;
    const tally = new UpdateTally();
    const full = this.updateTensors(batch, options.recompute === true || o.proximal === 'recompute', tally);
    try {
      this.runEpochs(batch, full, tally);
    } finally {
      tf.dispose(tensorsOf(full));
    }
    this.updates++;
    const { klCoeff, entropyCoeff, entropyTarget } = lossConfig;
    const floor = entropyCoeff > 0 && entropyTarget !== null ? { entropyTarget } : {};
    return tally.metrics({
      learningRate,
      klCoeff,
      entropyCoeff,
      lossTokens: batch.lossTokens,
      tokens: input.tokens,
      samples: input.rows,
      durationMs: performance.now() - started,
      ...floor,
    });
  }

  /** The batch as the update trains it: one row per turn when turnRows. Its rows must fit the model's context. */
  private rowsOf(input: TrainingBatch): TrainingBatch {
    const { contextLength } = this.options.model.config;
    const batch = this.turnRows ? splitTurnRows(input, contextLength) : input;
    if (batch.time > contextLength) {
      throw new RangeError(
        `batch rows of ${batch.time} positions exceed the model's contextLength ${contextLength}: build the batch with buildBatch(…, { turnRows: trainer.turnRows })`,
      );
    }
    return batch;
  }

  /** The update's tensors, constants of the whole update (no gradient); the importance weights' statistics go to the tally. */
  private updateTensors(batch: TrainingBatch, recompute: boolean, tally: UpdateTally): UpdateTensors {
    const { model, reference, optimizer: o } = this.options;
    const shape: [number, number] = [batch.rows, batch.time];
    return tf.tidy(() => {
      const ids = tf.tensor2d(batch.ids, shape, 'int32');
      const targets = tf.tensor2d(batch.targets, shape, 'int32');
      const mask = tf.tensor2d(batch.mask, shape);
      const behaviour = tf.tensor2d(batch.behaviourLogProbs, shape);
      let oldLogp: tf.Tensor2D = behaviour;
      let isWeights: tf.Tensor2D | undefined;

      if (recompute) {
        // Decoupled objective: the ratio against the learner's own log-probs now, the behaviour policy as a truncated importance weight.
        oldLogp = tf.mul(this.tokenLogProbs(model, ids, targets).logp, mask) as tf.Tensor2D;
        const raw = tf.mul(tf.exp(tf.clipByValue(tf.sub(oldLogp, behaviour), -20, 20)), mask);
        isWeights = tf.minimum(raw, o.importanceCap) as tf.Tensor2D;
        const [sum, max, truncated] = [tf.sum(raw), tf.max(raw), tf.sum(tf.cast(tf.greater(raw, o.importanceCap), 'float32'))].map((t) => t.dataSync()[0]!) as [
          number,
          number,
          number,
        ];
        tally.importanceWeights(sum, max, truncated, batch.lossTokens);
      }
      const refLogp = reference ? (tf.mul(this.tokenLogProbs(reference, ids, targets).logp, mask) as tf.Tensor2D) : undefined;
      const { valueCoeff, valueDiscount } = this.options.loss;
      const valueTargets = valueCoeff > 0 ? tf.mul(tf.tensor2d(batch.episodeReward, shape), tf.pow(tf.scalar(valueDiscount), tf.tensor2d(batch.turnsLeft, shape))) : undefined;
      const processed = this.options.loss.centerByAction ? advantagesCentredByAction(batch) : batch.advantages;
      const { criticAdvantageCoeff, criticLambda } = this.options.loss;
      // The critic reads only the value head before the update: no log-probs or entropy are needed for it.
      const critic = criticAdvantageCoeff > 0 ? criticAdvantages(batch, model.logitsAndValues(ids, this.options.head).values.dataSync(), valueDiscount, criticLambda) : null;
      const advantages = critic ? processed.map((a, i) => a + criticAdvantageCoeff * critic[i]!) : processed;
      return { ids, targets, mask, advantages: tf.tensor2d(advantages, shape), oldLogp, isWeights, refLogp, valueTargets: valueTargets as tf.Tensor2D | undefined };
    });
  }

  /** The update's epochs, minibatch after minibatch (minibatch-plan.ts), until done or stopped early on the policy shift. */
  private runEpochs(batch: TrainingBatch, full: UpdateTensors, tally: UpdateTally): void {
    for (const epoch of minibatchPlan(batch.rows, this.options.optimizer, this.updates)) {
      // Shuffled: this epoch's tensors with their rows in the seeded order, cut into consecutive minibatches.
      const dealt = epoch.order ? shuffled(full, epoch.order) : full;
      try {
        for (const [from, to] of epoch.minibatches) {
          if (!this.minibatchStep(dealt, from, to, batch.time, tally)) return;
        }
      } finally {
        if (dealt !== full) tf.dispose(tensorsOf(dealt));
      }
    }
  }

  /** One optimizer step on rows [from, to) of `dealt`: gradient, then stop, skip or clip and apply. False: the update stops here. */
  private minibatchStep(dealt: UpdateTensors, from: number, to: number, time: number, tally: UpdateTally): boolean {
    const o = this.options.optimizer;
    const { values, grads } = this.minibatchGradient(dealt, from, to, time);
    if (tally.stopsEarly(values.ppoKl, o.targetKl)) {
      tf.dispose(Object.values(grads));
      return false;
    }
    if (this.options.observeGradients) this.options.observeGradients(parameterNorms(grads));
    const norm = gradientNorm(grads);
    if (!tally.step(norm)) {
      tf.dispose(Object.values(grads));
      return true;
    }
    this.applyClipped(grads, clipScale(norm, o.gradClip));
    tally.add(values);
    return true;
  }

  /** The PPO loss on rows [from, to) of `dealt`: its values read back as numbers, and its gradients (the caller frees them). */
  private minibatchGradient(dealt: UpdateTensors, from: number, to: number, time: number): { values: MinibatchValues; grads: tf.NamedTensorMap } {
    const { model, loss: lossConfig } = this.options;
    const rows = (t: tf.Tensor2D | undefined) => (t ? tf.slice(t, [from, 0], [to - from, time]) : undefined);
    const kept: tf.Scalar[] = [];
    const { value, grads } = tf.variableGrads(() => {
      const ids = rows(dealt.ids)!;
      const { logp, entropy, values, logits } = this.tokenLogProbs(model, ids, rows(dealt.targets)!, dealt.valueTargets !== undefined);
      const out = policyLoss(
        {
          logp,
          oldLogp: rows(dealt.oldLogp)!,
          advantages: rows(dealt.advantages)!,
          mask: rows(dealt.mask)!,
          isWeights: rows(dealt.isWeights),
          entropy,
          refLogp: rows(dealt.refLogp),
          ...(lossConfig.marginalEntropyCoeff > 0 ? { marginalEntropy: marginalEntropyFromLogits(logits, rows(dealt.mask)!) } : {}),
        },
        lossConfig,
      );
      kept.push(...[out.pgLoss, out.entropy, out.kl, out.metrics.ppoKl, out.metrics.clipFracHigh, out.metrics.clipFracLow, out.metrics.clipFracDual].map((t) => tf.keep(t)));
      if (!values) return out.loss;
      // The value loss: squared error on the scored positions, a masked mean like the policy loss's token-mean.
      const valueLoss = maskedMean(tf.square(tf.sub(values, rows(dealt.valueTargets)!)), rows(dealt.mask)!);
      return tf.add(out.loss, tf.mul(valueLoss, lossConfig.valueCoeff)) as tf.Scalar;
    }, model.variables());
    const values = [value, ...kept].map((t) => t.dataSync()[0]!);
    tf.dispose([value, ...kept]);
    const [loss, pgLoss, entropy, kl, ppoKl, clipFracHigh, clipFracLow, clipFracDual] = values as [number, number, number, number, number, number, number, number];
    return { values: { loss, pgLoss, entropy, kl, ppoKl, clipFracHigh, clipFracLow, clipFracDual }, grads };
  }

  /** One Adam step on the gradients scaled by `scale` (copied as they are at 1); frees the gradients. */
  private applyClipped(grads: tf.NamedTensorMap, scale: number): void {
    const clipped: tf.NamedTensorMap = tf.tidy(() => Object.fromEntries(Object.entries(grads).map(([name, g]) => [name, scale < 1 ? tf.mul(g, scale) : tf.clone(g)])));
    tf.dispose(Object.values(grads));
    this.adam.applyGradients(clipped as Parameters<tf.AdamOptimizer['applyGradients']>[0]);
    tf.dispose(Object.values(clipped));
  }

  /** log π(target) and the entropy at every position, over the reply vocabulary, at the sampling temperature. */
  private tokenLogProbs(
    model: TransformerModel,
    ids: tf.Tensor2D,
    targets: tf.Tensor2D,
    withValues = false,
  ): { logp: tf.Tensor2D; entropy: tf.Tensor2D; logits: tf.Tensor3D; values?: tf.Tensor2D } {
    const forward = withValues ? model.logitsAndValues(ids, this.options.head) : { logits: model.logits(ids, this.options.head), values: undefined };
    const logits = tf.div(forward.logits, this.options.optimizer.temperature) as tf.Tensor3D;
    const logp = targetLogProbs(logits, targets, this.options.head.size);
    return { logp, entropy: entropyFromLogits(logits) as tf.Tensor2D, logits, ...(forward.values ? { values: forward.values } : {}) };
  }

  dispose(): void {
    this.adam.dispose();
  }
}

/** The fields of tfjs's AdamOptimizer that hold its running powers of β₁ and β₂ (private there; getWeights leaves them out). */
interface AdamInternals {
  readonly accBeta1: tf.Variable;
  readonly accBeta2: tf.Variable;
}

/** Their names in a checkpoint's optimizer state, beside tfjs's `iter` and `<variable>/m`, `<variable>/v`. */
const ADAM_POWERS = [
  ['adam/accBeta1', 'accBeta1'],
  ['adam/accBeta2', 'accBeta2'],
] as const;

/** The total norm of a step's gradients (before clipping). */
function gradientNorm(grads: tf.NamedTensorMap): number {
  return tf.tidy(() => Math.sqrt(tf.addN(Object.values(grads).map((g) => tf.sum(tf.square(g)))).dataSync()[0]!));
}

/** Each gradient's norm by parameter name (the variable's name without tfjs's numeric suffix). */
function parameterNorms(grads: tf.NamedTensorMap): Map<string, number> {
  return new Map(Object.entries(grads).map(([name, g]) => [name.replace(/_\d+$/, ''), tf.tidy(() => Math.sqrt(tf.sum(tf.square(g)).dataSync()[0]!))]));
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

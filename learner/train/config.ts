// The optimisation settings of one learner, checked when built. Every field has a documented default;
// the learner logs the whole object at start. Loss settings (clip ratios, aggregation, entropy, KL)
// live in the loss module's own config (learner/loss/policy-loss.ts) and are nested here.
import { ConfigError } from '../../core/errors.js';

export const LR_SCHEDULES = ['constant', 'cosine', 'linear'] as const;
export type LrSchedule = (typeof LR_SCHEDULES)[number];
export const PROXIMAL_MODES = ['behaviour', 'recompute'] as const;
export type ProximalMode = (typeof PROXIMAL_MODES)[number];

export interface OptimizerConfig {
  /** Adam's peak learning rate. Default 3e-4 (a from-scratch small transformer; verl's 1e-6 is for pretrained LLMs). */
  readonly learningRate: number;
  /** Linear warm-up over this many updates. Default 0. */
  readonly warmupUpdates: number;
  /** After warm-up: constant, cosine or linear decay to minLearningRateRatio·lr at totalUpdates. Default constant. */
  readonly schedule: LrSchedule;
  /** Updates the decay spans (cosine/linear). Default 1000. */
  readonly totalUpdates: number;
  /** Floor of the decayed rate, as a fraction of learningRate. Default 0.1. */
  readonly minLearningRateRatio: number;
  /** Adam β1, β2, ε. Defaults 0.9, 0.999, 1e-8. */
  readonly beta1: number;
  readonly beta2: number;
  readonly epsilon: number;
  /** Total-norm gradient clip (verl grad_clip). Default 1.0. A non-finite norm skips the update. */
  readonly gradClip: number;
  /** Passes over each batch (verl ppo_epochs). Default 1. */
  readonly epochs: number;
  /** Optimizer steps per epoch: the batch is split into this many minibatches. Default 1. */
  readonly minibatches: number;
  /**
   * Deal the batch's rows into the minibatches in a fresh seeded order every epoch (verl's shuffle) instead
   * of consecutive rows. Consecutive rows of a batch come from the same groups, so without it a minibatch
   * is a few groups (often one task); shuffled, every step sees most of them. The order depends only on
   * the update number and the epoch, so a run repeats itself and resumes alike. Default false (the
   * published learning curves were measured without it).
   */
  readonly shuffleMinibatches: boolean;
  /** Temperature the actors sample with; logits are divided by it before log-probs and entropy. Default 1. */
  readonly temperature: number;
  /**
   * What the PPO ratio is taken against. 'behaviour' (verl): exp(logp − behaviour log-prob), so clipping
   * also bounds the correction for stale samples. 'recompute' (decoupled PPO, Hilton et al. 2021): the
   * ratio is against the learner's own log-probs at the start of the update, and the behaviour policy
   * enters as a truncated importance weight min(exp(proximal − behaviour), importanceCap). Default 'behaviour';
   * replayed samples always use 'recompute'.
   */
  readonly proximal: ProximalMode;
  /** Truncation of importance weights (recompute mode and replay). Default 2. */
  readonly importanceCap: number;
  /**
   * Early stop of an update on its policy shift (Stable-Baselines3's target_kl): when a minibatch's PPO-KL
   * (mean log π_old − log π_θ on its loss tokens, measured before its step) exceeds 1.5 × targetKl, that
   * step is not taken and the update's remaining epochs and minibatches are dropped. Bounds what one update
   * can do to the policy (the `policy_shift_spike` alert watches the same quantity). Typical 0.01–0.05.
   * Default null (off: every epoch and minibatch runs).
   */
  readonly targetKl: number | null;
}

export const OPTIMIZER_DEFAULTS: OptimizerConfig = Object.freeze({
  learningRate: 3e-4,
  warmupUpdates: 0,
  schedule: 'constant',
  totalUpdates: 1000,
  minLearningRateRatio: 0.1,
  beta1: 0.9,
  beta2: 0.999,
  epsilon: 1e-8,
  gradClip: 1,
  epochs: 1,
  minibatches: 1,
  shuffleMinibatches: false,
  temperature: 1,
  proximal: 'behaviour',
  importanceCap: 2,
  targetKl: null,
});

export function buildOptimizerConfig(input: Partial<OptimizerConfig> = {}): OptimizerConfig {
  const c = { ...OPTIMIZER_DEFAULTS, ...input };
  const check = (ok: boolean, field: keyof OptimizerConfig, rule: string) => {
    if (!ok) throw new ConfigError(`learner.${field} ${rule}, got ${String(c[field])}; the default is ${String(OPTIMIZER_DEFAULTS[field])}`);
  };
  const positive = (field: keyof OptimizerConfig) => check(Number.isFinite(c[field]) && (c[field] as number) > 0, field, 'must be a positive number');
  const count = (field: keyof OptimizerConfig, min: number) => check(Number.isInteger(c[field]) && (c[field] as number) >= min, field, `must be an integer >= ${min}`);
  positive('learningRate');
  count('warmupUpdates', 0);
  check(LR_SCHEDULES.includes(c.schedule), 'schedule', `must be one of ${LR_SCHEDULES.join(', ')}`);
  count('totalUpdates', 1);
  check(c.minLearningRateRatio >= 0 && c.minLearningRateRatio <= 1, 'minLearningRateRatio', 'must be in [0, 1]');
  check(c.beta1 >= 0 && c.beta1 < 1, 'beta1', 'must be in [0, 1)');
  check(c.beta2 >= 0 && c.beta2 < 1, 'beta2', 'must be in [0, 1)');
  positive('epsilon');
  positive('gradClip');
  count('epochs', 1);
  count('minibatches', 1);
  check(typeof c.shuffleMinibatches === 'boolean', 'shuffleMinibatches', 'must be true or false');
  positive('temperature');
  check(PROXIMAL_MODES.includes(c.proximal), 'proximal', `must be one of ${PROXIMAL_MODES.join(', ')}`);
  check(c.importanceCap >= 1, 'importanceCap', 'must be >= 1');
  check(c.targetKl === null || (Number.isFinite(c.targetKl) && c.targetKl > 0), 'targetKl', 'must be a positive number (nats) or null for no early stop');
  return Object.freeze(c);
}

/** The learning rate of update number `update` (0-based). */
export function learningRateAt(c: OptimizerConfig, update: number): number {
  if (update < c.warmupUpdates) return (c.learningRate * (update + 1)) / (c.warmupUpdates + 1);
  if (c.schedule === 'constant') return c.learningRate;
  const progress = Math.min(1, (update - c.warmupUpdates) / Math.max(1, c.totalUpdates - c.warmupUpdates));
  const floor = c.learningRate * c.minLearningRateRatio;
  const shape = c.schedule === 'cosine' ? 0.5 * (1 + Math.cos(Math.PI * progress)) : 1 - progress;
  return floor + (c.learningRate - floor) * shape;
}

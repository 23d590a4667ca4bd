// The actor's PPO loss (docs/algorithms.md §2.1–2.4, §8): clipped surrogate with DAPO's Clip-Higher and dual
// clip, optional per-token importance weights, entropy bonus and KL-to-reference loss, plus the clip
// metrics the dashboards plot. One typed config, checked once by buildPolicyLossConfig (every message says
// what to set), then policyLoss is a pure tensor function called inside the learner's gradient closure.
//
// Per token (A = advantage):
//   log_ratio = clamp(logp − oldLogp, −20, 20), ratio = exp(log_ratio)
//   L1 = −A·ratio, L2 = −A·clamp(ratio, 1 − clipRatioLow, 1 + clipRatioHigh), Lclip = max(L1, L2)
//   pg = A < 0 ? min(Lclip, −A·clipRatioC) : Lclip        (dual clip; off when clipRatioC is null)
//   pg ·= isWeights                                         (verl multiplies rollout IS weights the same way)
//   loss = agg(pg) − entropyCoeff·min(agg(entropy), entropyTarget) + klCoeff·agg(kl(logp, refLogp))
//
// Choices beyond §2:
// - oldLogp, advantages and isWeights go through stopGradient, so passing oldLogp = logp (on-policy, one
//   forward pass) gives ratio 1 with the policy gradient −A, as verl's `log_prob.detach()` does.
// - Metrics differ slightly from verl's names (brief's split): clipFracHigh/clipFracLow count tokens where
//   the upper/lower clip is active for the sign of A (together they equal verl's pg_clipfrac = mean(L2 > L1)
//   up to ties), clipFracDual is verl's pg_clipfrac_lower.
// - The returned `entropy` and `kl` are plain masked token means (for logging, whatever lossAggMode is);
//   the loss itself uses agg() with the configured mode, as verl does.
import * as tf from '@tensorflow/tfjs-core';
import { ConfigError } from '../../core/errors.js';
import { aggLoss, type AggLossOptions, assertSameShape2d, floatMask, isLossAggMode, LOSS_AGG_MODES, maskedMean, type LossAggMode } from './aggregate.js';
import { isKlEstimator, KL_ESTIMATORS, klPenalty, type KlEstimator } from './kl.js';
import { stopGradient } from './stop-gradient.js';

export interface PolicyLossConfig {
  /** ε_low: the ratio is clipped below at 1 − ε_low where A < 0. Default 0.2 (verl, DAPO). 0 ≤ ε_low < 1. */
  readonly clipRatioLow: number;
  /** ε_high: the ratio is clipped above at 1 + ε_high where A > 0. Default 0.28 (DAPO's Clip-Higher; verl's own default is 0.2). ≥ 0. */
  readonly clipRatioHigh: number;
  /** Dual-clip constant c: where A < 0 the loss is at most −A·c. Default 3 (verl). Must be > 1; null turns dual clip off. */
  readonly clipRatioC: number | null;
  /** How per-token losses become a scalar (docs/algorithms.md §1.1). Default 'token-mean' (verl, DAPO). */
  readonly lossAggMode: LossAggMode;
  /** seq-mean-token-sum-norm's divisor (Dr. GRPO; e.g. the max response length). Default unset: T of the batch. > 0. */
  readonly lossScaleFactor?: number;
  /** Weight of the entropy bonus (loss −= entropyCoeff·agg(entropy)). Default 0 (verl). ≥ 0. */
  readonly entropyCoeff: number;
  /**
   * A floor for the entropy bonus, in nats: the bonus is entropyCoeff·min(agg(entropy), entropyTarget), so it
   * pushes only while the policy's entropy is below the target and is silent above it. Keeps the rollouts of a
   * group different from each other (a group whose rollouts all agree teaches nothing) without holding a
   * policy that is still learning near uniform. Default null (an uncapped bonus). > 0.
   */
  readonly entropyTarget: number | null;
  /** Weight of the KL-to-reference loss. Default 0: no reference policy needed (DAPO). ≥ 0; verl's use_kl_loss runs use 0.001. */
  readonly klCoeff: number;
  /** KL estimator for the KL loss and the logged kl. Default 'k3' (verl's low_var_kl). */
  readonly klEstimator: KlEstimator;
  /**
   * Weight of the value head's squared error against each turn's discounted return (an actor-critic's value
   * loss, here an auxiliary task of the shared body). Default 0 (off); > 0 needs a model with valueHead.
   */
  readonly valueCoeff: number;
  /** γ of the value target reward·γ^(turns left). Default 1 (the episode's outcome). In [0, 1]. */
  readonly valueDiscount: number;
  /**
   * Weight of the critic's advantage added to the processors' one: GAE over each episode's turns with the value
   * head (before the update) as the critic and γ = valueDiscount, whitened over the batch's scored positions
   * (critic-advantage.ts: a per-state baseline, where group-relative estimators need several rollouts of one
   * task). Default 0 (off); > 0 needs valueCoeff > 0.
   */
  readonly criticAdvantageCoeff: number;
  /** GAE's λ for the critic's advantage: 1 (default) = the return against the baseline; lower trusts the critic's next-state value more. In [0, 1]. */
  readonly criticLambda: number;
  /**
   * Subtract from each token's advantage the batch's mean advantage of the same reply token, so an update
   * cannot shift the policy's state-independent preference between actions (the part of the batch's signal
   * no state explains). Default false.
   */
  readonly centerByAction: boolean;
  /**
   * Weight of a bonus on the entropy of the minibatch's average reply-token distribution over its scored positions
   * (loss −= marginalEntropyCoeff·H(Ā)): keeps the policy using every token across states while each state's own
   * choice sharpens, against a drift of the state-independent preference (a template collapse) that centring does
   * not stop once Adam rescales the update per parameter. H(Ā) comes from the logits (marginalEntropyFromLogits). Default 0.
   */
  readonly marginalEntropyCoeff: number;
}

export const DEFAULT_POLICY_LOSS_CONFIG: PolicyLossConfig = Object.freeze({
  clipRatioLow: 0.2,
  clipRatioHigh: 0.28,
  clipRatioC: 3,
  lossAggMode: 'token-mean',
  entropyCoeff: 0,
  entropyTarget: null,
  klCoeff: 0,
  klEstimator: 'k3',
  valueCoeff: 0,
  valueDiscount: 1,
  criticAdvantageCoeff: 0,
  criticLambda: 1,
  centerByAction: false,
  marginalEntropyCoeff: 0,
});

const KNOWN_KEYS = [
  'clipRatioLow',
  'clipRatioHigh',
  'clipRatioC',
  'lossAggMode',
  'lossScaleFactor',
  'entropyCoeff',
  'entropyTarget',
  'klCoeff',
  'klEstimator',
  'valueCoeff',
  'valueDiscount',
  'criticAdvantageCoeff',
  'criticLambda',
  'centerByAction',
  'marginalEntropyCoeff',
] as const;

// verl's long names, so the message can say which short name to use.
const VERL_KL_NAMES: Record<string, KlEstimator> = { kl: 'k1', mse: 'k2', low_var_kl: 'k3' };

const show = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : String(value));

function checkFinite(key: string, value: unknown, rule: string, ok: (v: number) => boolean, fallback: number | string): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || !ok(value)) {
    throw new ConfigError(`policy loss ${key} must be ${rule}; got ${show(value)}. Set it to such a number or leave it unset (default ${fallback}).`);
  }
}

/** Checks a complete config; returns it unchanged. Throws ConfigError naming the field and the fix. */
export function validatePolicyLossConfig(config: PolicyLossConfig): PolicyLossConfig {
  for (const key of Object.keys(config)) {
    if (!(KNOWN_KEYS as readonly string[]).includes(key)) {
      throw new ConfigError(`unknown policy loss option '${key}': the options are ${KNOWN_KEYS.join(', ')}.`);
    }
  }
  const d = DEFAULT_POLICY_LOSS_CONFIG;
  checkFinite('clipRatioLow', config.clipRatioLow, 'a number in [0, 1) (the lower clip bound 1 − clipRatioLow must stay > 0)', (v) => v >= 0 && v < 1, d.clipRatioLow);
  checkFinite('clipRatioHigh', config.clipRatioHigh, 'a number ≥ 0', (v) => v >= 0, d.clipRatioHigh);
  if (config.clipRatioC !== null) {
    if (typeof config.clipRatioC !== 'number' || !Number.isFinite(config.clipRatioC) || !(config.clipRatioC > 1)) {
      throw new ConfigError(
        `policy loss clipRatioC must be a number > 1 (dual clip bounds the loss of A < 0 tokens at −A·c); got ${show(config.clipRatioC)}. ` +
          `Use e.g. 3 (the default), or null to turn dual clip off.`,
      );
    }
  }
  if (!isLossAggMode(config.lossAggMode)) {
    throw new ConfigError(`policy loss lossAggMode must be one of ${LOSS_AGG_MODES.map(show).join(', ')}; got ${show(config.lossAggMode)}.`);
  }
  if (config.lossScaleFactor !== undefined) {
    checkFinite('lossScaleFactor', config.lossScaleFactor, 'a number > 0 (e.g. the max response length)', (v) => v > 0, 'T of the batch');
  }
  checkFinite('entropyCoeff', config.entropyCoeff, 'a number ≥ 0', (v) => v >= 0, d.entropyCoeff);
  if (config.entropyTarget !== null) checkFinite('entropyTarget', config.entropyTarget, 'a number of nats > 0, or null for an uncapped bonus', (v) => v > 0, 'null');
  checkFinite('klCoeff', config.klCoeff, 'a number ≥ 0 (0 = no KL loss)', (v) => v >= 0, d.klCoeff);
  checkFinite('valueCoeff', config.valueCoeff, 'a number ≥ 0 (0 = no value loss; > 0 needs model.valueHead)', (v) => v >= 0, d.valueCoeff);
  checkFinite('valueDiscount', config.valueDiscount, 'a number in [0, 1]', (v) => v >= 0 && v <= 1, d.valueDiscount);
  checkFinite('criticAdvantageCoeff', config.criticAdvantageCoeff, "a number ≥ 0 (0 = the processors' advantages alone)", (v) => v >= 0, d.criticAdvantageCoeff);
  checkFinite('criticLambda', config.criticLambda, "a number in [0, 1] (GAE's λ)", (v) => v >= 0 && v <= 1, d.criticLambda);
  if (config.criticAdvantageCoeff > 0 && config.valueCoeff === 0) {
    throw new ConfigError('policy loss criticAdvantageCoeff > 0 needs a trained critic: set valueCoeff > 0 (and model.valueHead true), or criticAdvantageCoeff to 0.');
  }
  checkFinite('marginalEntropyCoeff', config.marginalEntropyCoeff, 'a number ≥ 0 (0 = no bonus on the average distribution)', (v) => v >= 0, d.marginalEntropyCoeff);
  if (typeof config.centerByAction !== 'boolean') throw new ConfigError(`policy loss centerByAction must be true or false; got ${show(config.centerByAction)}.`);
  if (!isKlEstimator(config.klEstimator)) {
    const verl = typeof config.klEstimator === 'string' ? VERL_KL_NAMES[config.klEstimator] : undefined;
    const hint = verl === undefined ? '' : ` (${show(config.klEstimator)} is verl's name for ${show(verl)}: use ${show(verl)})`;
    throw new ConfigError(`policy loss klEstimator must be one of ${KL_ESTIMATORS.map(show).join(', ')}; got ${show(config.klEstimator)}${hint}.`);
  }
  return config;
}

/** Defaults overlaid with `overrides`, checked and frozen. Throws ConfigError with the fix on a bad value. */
export function buildPolicyLossConfig(overrides: Partial<PolicyLossConfig> = {}): PolicyLossConfig {
  const merged: Record<string, unknown> = { ...DEFAULT_POLICY_LOSS_CONFIG };
  for (const [key, value] of Object.entries(overrides)) if (value !== undefined) merged[key] = value;
  return Object.freeze(validatePolicyLossConfig(merged as unknown as PolicyLossConfig));
}

export interface PolicyLossInputs {
  /** log π_θ of the taken tokens, [B, T]: the tensor the gradient flows through. */
  logp: tf.Tensor;
  /** log-probs of the policy that the ratio is taken against (rollout or proximal policy), [B, T]. Constant. */
  oldLogp: tf.Tensor;
  /** Per-token advantages, [B, T]. Constant. */
  advantages: tf.Tensor;
  /** 1 on tokens the policy generated (in the loss), 0 elsewhere, [B, T]. */
  mask: tf.Tensor;
  /** Per-token importance weights multiplying the PPO loss (e.g. min(exp(proximal − behaviour), cap)), [B, T]. Constant. */
  isWeights?: tf.Tensor;
  /** Per-token entropy (entropyFromLogits), [B, T]; needed for the bonus, logged when given. */
  entropy?: tf.Tensor;
  /** Reference policy's log-probs, [B, T]; required when klCoeff > 0, logged when given. */
  refLogp?: tf.Tensor;
  /** H(Ā) of these rows (marginalEntropyFromLogits), the tensor the gradient flows through; required when marginalEntropyCoeff > 0. */
  marginalEntropy?: tf.Scalar;
}

export interface PolicyLossOptions {
  /** The whole batch's number of valid tokens, for token-mean over minibatches (see aggLoss). */
  tokenCount?: number;
}

export type PolicyLossMetrics = {
  /** Masked mean of (A > 0 and ratio > 1 + clipRatioHigh). */
  clipFracHigh: tf.Scalar;
  /** Masked mean of (A < 0 and ratio < 1 − clipRatioLow). */
  clipFracLow: tf.Scalar;
  /** Masked mean of (A < 0 and Lclip > −A·clipRatioC); 0 when dual clip is off. */
  clipFracDual: tf.Scalar;
  /** Masked mean of −log_ratio (verl's ppo_kl). */
  ppoKl: tf.Scalar;
};

export type PolicyLossOutput = {
  /** What to minimise: agg(pg) − entropyCoeff·agg(entropy) + klCoeff·agg(kl) − marginalEntropyCoeff·H(Ā). */
  loss: tf.Scalar;
  /** agg(pg) alone. */
  pgLoss: tf.Scalar;
  /** Masked token mean of the given entropy (0 if not given), for logging. */
  entropy: tf.Scalar;
  /** Masked token mean of the KL estimate (0 if refLogp not given), for logging. */
  kl: tf.Scalar;
  metrics: PolicyLossMetrics;
};

/** The PPO actor loss and its metrics. Pure: disposes none of its inputs, no dataSync; intermediates are freed. */
export function policyLoss(inputs: PolicyLossInputs, config: PolicyLossConfig, options: PolicyLossOptions = {}): PolicyLossOutput {
  validatePolicyLossConfig(config);
  checkPolicyLossInputs(inputs, config);
  const { logp, entropy, refLogp, marginalEntropy } = inputs;
  const agg: AggLossOptions = { lossScaleFactor: config.lossScaleFactor, tokenCount: options.tokenCount };

  return tf.tidy((): PolicyLossOutput => {
    const m = floatMask(inputs.mask);
    const s = clippedSurrogate(inputs, config, m);

    const pgLoss = aggLoss(s.pg, m, config.lossAggMode, agg);
    let loss: tf.Scalar = pgLoss;

    let entropyMean: tf.Scalar = tf.scalar(0);
    if (entropy !== undefined) ({ loss, entropyMean } = withEntropyBonus(loss, entropy, m, config, agg));
    let klMean: tf.Scalar = tf.scalar(0);
    if (refLogp !== undefined) ({ loss, klMean } = withKlLoss(loss, logp, refLogp, m, config, agg));
    if (marginalEntropy !== undefined && config.marginalEntropyCoeff !== 0) loss = tf.sub(loss, tf.mul(marginalEntropy, config.marginalEntropyCoeff));

    const clipFracHigh = maskedMean(tf.cast(tf.logicalAnd(tf.greater(s.adv, 0), tf.greater(s.ratio, s.upper)), 'float32'), m);
    const clipFracLow = maskedMean(tf.cast(tf.logicalAnd(s.advNegative, tf.less(s.ratio, s.lower)), 'float32'), m);
    const ppoKl = maskedMean(tf.neg(s.logRatio), m);

    // A distinct tensor even when there is no extra term, so the caller can dispose loss and pgLoss
    // separately. Not tf.clone: tfjs-core 4.22 has no gradient registered for Identity.
    if (loss === pgLoss) loss = tf.add(pgLoss, 0);
    return { loss, pgLoss, entropy: entropyMean, kl: klMean, metrics: { clipFracHigh, clipFracLow, clipFracDual: s.clipFracDual, ppoKl } };
  });
}

/** Every input of the mask's [B, T] shape, and the inputs the config's terms need present; throws otherwise. */
function checkPolicyLossInputs(inputs: PolicyLossInputs, config: PolicyLossConfig): void {
  const { logp, oldLogp, advantages, mask, isWeights, entropy, refLogp, marginalEntropy } = inputs;
  assertSameShape2d('logp', logp, mask);
  assertSameShape2d('oldLogp', oldLogp, mask);
  assertSameShape2d('advantages', advantages, mask);
  if (isWeights !== undefined) assertSameShape2d('isWeights', isWeights, mask);
  if (entropy !== undefined) assertSameShape2d('entropy', entropy, mask);
  if (refLogp !== undefined) assertSameShape2d('refLogp', refLogp, mask);
  if (config.klCoeff > 0 && refLogp === undefined) {
    throw new ConfigError(
      `policy loss klCoeff is ${config.klCoeff} but no refLogp was given: pass the reference policy's log-probs, or set klCoeff to 0 to train without a KL loss.`,
    );
  }
  if (config.marginalEntropyCoeff > 0 && marginalEntropy === undefined) {
    throw new ConfigError(
      `policy loss marginalEntropyCoeff is ${config.marginalEntropyCoeff} but no marginalEntropy was given: pass marginalEntropyFromLogits of the rows, or set marginalEntropyCoeff to 0.`,
    );
  }
}

/** The per-token policy-gradient loss (clipped, dual-clipped, importance-weighted) and what the clip metrics read. */
interface Surrogate {
  readonly adv: tf.Tensor;
  readonly advNegative: tf.Tensor;
  readonly logRatio: tf.Tensor;
  readonly ratio: tf.Tensor;
  readonly lower: number;
  readonly upper: number;
  readonly pg: tf.Tensor;
  readonly clipFracDual: tf.Scalar;
}

/** Lclip = max(−A·ratio, −A·clip(ratio)), dual clip where A < 0, times the IS weights. Inside the caller's tidy. */
function clippedSurrogate(inputs: PolicyLossInputs, config: PolicyLossConfig, m: tf.Tensor): Surrogate {
  const { logp, oldLogp, advantages, isWeights } = inputs;
  // Constants are zeroed where the mask is 0 before they meet logp: a NaN there would otherwise reach
  // the gradient (0·NaN) even though the loss value masks it out.
  const valid = tf.greater(m, 0);
  const zeros = tf.zerosLike(m);
  const adv = stopGradient(tf.where(valid, advantages, zeros));
  const negAdv = tf.neg(adv);
  const logRatio = tf.clipByValue(tf.sub(logp, stopGradient(tf.where(valid, oldLogp, zeros))), -20, 20);
  const ratio = tf.exp(logRatio);
  const lower = 1 - config.clipRatioLow;
  const upper = 1 + config.clipRatioHigh;
  const l1 = tf.mul(negAdv, ratio);
  const l2 = tf.mul(negAdv, tf.clipByValue(ratio, lower, upper));
  const lClip = tf.maximum(l1, l2);
  const advNegative = tf.less(adv, 0);

  let pg = lClip;
  let clipFracDual: tf.Scalar;
  if (config.clipRatioC !== null) {
    const l3 = tf.mul(negAdv, config.clipRatioC);
    pg = tf.where(advNegative, tf.minimum(lClip, l3), lClip);
    clipFracDual = maskedMean(tf.cast(tf.logicalAnd(advNegative, tf.greater(lClip, l3)), 'float32'), m);
  } else {
    clipFracDual = tf.scalar(0);
  }
  if (isWeights !== undefined) pg = tf.mul(pg, stopGradient(tf.where(valid, isWeights, zeros)));
  return { adv, advNegative, logRatio, ratio, lower, upper, pg, clipFracDual };
}

/** loss − entropyCoeff·min(agg(entropy), entropyTarget), and the entropy's masked mean for logging. */
function withEntropyBonus(loss: tf.Scalar, entropy: tf.Tensor, m: tf.Tensor, config: PolicyLossConfig, agg: AggLossOptions): { loss: tf.Scalar; entropyMean: tf.Scalar } {
  const entropyMean = maskedMean(entropy, m);
  if (config.entropyCoeff !== 0) {
    const bonus = aggLoss(entropy, m, config.lossAggMode, agg);
    const capped = config.entropyTarget === null ? bonus : tf.minimum(bonus, config.entropyTarget);
    loss = tf.sub(loss, tf.mul(capped, config.entropyCoeff));
  }
  return { loss, entropyMean };
}

/** loss + klCoeff·agg(kl(logp, refLogp)), and the KL's masked mean for logging. */
function withKlLoss(loss: tf.Scalar, logp: tf.Tensor, refLogp: tf.Tensor, m: tf.Tensor, config: PolicyLossConfig, agg: AggLossOptions): { loss: tf.Scalar; klMean: tf.Scalar } {
  const kl = klPenalty(logp, refLogp, config.klEstimator);
  const klMean = maskedMean(kl, m);
  if (config.klCoeff !== 0) loss = tf.add(loss, tf.mul(aggLoss(kl, m, config.lossAggMode, agg), config.klCoeff));
  return { loss, klMean };
}

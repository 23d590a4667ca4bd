// What one learner update reports, and the decisions its optimizer steps take on numbers alone (pure, no
// tensors): stop early on the policy shift (optimizer.targetKl), skip a step whose gradient norm is not finite,
// scale the gradient down to gradClip. The tally sums the minibatches' losses in the order they were taken, and
// averages them over the steps applied.

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
  /** The entropy floor the loss held the policy at (loss.entropyTarget with an entropy bonus), when it had one. */
  readonly entropyTarget?: number;
}

/** One minibatch's loss and statistics, read back from its tensors. */
export interface MinibatchValues {
  readonly loss: number;
  readonly pgLoss: number;
  readonly entropy: number;
  readonly kl: number;
  readonly ppoKl: number;
  readonly clipFracHigh: number;
  readonly clipFracLow: number;
  readonly clipFracDual: number;
}

/** What the metrics need besides the tally. */
export interface UpdateContext {
  readonly learningRate: number;
  readonly klCoeff: number;
  readonly entropyCoeff: number;
  readonly lossTokens: number;
  readonly tokens: number;
  readonly samples: number;
  readonly durationMs: number;
  readonly entropyTarget?: number;
}

/** The factor a gradient of total norm `norm` is multiplied by so that its norm is at most gradClip (1: untouched). */
export function clipScale(norm: number, gradClip: number): number {
  return Math.min(1, gradClip / (norm + 1e-6));
}

export class UpdateTally {
  private readonly sums = { loss: 0, pgLoss: 0, entropy: 0, kl: 0, ppoKl: 0, clipFracHigh: 0, clipFracLow: 0, clipFracDual: 0 };
  private gradNorm = 0;
  private steps = 0;
  private skipped = 0;
  private klAtStop = 0;
  private weights = { mean: 1, max: 1, truncated: 0 };

  /** The importance weights of the update (recompute mode): their sum over the loss tokens, max and truncated count. */
  importanceWeights(sum: number, max: number, truncated: number, lossTokens: number): void {
    this.weights = { mean: lossTokens > 0 ? sum / lossTokens : 1, max, truncated };
  }

  /**
   * Stable-Baselines3's rule: a minibatch whose PPO-KL, measured before its step, passes 1.5 × targetKl already sees
   * the policy too far from the behaviour one — no step, and no more minibatches or epochs in this update.
   */
  stopsEarly(ppoKl: number, targetKl: number | null): boolean {
    if (targetKl !== null && ppoKl > 1.5 * targetKl) {
      this.klAtStop = ppoKl;
      return true;
    }
    return false;
  }

  /** A step's gradient norm before clipping, counted; false when it is not finite: the step is skipped. */
  step(norm: number): boolean {
    this.steps++;
    this.gradNorm = Math.max(this.gradNorm, norm);
    if (Number.isFinite(norm)) return true;
    this.skipped++;
    return false;
  }

  /** An applied step's losses. */
  add(v: MinibatchValues): void {
    const s = this.sums;
    s.loss += v.loss;
    s.pgLoss += v.pgLoss;
    s.entropy += v.entropy;
    s.kl += v.kl;
    s.ppoKl += v.ppoKl;
    s.clipFracHigh += v.clipFracHigh;
    s.clipFracLow += v.clipFracLow;
    s.clipFracDual += v.clipFracDual;
  }

  /** The update's metrics: losses averaged over the steps applied (at least one, so an update of none reports zeros). */
  metrics(c: UpdateContext): UpdateMetrics {
    const { sums } = this;
    const done = Math.max(1, this.steps - this.skipped);
    return {
      loss: sums.loss / done,
      pgLoss: sums.pgLoss / done,
      entropy: sums.entropy / done,
      kl: sums.kl / done,
      klLoss: (c.klCoeff * sums.kl) / done,
      entropyLoss: (-c.entropyCoeff * sums.entropy) / done,
      ppoKl: sums.ppoKl / done,
      clipFracHigh: sums.clipFracHigh / done,
      clipFracLow: sums.clipFracLow / done,
      clipFracDual: sums.clipFracDual / done,
      gradNorm: this.gradNorm,
      learningRate: c.learningRate,
      optimizerSteps: this.steps,
      skippedSteps: this.skipped,
      klEarlyStop: this.klAtStop > 0 ? 1 : 0,
      klAtStop: this.klAtStop,
      lossTokens: c.lossTokens,
      tokens: c.tokens,
      samples: c.samples,
      importanceWeightMean: this.weights.mean,
      importanceWeightMax: this.weights.max,
      truncatedWeights: this.weights.truncated,
      durationMs: c.durationMs,
      ...(c.entropyTarget === undefined ? {} : { entropyTarget: c.entropyTarget }),
    };
  }
}

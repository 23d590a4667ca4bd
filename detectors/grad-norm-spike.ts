// Gradient-norm spike: the Echo Trap's third symptom, spikes that mark collapse that cannot be reversed
// (docs/algorithms.md §4.3). No reference code has a spike rule (§8): this robust outlier test is our design.
//
// Input: one point per learner update, LearnerStepEvent.gradNormPreClip (global L2 norm before clipping).
// Rule: with y = ln(norm) (logScale, the default) or y = norm, against the previous (up to) `window` values,
//   scale = max(1.4826 · MAD(y), floor)     MAD-based σ; floor = minRelativeScale in log space, or
//                                           minRelativeScale · median in linear space, so near-constant
//                                           norms do not make every wobble an outlier
//   z     = (y − median(y)) / scale
//   breach when z > k, or the norm is above maxRatio × the median of the window (a real run's norms spread so
//   widely — a log-MAD near 0.6 on FrozenLake — that a 100× jump can stay below k), and in both cases the norm
//   is at least minEarlyRatio × the median of the run's first `warmup` norms
//   (the loss scale the run started with: a converged policy's near-zero gradients make any small one an
//   outlier), clear when z ≤ clearZ; none before `warmup` previous norms exist.
// A jump in the rewards' scale is not an instability: when the update's reward scale (the root mean square of the
// rewards it trained on, `batch.rewardScale`) is above the median of those of the previous updates, ln of that ratio
// is taken off y before scoring (never added: a smaller reward scale does not hide a spike), so a reward-scale change
// (rewards × 100, a new reward term) that lifts the loss and its gradient by the same factor does not fire, while a
// spike at an unchanged reward scale does. Read from the learner step itself, so the topics' interleaving cannot
// change it.
// Severity: critical when the same update also moved the policy by more than criticalPpoKl nats (the spike
// was applied, act now), warning otherwise.
// Why the log by default: gradient-norm noise is multiplicative and right-skewed. On healthy log-normal
// series (σ = 0.15 in log space) the linear z passed 6 about once per 1,000 updates (the MAD of 50 values
// underestimates a skewed tail); the log z passed 6 twice in 90,000 scored updates and 7 never (k = 7, the
// default: a spike must be ≈ 2.9× the median at that noise; Echo Trap spikes are larger).
// The current norm joins the window after it was scored (median and MAD shrug off the spike itself).
// Non-finite norms are skipped here: the 'nan' detector reports them; so are norms ≤ 0 in log space.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { MAD_TO_SIGMA, Window, mad, median } from './rolling.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const GRAD_NORM_SPIKE = 'grad_norm_spike';

export interface GradNormPoint {
  /** Learner step. */
  readonly at: number;
  readonly gradNorm: number;
  /** The update's PPO-KL (metrics.ppoKl), when known: a spike the update applied is critical. */
  readonly ppoKl?: number;
  /** The root mean square of the rewards the update trained on (`batch.rewardScale`), when known. */
  readonly rewardScale?: number;
}

export interface GradNormSpikeConfig extends LatchConfig {
  readonly enabled: boolean;
  /** Previous updates the median and MAD are taken over. */
  readonly window: number;
  /** Previous finite norms needed before scoring (warm-up). */
  readonly warmup: number;
  /** Robust z above which a norm is a spike. */
  readonly k: number;
  /** The episode clears when z is back at or below this. */
  readonly clearZ: number;
  /** Floor of the scale as a fraction of the median norm (in log space: log units, the same for small values). */
  readonly minRelativeScale: number;
  /** Score ln(norm) (default) rather than the norm. */
  readonly logScale: boolean;
  /** A norm above this × the window's median is a spike whatever its z. */
  readonly maxRatio: number;
  /** A spike must also be at least this × the median of the run's first `warmup` norms. */
  readonly minEarlyRatio: number;
  /** A spike whose update moved the policy by more than this PPO-KL (nats) is critical. */
  readonly criticalPpoKl: number;
}

export const gradNormSpikeDefaults: GradNormSpikeConfig = Object.freeze({
  enabled: true,
  window: 50,
  warmup: 20,
  k: 7,
  clearZ: 3,
  minRelativeScale: 0.05,
  logScale: true,
  maxRatio: 50,
  minEarlyRatio: 1,
  criticalPpoKl: 1,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 10,
});

export function gradNormSpikeConfig(overrides?: Partial<GradNormSpikeConfig>, section = 'detectors.gradNormSpike'): GradNormSpikeConfig {
  const c = withDefaults(section, gradNormSpikeDefaults, overrides);
  const checks = new Checks(section, gradNormSpikeDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('window', c.window, 3, 'number of previous updates the median and MAD are taken over');
  checks.int('warmup', c.warmup, 3, 'number of previous norms needed before the first score (warm-up)');
  checks.ordered('warmup', c.warmup, 'window', c.window, 'the warm-up cannot need more norms than the window holds', { strict: false });
  checks.number('k', c.k, 0, 'robust z-score above which a norm is a spike', { exclusive: true });
  checks.number('clearZ', c.clearZ, 0, 'robust z-score at or below which the spike episode clears');
  checks.ordered('clearZ', c.clearZ, 'k', c.k, 'the episode must clear below the z that fires it (hysteresis)');
  checks.number('minRelativeScale', c.minRelativeScale, 0, 'floor of the robust scale as a fraction of the median norm');
  checks.boolean('logScale', c.logScale, 'choice to score ln(norm) (true) or the norm itself (false)');
  checks.number('maxRatio', c.maxRatio, 1, "multiple of the window's median norm above which a norm is a spike whatever its z", { exclusive: true });
  checks.number('minEarlyRatio', c.minEarlyRatio, 0, "least spike as a multiple of the median of the run's first warm-up norms");
  checks.number('criticalPpoKl', c.criticalPpoKl, 0, 'PPO-KL (nats) of the same update above which a spike is critical', { exclusive: true });
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class GradNormSpikeDetector implements Detector<GradNormPoint> {
  private readonly history: Window;
  /** ln of the reward scale at the previous updates that knew it. */
  private readonly rewardScales: Window;
  private readonly early: number[] = [];
  /** The median of the first `warmup` norms, once they are all in. */
  private earlyMedian: number | undefined;
  private readonly latch: AlertLatch;

  constructor(readonly config: GradNormSpikeConfig = gradNormSpikeDefaults) {
    this.history = new Window(config.window);
    this.rewardScales = new Window(config.window);
    this.latch = new AlertLatch(config);
  }

  observe(point: GradNormPoint): DetectorAlert[] {
    const x = point.gradNorm;
    const c = this.config;
    if (!Number.isFinite(x) || (c.logScale && x <= 0)) return [];
    const raw = c.logScale ? Math.log(x) : x;
    const previous = this.history.values();
    this.history.push(raw);
    const scaleRatio = this.pushRewardScale(point.rewardScale);
    const y = c.logScale ? raw - Math.log(scaleRatio) : raw / scaleRatio;
    if (this.early.length < c.warmup) this.early.push(x);
    if (previous.length < c.warmup) return [];

    const center = median(previous);
    const deviation = mad(previous, center);
    const floor = c.logScale ? c.minRelativeScale : c.minRelativeScale * Math.abs(center);
    const scale = Math.max(MAD_TO_SIGMA * deviation, floor, 1e-12);
    const z = (y - center) / scale;
    const earlyMedian = (this.earlyMedian ??= median(this.early));
    const norm = (v: number) => (c.logScale ? Math.exp(v) : v);
    const medianNorm = norm(center);
    const ratio = x / scaleRatio / Math.max(medianNorm, 1e-12);
    const state = (z > c.k || ratio > c.maxRatio) && x >= c.minEarlyRatio * earlyMedian ? 'breach' : z <= c.clearZ && ratio <= c.maxRatio ? 'clear' : 'neutral';
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: GRAD_NORM_SPIKE,
        severity: (point.ppoKl ?? 0) > c.criticalPpoKl ? 'critical' : 'warning',
        at: point.at,
        value: x,
        threshold: norm(center + c.k * scale),
        message:
          `gradient norm ${fmt(x)} is a spike: ${fmt(x / medianNorm)} × the median ${fmt(medianNorm)} of the previous ${previous.length} updates, ` +
          `robust z = ${fmt(z)} > ${c.k}${c.logScale ? ' (in log space)' : ''}${scaleRatio > 1 ? ` after dividing by the rewards' scale jump ${fmt(scaleRatio)}×` : ''}; in the Echo Trap such spikes mark collapse that does not reverse`,
        evidence: {
          z,
          median: medianNorm,
          mad: deviation,
          scale,
          ratioToMedian: medianNorm > 0 ? x / medianNorm : 0,
          windowUpdates: previous.length,
          earlyMedian,
          rewardScaleRatio: scaleRatio,
          ...(point.ppoKl === undefined ? {} : { ppoKl: point.ppoKl }),
          logScale: c.logScale ? 1 : 0,
        },
      },
    ];
  }

  /** Adds the update's reward scale to the window; returns how many times it exceeds the median of the previous ones (1 when it does not, or is unknown). */
  private pushRewardScale(rewardScale: number | undefined): number {
    if (rewardScale === undefined || !(rewardScale > 0) || !Number.isFinite(rewardScale)) return 1;
    const previous = this.rewardScales.values();
    const y = Math.log(rewardScale);
    this.rewardScales.push(y);
    return previous.length === 0 ? 1 : Math.max(1, Math.exp(y - median(previous)));
  }
}

// Erratic entropy and an entropy surge: the Echo Trap's "erratic rises or changes" of the mean token entropy
// (docs/algorithms.md §4.3, §8), and a policy losing what it learned (an entropy bonus gone wrong, an update that
// scrambled the weights). Entropy that falls is entropy-collapse.ts's: it reads where the policy fails, since a
// policy that converges sharpens too.
//
// Input: one point per learner update, LearnerStepEvent.entropy (mean per-token entropy over masked tokens).
// The early level is the mean of the run's first `earlyUpdates` finite entropies (fixed for the run).
//
// 'entropy_erratic' (our rule): swing = median of |Δentropy| over the last `swingWindow` successive
//   differences, divided by the early level — a detrended, robust coefficient of variation. A plain
//   rolling CV also fires on one clean step down (the window then straddles two levels); the median of
//   the differences ignores a single step and grows only when the entropy keeps jumping. Normalising by
//   the early level (not the current one) keeps small absolute noise after a collapse from looking erratic.
//   breach when swing > maxSwing, clear when swing ≤ swingClear.
// 'entropy_surge' (our rule): recent (mean of the last `recent` updates) against the median of the
//   `surgeBaselineWindow` updates before it; breach when recent > baseline + max(surgeFraction · baseline,
//   minSurge) and, with an entropy floor in the loss, > that floor (the loss pushes a collapsed entropy back up to
//   it); clear at half that rise.
// No rule applies before the early level is known or when it is below minEarly; erratic holds its fire while
// the run improves (progress.ts). One alert per episode and rule.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { LaggedBaseline, Window, mean, median } from './rolling.js';
import { heldWhileImproving } from './progress.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const ENTROPY_ERRATIC = 'entropy_erratic';
export const ENTROPY_SURGE = 'entropy_surge';

export interface EntropyPoint {
  /** Learner step. */
  readonly at: number;
  readonly entropy: number;
  /** The entropy floor the loss holds the policy at (metrics['loss.entropyTarget']), when it has one. */
  readonly floor?: number;
  /** The run is improving (progress.ts): a breach then is convergence and holds its fire. */
  readonly improving?: boolean;
}

export interface EntropyConfig extends LatchConfig {
  readonly enabled: boolean;
  /** The first this many finite entropies define the early level. */
  readonly earlyUpdates: number;
  /** Newest updates averaged into the recent level of entropy_surge. */
  readonly recent: number;
  /** Early levels below this (nats) are too small to compare against: no alerts. */
  readonly minEarly: number;
  /** Successive differences whose median measures the swings. */
  readonly swingWindow: number;
  /** Erratic fires when median |Δ| / early level exceeds this. */
  readonly maxSwing: number;
  /** The erratic episode clears when the swing is back at or below this. */
  readonly swingClear: number;
  /** entropy_surge compares the recent level with the median of this many updates before it. */
  readonly surgeBaselineWindow: number;
  /** entropy_surge fires when the recent level exceeds that baseline by this fraction of it … */
  readonly surgeFraction: number;
  /** … and by at least this many nats. */
  readonly minSurge: number;
}

export const entropyDefaults: EntropyConfig = Object.freeze({
  enabled: true,
  earlyUpdates: 10,
  recent: 3,
  minEarly: 1e-3,
  swingWindow: 10,
  maxSwing: 0.2,
  swingClear: 0.1,
  surgeBaselineWindow: 20,
  surgeFraction: 0.3,
  minSurge: 0.15,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 20,
});

export function entropyConfig(overrides?: Partial<EntropyConfig>, section = 'detectors.entropy'): EntropyConfig {
  const c = withDefaults(section, entropyDefaults, overrides);
  const checks = new Checks(section, entropyDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('earlyUpdates', c.earlyUpdates, 1, 'number of first updates whose mean entropy is the early level');
  checks.int('recent', c.recent, 1, 'number of newest updates averaged into the recent level of entropy_surge');
  checks.number('minEarly', c.minEarly, 0, 'least early entropy (nats) the rules compare against');
  checks.int('swingWindow', c.swingWindow, 2, 'number of successive entropy differences whose median measures the swings');
  checks.number('maxSwing', c.maxSwing, 0, 'median |Δentropy| / early entropy above which entropy_erratic fires', { exclusive: true });
  checks.number('swingClear', c.swingClear, 0, 'swing at or below which the erratic episode clears');
  checks.ordered('swingClear', c.swingClear, 'maxSwing', c.maxSwing, 'the erratic episode must clear below the swing that fires it (hysteresis)');
  checks.int('surgeBaselineWindow', c.surgeBaselineWindow, 2, 'number of updates before the recent ones whose median entropy_surge compares with');
  checks.number('surgeFraction', c.surgeFraction, 0, 'rise over the baseline, as a fraction of it, above which entropy_surge fires', { exclusive: true });
  checks.number('minSurge', c.minSurge, 0, 'least rise over the baseline (nats) for entropy_surge');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class EntropyDetector implements Detector<EntropyPoint> {
  private readonly early: number[] = [];
  private readonly diffs: Window;
  private readonly levels: LaggedBaseline;
  private previous: number | null = null;
  private readonly erratic: AlertLatch;
  private readonly surge: AlertLatch;

  constructor(readonly config: EntropyConfig = entropyDefaults) {
    this.diffs = new Window(config.swingWindow);
    this.levels = new LaggedBaseline(config.surgeBaselineWindow, config.recent, config.surgeBaselineWindow);
    this.erratic = new AlertLatch(config);
    this.surge = new AlertLatch(config);
  }

  /** The early level once known. */
  get earlyLevel(): number | null {
    return this.early.length === this.config.earlyUpdates ? mean(this.early) : null;
  }

  observe(point: EntropyPoint): DetectorAlert[] {
    const x = point.entropy;
    if (!Number.isFinite(x)) return [];
    if (this.early.length < this.config.earlyUpdates) this.early.push(x);
    if (this.previous !== null) this.diffs.push(Math.abs(x - this.previous));
    this.previous = x;
    const levels = this.levels.push(x);
    const early = this.earlyLevel;
    if (early === null || early < this.config.minEarly) return [];
    return [this.erraticRule(point, early), this.surgeRule(point, levels)].filter((a): a is DetectorAlert => a !== null);
  }

  /** entropy_erratic: the median change between updates, relative to the early level, too large. */
  private erraticRule(point: EntropyPoint, early: number): DetectorAlert | null {
    const c = this.config;
    if (!this.diffs.full) return null;
    const medianStep = median(this.diffs.values());
    const swing = medianStep / early;
    const state = heldWhileImproving(swing > c.maxSwing ? 'breach' : swing <= c.swingClear ? 'clear' : 'neutral', point.improving);
    if (!this.erratic.update(point.at, state)) return null;
    return {
      kind: ENTROPY_ERRATIC,
      severity: 'warning',
      at: point.at,
      value: swing,
      threshold: c.maxSwing,
      message: `policy entropy swings erratically: the median change between updates over the last ${c.swingWindow} is ${fmt(medianStep)} nats, ${fmt(swing)} × the early level ${fmt(early)} (limit ${c.maxSwing})`,
      evidence: { swing, medianAbsChange: medianStep, early, lastEntropy: point.entropy },
    };
  }

  /** entropy_surge: the recent level well above its lagging baseline — the policy losing what it had learned. */
  private surgeRule(point: EntropyPoint, levels: { recent: number; baseline: number } | null): DetectorAlert | null {
    const c = this.config;
    if (levels === null) return null;
    const { recent, baseline } = levels;
    const rise = baseline + Math.max(c.surgeFraction * baseline, c.minSurge);
    // Entropy climbing back up to the loss's floor is the floor at work, not the policy unlearning.
    const threshold = Math.max(rise, point.floor ?? Number.NEGATIVE_INFINITY);
    const state = recent > threshold ? 'breach' : recent <= baseline + 0.5 * (rise - baseline) ? 'clear' : 'neutral';
    if (!this.surge.update(point.at, state)) return null;
    return {
      kind: ENTROPY_SURGE,
      severity: 'warning',
      at: point.at,
      value: recent,
      threshold,
      message: `policy entropy rose to ${fmt(recent)} nats (mean of the last ${c.recent} updates) from its level ${fmt(baseline)} (median of the ${c.surgeBaselineWindow} before), above ${fmt(threshold)}${point.floor === undefined ? '' : ` (and above the loss's entropy floor ${fmt(point.floor)})`}: the policy is losing what it learned`,
      evidence: { recent, baseline, ratio: baseline > 0 ? recent / baseline : 0, lastEntropy: point.entropy, ...(point.floor === undefined ? {} : { floor: point.floor }) },
    };
  }
}

// Entropy collapse and erratic entropy: the Echo Trap's second symptom, "a sharp drop, or erratic rises or
// changes" of the mean token entropy (docs/algorithms.md §4.3, §8).
//
// Input: one point per learner update, LearnerStepEvent.entropy (mean per-token entropy over masked tokens).
// The early level is the mean of the run's first `earlyUpdates` finite entropies (fixed for the run).
//
// 'entropy_collapse' (our rule): recent = mean of the last `recent` updates;
//   breach when recent < dropFraction · early, clear when recent ≥ clearFraction · early.
// 'entropy_erratic' (our rule): swing = median of |Δentropy| over the last `swingWindow` successive
//   differences, divided by the early level — a detrended, robust coefficient of variation. A plain
//   rolling CV also fires on one clean step down (the window then straddles two levels); the median of
//   the differences ignores a single step and grows only when the entropy keeps jumping. Normalising by
//   the early level (not the current one) keeps small absolute noise after a collapse from looking erratic.
//   breach when swing > maxSwing, clear when swing ≤ swingClear.
// Neither rule applies before the early level is known or when it is below minEarly. One alert per
// episode and rule.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { Window, mean, median } from './rolling.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const ENTROPY_COLLAPSE = 'entropy_collapse';
export const ENTROPY_ERRATIC = 'entropy_erratic';

export interface EntropyPoint {
  /** Learner step. */
  readonly at: number;
  readonly entropy: number;
}

export interface EntropyConfig extends LatchConfig {
  readonly enabled: boolean;
  /** The first this many finite entropies define the early level. */
  readonly earlyUpdates: number;
  /** Newest updates averaged into the recent level. */
  readonly recent: number;
  /** Collapse fires when the recent level is below this fraction of the early level. */
  readonly dropFraction: number;
  /** The collapse episode clears at this fraction of the early level. */
  readonly clearFraction: number;
  /** Early levels below this (nats) are too small to compare against: no alerts. */
  readonly minEarly: number;
  /** Successive differences whose median measures the swings. */
  readonly swingWindow: number;
  /** Erratic fires when median |Δ| / early level exceeds this. */
  readonly maxSwing: number;
  /** The erratic episode clears when the swing is back at or below this. */
  readonly swingClear: number;
}

export const entropyDefaults: EntropyConfig = Object.freeze({
  enabled: true,
  earlyUpdates: 10,
  recent: 3,
  dropFraction: 0.5,
  clearFraction: 0.7,
  minEarly: 1e-3,
  swingWindow: 10,
  maxSwing: 0.2,
  swingClear: 0.1,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 20,
});

export function entropyConfig(overrides?: Partial<EntropyConfig>, section = 'detectors.entropy'): EntropyConfig {
  const c = withDefaults(section, entropyDefaults, overrides);
  const checks = new Checks(section, entropyDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('earlyUpdates', c.earlyUpdates, 1, 'number of first updates whose mean entropy is the early level');
  checks.int('recent', c.recent, 1, 'number of newest updates averaged into the recent level');
  checks.fraction('dropFraction', c.dropFraction, 'share of the early entropy below which entropy_collapse fires');
  checks.fraction('clearFraction', c.clearFraction, 'share of the early entropy at which the collapse episode clears');
  checks.ordered('dropFraction', c.dropFraction, 'clearFraction', c.clearFraction, 'the episode must clear above the level that fires it (hysteresis)');
  checks.number('minEarly', c.minEarly, 0, 'least early entropy (nats) the rules compare against');
  checks.int('swingWindow', c.swingWindow, 2, 'number of successive entropy differences whose median measures the swings');
  checks.number('maxSwing', c.maxSwing, 0, 'median |Δentropy| / early entropy above which entropy_erratic fires', { exclusive: true });
  checks.number('swingClear', c.swingClear, 0, 'swing at or below which the erratic episode clears');
  checks.ordered('swingClear', c.swingClear, 'maxSwing', c.maxSwing, 'the erratic episode must clear below the swing that fires it (hysteresis)');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class EntropyDetector implements Detector<EntropyPoint> {
  private readonly early: number[] = [];
  private readonly values: Window;
  private readonly diffs: Window;
  private previous: number | null = null;
  private readonly collapse: AlertLatch;
  private readonly erratic: AlertLatch;

  constructor(readonly config: EntropyConfig = entropyDefaults) {
    this.values = new Window(config.recent);
    this.diffs = new Window(config.swingWindow);
    this.collapse = new AlertLatch(config);
    this.erratic = new AlertLatch(config);
  }

  /** The early level once known. */
  get earlyLevel(): number | null {
    return this.early.length === this.config.earlyUpdates ? mean(this.early) : null;
  }

  observe(point: EntropyPoint): DetectorAlert[] {
    const x = point.entropy;
    if (!Number.isFinite(x)) return [];
    const c = this.config;
    if (this.early.length < c.earlyUpdates) this.early.push(x);
    this.values.push(x);
    if (this.previous !== null) this.diffs.push(Math.abs(x - this.previous));
    this.previous = x;

    const early = this.earlyLevel;
    if (early === null || early < c.minEarly) return [];
    const alerts: DetectorAlert[] = [];

    if (this.values.full) {
      const recent = mean(this.values.values());
      const threshold = c.dropFraction * early;
      const state = recent < threshold ? 'breach' : recent >= c.clearFraction * early ? 'clear' : 'neutral';
      if (this.collapse.update(point.at, state)) {
        alerts.push({
          kind: ENTROPY_COLLAPSE,
          severity: 'warning',
          at: point.at,
          value: recent,
          threshold,
          message: `policy entropy fell to ${fmt(recent)} nats (mean of the last ${c.recent} updates), below ${c.dropFraction} × its early level ${fmt(early)} (first ${c.earlyUpdates} updates): the policy is turning deterministic`,
          evidence: { recent, early, ratio: recent / early, lastEntropy: x },
        });
      }
    }

    if (this.diffs.full) {
      const medianStep = median(this.diffs.values());
      const swing = medianStep / early;
      const state = swing > c.maxSwing ? 'breach' : swing <= c.swingClear ? 'clear' : 'neutral';
      if (this.erratic.update(point.at, state)) {
        alerts.push({
          kind: ENTROPY_ERRATIC,
          severity: 'warning',
          at: point.at,
          value: swing,
          threshold: c.maxSwing,
          message: `policy entropy swings erratically: the median change between updates over the last ${c.swingWindow} is ${fmt(medianStep)} nats, ${fmt(swing)} × the early level ${fmt(early)} (limit ${c.maxSwing})`,
          evidence: { swing, medianAbsChange: medianStep, early, lastEntropy: x },
        });
      }
    }
    return alerts;
  }
}

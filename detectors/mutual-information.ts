// Template collapse as RAGEN-2 measures it (docs/algorithms.md §5): the learner cross-scores sampled replies
// under every prompt of the batch every few updates (learner/collapse/) and reports the mutual-information
// estimate Î(X;Z), its bound log N and the retrieval accuracy in its learner_step metrics ('template.*').
// This detector watches those measurements; template-collapse.ts is the model-free proxy from trajectories.
//
// Input: one point per learner step that carries 'template.mi' (others are skipped).
// Signal: u = Î / log N ∈ [0, 1] — the share of the prompt's information the replies keep, comparable
//   across batches with different numbers of distinct prompts N.
// Rule (our design; RAGEN-2 recommends watching MI but gives no threshold): early = mean u of the run's
//   first `earlyPoints` measurements; recent = mean of the last `recent`; peak = the highest level held
//   across `recent` consecutive earlier measurements (their least), so one lucky estimate of a noisy Î does
//   not set the reference; reference = the larger of early (when ≥ minEarly) and peak (when ≥ minPeak);
//   breach when recent < dropFraction · reference, clear when recent ≥ clearFraction · reference;
//   no alerts while neither level counts (the replies never depended on the input: nothing to lose).
//   When the early level does not count (a policy trained from scratch), a breach fires only while the run is
//   declining (progress.ts: it has given back more than a quarter of its reward gain): on such runs the measured
//   drops with the reward holding were all noise of the estimate (docs/results/alerts.md).
//   The peak is there for policies trained from scratch: their replies ignore the prompt at first (early
//   ≈ 0, measured in `bench collapse`), come to depend on it as they learn, and lose that in a collapse;
//   a pretrained policy (RAGEN-2's setting) starts high, and then early and peak agree.
// The evidence carries the retrieval accuracy next to its chance level 1/N, which the paper reads with MI.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { Window, mean } from './rolling.js';
import { heldUnlessDeclining, heldWhileImproving } from './progress.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const TEMPLATE_COLLAPSE_MI = 'template_collapse_mi';

export interface MutualInformationPoint {
  /** Learner step. */
  readonly at: number;
  /** Î(X;Z) in nats. */
  readonly mi: number;
  /** log N. */
  readonly upperBound: number;
  readonly retrievalAccuracy: number;
  readonly chance: number;
  /** The run is improving (progress.ts): a breach then is convergence and holds its fire. */
  readonly improving?: boolean;
  /** The run is giving back what it gained (progress.ts); a drop below the peak fires only then. */
  readonly declining?: boolean;
}

export interface MutualInformationConfig extends LatchConfig {
  readonly enabled: boolean;
  readonly earlyPoints: number;
  readonly recent: number;
  readonly dropFraction: number;
  readonly clearFraction: number;
  readonly minEarly: number;
  readonly minPeak: number;
}

export const mutualInformationDefaults: MutualInformationConfig = Object.freeze({
  enabled: true,
  earlyPoints: 3,
  recent: 2,
  dropFraction: 0.5,
  clearFraction: 0.7,
  minEarly: 0.05,
  minPeak: 0.1,
  confirm: 1,
  rearmAfter: 2,
  cooldown: 20,
});

export function mutualInformationConfig(overrides?: Partial<MutualInformationConfig>, section = 'detectors.mutualInformation'): MutualInformationConfig {
  const c = withDefaults(section, mutualInformationDefaults, overrides);
  const checks = new Checks(section, mutualInformationDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('earlyPoints', c.earlyPoints, 1, 'number of first cross-scoring measurements whose mean Î/log N is the early level');
  checks.int('recent', c.recent, 1, 'number of newest measurements averaged into the recent level');
  checks.fraction('dropFraction', c.dropFraction, 'share of the early Î/log N below which template_collapse_mi fires');
  checks.fraction('clearFraction', c.clearFraction, 'share of the early Î/log N at which the episode clears');
  checks.ordered('dropFraction', c.dropFraction, 'clearFraction', c.clearFraction, 'the episode must clear above the level that fires it (hysteresis)');
  checks.number('minEarly', c.minEarly, 0, 'least early Î/log N the rule compares against');
  checks.number('minPeak', c.minPeak, 0, 'least peak recent Î/log N the rule compares against');
  checkLatch(checks, c);
  return Object.freeze(c);
}

/** The point of a learner step's metrics map, or null when the step did not cross-score. */
export function mutualInformationPoint(at: number, metrics: Readonly<Record<string, number>>): MutualInformationPoint | null {
  const mi = metrics['template.mi'];
  const upperBound = metrics['template.miUpperBound'];
  if (mi === undefined || upperBound === undefined || !Number.isFinite(mi) || !(upperBound > 0)) return null;
  return { at, mi, upperBound, retrievalAccuracy: metrics['template.retrievalAccuracy'] ?? Number.NaN, chance: metrics['template.chance'] ?? Number.NaN };
}

export class MutualInformationDetector implements Detector<MutualInformationPoint> {
  private readonly early: number[] = [];
  private readonly values: Window;
  /** The highest level held across the recent window before the current measurement (0 until the window is full). */
  private peak = 0;
  private readonly latch: AlertLatch;

  constructor(readonly config: MutualInformationConfig = mutualInformationDefaults) {
    this.values = new Window(config.recent);
    this.latch = new AlertLatch(config);
  }

  observe(point: MutualInformationPoint): DetectorAlert[] {
    const c = this.config;
    // Small negative estimates are finite-sample noise (RAGEN-2): read them as no information.
    const u = Math.min(1, Math.max(0, point.mi / point.upperBound));
    if (this.early.length < c.earlyPoints) this.early.push(u);
    this.values.push(u);
    if (this.early.length < c.earlyPoints || !this.values.full) return [];
    const early = mean(this.early);
    const recent = mean(this.values.values());
    const peak = this.peak;
    this.peak = Math.max(this.peak, Math.min(...this.values.values()));
    const reference = Math.max(early >= c.minEarly ? early : 0, peak >= c.minPeak ? peak : 0);
    if (reference === 0) return [];
    const threshold = c.dropFraction * reference;
    const measured = heldWhileImproving(recent < threshold ? 'breach' : recent >= c.clearFraction * reference ? 'clear' : 'neutral', point.improving);
    // A from-scratch policy's dependence on the prompt (its early level does not count) is what it learned, and
    // its estimate is noisy: a drop below the peak counts when the run is losing what it gained too.
    const state = early >= c.minEarly ? measured : heldUnlessDeclining(measured, point.declining);
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: TEMPLATE_COLLAPSE_MI,
        severity: 'warning',
        at: point.at,
        value: recent,
        threshold,
        message:
          `template collapse: the replies keep ${fmt(recent)} of the prompt's information (Î/log N, last ${c.recent} cross-scorings), below ${c.dropFraction} × ` +
          `${reference === early ? `its early level ${fmt(early)}` : `its peak ${fmt(peak)} (early ${fmt(early)})`}; retrieval accuracy ${fmt(point.retrievalAccuracy)} against chance ${fmt(point.chance)}: outputs stop depending on the input`,
        evidence: Object.fromEntries(
          Object.entries({ recent, early, peak, reference, mi: point.mi, upperBound: point.upperBound, retrievalAccuracy: point.retrievalAccuracy, chance: point.chance }).filter(
            ([, v]) => Number.isFinite(v),
          ),
        ),
      },
    ];
  }
}

// Entropy collapse where the policy fails: the Echo Trap's "sharp drop" of entropy (docs/algorithms.md §4.3),
// read from the episodes that fail. A policy that converges sharpens too — on the tasks it solves, where a low
// entropy is the point of training; a collapsing one grows certain of actions that fail. The learner's entropy
// mixes the two, so this detector reads the trajectories, which say which episodes failed.
//
// Input: one point per window of trajectories (action-windows.ts): the mean surprisal −log π(token) of the
// sampled action tokens (TrajectoryStep.actionLogProbs, the sampling policy's own log-probs) of the window's
// finished failed episodes. Under the policy that sampled them its expectation is the policy's per-token entropy
// at the states it failed from, so no learner-side measure is needed.
// Rule (our design): a window is scored with ≥ minTokens such tokens; early = mean of the first `earlyWindows`
// scored windows; recent = mean of the newest `recent` scored windows;
//   breach when recent < dropFraction · early, clear when recent ≥ clearFraction · early; none while early < minEarly.
// dropFraction was chosen on `trajflow bench alerts`' recorded runs; why this value: docs/results/alerts.md.
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { Checks, withDefaults } from './config-checks.js';
import { Window, mean } from './rolling.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const ENTROPY_COLLAPSE = 'entropy_collapse';

/** Surprisal of sampled action tokens: its sum (nats) over `tokens` tokens. */
export interface Surprisal {
  readonly sum: number;
  readonly tokens: number;
}

export interface FailureEntropyPoint {
  /** Index of the window. */
  readonly at: number;
  /** The window's failed episodes' action tokens. */
  readonly failed: Surprisal;
  /** The window's successful episodes' action tokens (evidence only: sharpening there is learning). */
  readonly succeeded: Surprisal;
}

export interface EntropyCollapseConfig extends LatchConfig {
  readonly enabled: boolean;
  /** Least failed-episode action tokens in a window for it to be scored. */
  readonly minTokens: number;
  /** Scored windows whose mean is the early level. */
  readonly earlyWindows: number;
  /** Newest scored windows averaged into the recent level. */
  readonly recent: number;
  /** Breach below this share of the early level. */
  readonly dropFraction: number;
  /** The spell clears at or above this share of the early level. */
  readonly clearFraction: number;
  /** Early levels below this (nats) are too small to compare against: no alerts. */
  readonly minEarly: number;
}

export const entropyCollapseDefaults: EntropyCollapseConfig = Object.freeze({
  enabled: true,
  minTokens: 16,
  earlyWindows: 3,
  recent: 2,
  dropFraction: 0.3,
  clearFraction: 0.5,
  minEarly: 0.05,
  confirm: 1,
  rearmAfter: 2,
  cooldown: 5,
});

export function entropyCollapseConfig(overrides?: Partial<EntropyCollapseConfig>, section = 'detectors.entropyCollapse'): EntropyCollapseConfig {
  const c = withDefaults(section, entropyCollapseDefaults, overrides);
  const checks = new Checks(section, entropyCollapseDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector (it reads the trajectories topic)');
  checks.int('minTokens', c.minTokens, 1, "least number of failed episodes' action tokens in a window for it to be scored");
  checks.int('earlyWindows', c.earlyWindows, 1, 'number of first scored windows whose mean surprisal is the early level');
  checks.int('recent', c.recent, 1, 'number of newest scored windows averaged into the recent level');
  checks.fraction('dropFraction', c.dropFraction, 'share of the early level below which entropy_collapse fires');
  checks.fraction('clearFraction', c.clearFraction, 'share of the early level at which the spell clears');
  checks.ordered('dropFraction', c.dropFraction, 'clearFraction', c.clearFraction, 'the spell must clear above the level that fires it (hysteresis)');
  checks.number('minEarly', c.minEarly, 0, 'least early surprisal (nats per token) the rule compares against');
  checkLatch(checks, c);
  return Object.freeze(c);
}

const perToken = (s: Surprisal) => (s.tokens > 0 ? s.sum / s.tokens : Number.NaN);

export class EntropyCollapseDetector implements Detector<FailureEntropyPoint> {
  private readonly early: number[] = [];
  private readonly latest: Window;
  private readonly latch: AlertLatch;

  constructor(readonly config: EntropyCollapseConfig = entropyCollapseDefaults) {
    this.latest = new Window(config.recent);
    this.latch = new AlertLatch(config);
  }

  observe(point: FailureEntropyPoint): DetectorAlert[] {
    const c = this.config;
    const level = perToken(point.failed);
    if (point.failed.tokens < c.minTokens || !Number.isFinite(level)) return [];
    if (this.early.length < c.earlyWindows) {
      this.early.push(level);
      return [];
    }
    this.latest.push(level);
    const early = mean(this.early);
    if (!this.latest.full || early < c.minEarly) return [];
    const recent = mean(this.latest.values());
    const threshold = c.dropFraction * early;
    const state = recent < threshold ? 'breach' : recent >= c.clearFraction * early ? 'clear' : 'neutral';
    if (!this.latch.update(point.at, state)) return [];
    const succeeded = perToken(point.succeeded);
    return [
      {
        kind: ENTROPY_COLLAPSE,
        severity: 'warning',
        at: point.at,
        value: recent,
        threshold,
        message:
          `the policy grew certain where it fails: its entropy on failed episodes' actions fell to ${fmt(recent)} nats per token (mean surprisal of the sampled tokens, last ${c.recent} windows), ` +
          `below ${c.dropFraction} × its early ${fmt(early)}${Number.isFinite(succeeded) ? ` (${fmt(succeeded)} on successful ones)` : ''} — it repeats actions that fail`,
        evidence: { recent, early, ratio: recent / early, failedTokens: point.failed.tokens, ...(Number.isFinite(succeeded) ? { succeededEntropy: succeeded } : {}) },
      },
    ];
  }
}

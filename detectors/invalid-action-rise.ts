// Rising invalid-action rate: the policy stops producing parseable or legal actions (RAGEN's format
// penalty exists for this, docs/algorithms.md §4.4), often as its outputs degenerate.
//
// Input: one point per rollout batch, RolloutStatsEvent.invalidActionRate (invalid actions / steps).
// Rule (our design): recent = mean of the last `recent` batches, baseline = median of up to
// `baselineWindow` batches before those;
//   breach when recent > baseline + delta, clear when recent ≤ baseline + clearDelta;
//   none before `minBaseline` baseline batches. An absolute delta (rates live in [0, 1]): a relative rule
//   would fire on 0.01 → 0.03. One alert per episode.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { LaggedBaseline } from './rolling.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const INVALID_ACTION_RISE = 'invalid_action_rise';

export interface InvalidActionPoint {
  /** Ordinal of the batch in the run. */
  readonly at: number;
  readonly invalidActionRate: number;
}

export interface InvalidActionRiseConfig extends LatchConfig {
  readonly enabled: boolean;
  readonly baselineWindow: number;
  readonly minBaseline: number;
  readonly recent: number;
  /** Fire when the recent rate exceeds the baseline by more than this (absolute, rates in [0, 1]). */
  readonly delta: number;
  /** The episode clears when the recent rate is back within this of the baseline. */
  readonly clearDelta: number;
}

export const invalidActionRiseDefaults: InvalidActionRiseConfig = Object.freeze({
  enabled: true,
  baselineWindow: 20,
  minBaseline: 8,
  recent: 3,
  delta: 0.15,
  clearDelta: 0.05,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 20,
});

export function invalidActionRiseConfig(overrides?: Partial<InvalidActionRiseConfig>, section = 'detectors.invalidActions'): InvalidActionRiseConfig {
  const c = withDefaults(section, invalidActionRiseDefaults, overrides);
  const checks = new Checks(section, invalidActionRiseDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('baselineWindow', c.baselineWindow, 1, 'number of batches whose median is the baseline rate');
  checks.int('minBaseline', c.minBaseline, 1, 'number of baseline batches needed before the detector can fire (warm-up)');
  checks.ordered('minBaseline', c.minBaseline, 'baselineWindow', c.baselineWindow, 'the warm-up cannot need more batches than the baseline window holds', { strict: false });
  checks.int('recent', c.recent, 1, 'number of newest batches averaged into the recent rate');
  checks.fraction('delta', c.delta, 'rise of the invalid-action rate over its baseline (absolute) that fires the alert');
  checks.number('clearDelta', c.clearDelta, 0, 'rise over the baseline at or below which the episode clears');
  checks.ordered('clearDelta', c.clearDelta, 'delta', c.delta, 'the episode must clear below the rise that fires it (hysteresis)');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class InvalidActionRiseDetector implements Detector<InvalidActionPoint> {
  private readonly levels: LaggedBaseline;
  private readonly latch: AlertLatch;

  constructor(readonly config: InvalidActionRiseConfig = invalidActionRiseDefaults) {
    this.levels = new LaggedBaseline(config.baselineWindow, config.recent, config.minBaseline);
    this.latch = new AlertLatch(config);
  }

  observe(point: InvalidActionPoint): DetectorAlert[] {
    if (!Number.isFinite(point.invalidActionRate)) return [];
    const levels = this.levels.push(point.invalidActionRate);
    if (levels === null) return [];
    const c = this.config;
    const { recent, baseline, baselinePoints } = levels;
    const threshold = baseline + c.delta;
    const state = recent > threshold ? 'breach' : recent <= baseline + c.clearDelta ? 'clear' : 'neutral';
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: INVALID_ACTION_RISE,
        severity: 'warning',
        at: point.at,
        value: recent,
        threshold,
        message: `invalid-action rate rose to ${fmt(recent)} (mean of the last ${c.recent} batches), more than ${c.delta} above its baseline ${fmt(baseline)}`,
        evidence: { recent, baseline, rise: recent - baseline, baselineBatches: baselinePoints, lastRate: point.invalidActionRate },
      },
    ];
  }
}

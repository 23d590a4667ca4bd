// Response-length collapse: responses shrink to a short template (RAGEN tracks response length beside
// reward and entropy, docs/algorithms.md §4.3; short, repeated answers are the Echo Trap's visible face).
//
// Input: one point per learner update, the policy-generated tokens per sample:
//   LearnerStepEvent.metrics.lossTokens / LearnerStepEvent.samples
// (lossTokens counts the masked tokens, i.e. the tokens the policy wrote, over every turn of the sample).
// Updates without lossTokens or with no samples are skipped. Rule (our design):
//   recent = mean of the last `recent` updates, baseline = median of up to `baselineWindow` before those;
//   breach when recent < fraction · baseline, clear when recent ≥ clearFraction · baseline;
//   none before `minBaseline` baseline updates. One alert per episode.
// Episode length in steps (RolloutStatsEvent.meanLength) is deliberately not watched: shorter episodes
// are usually the agent getting better (Sokoban, FrozenLake), not collapsing.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { LaggedBaseline } from './rolling.js';
import { heldWhileImproving } from './progress.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const RESPONSE_LENGTH_COLLAPSE = 'response_length_collapse';

export interface ResponseLengthPoint {
  /** Learner step. */
  readonly at: number;
  /** Mean policy-generated tokens per sample. */
  readonly tokensPerSample: number;
  /** The run is improving (progress.ts): a breach then is convergence and holds its fire. */
  readonly improving?: boolean;
}

export interface ResponseLengthConfig extends LatchConfig {
  readonly enabled: boolean;
  readonly baselineWindow: number;
  readonly minBaseline: number;
  readonly recent: number;
  /** Fire when the recent length is below this fraction of the baseline. */
  readonly fraction: number;
  /** The episode clears at this fraction of the baseline. */
  readonly clearFraction: number;
}

export const responseLengthDefaults: ResponseLengthConfig = Object.freeze({
  enabled: true,
  baselineWindow: 20,
  minBaseline: 8,
  recent: 3,
  fraction: 0.5,
  clearFraction: 0.75,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 20,
});

export function responseLengthConfig(overrides?: Partial<ResponseLengthConfig>, section = 'detectors.responseLength'): ResponseLengthConfig {
  const c = withDefaults(section, responseLengthDefaults, overrides);
  const checks = new Checks(section, responseLengthDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('baselineWindow', c.baselineWindow, 1, 'number of updates whose median is the baseline length');
  checks.int('minBaseline', c.minBaseline, 1, 'number of baseline updates needed before the detector can fire (warm-up)');
  checks.ordered('minBaseline', c.minBaseline, 'baselineWindow', c.baselineWindow, 'the warm-up cannot need more updates than the baseline window holds', { strict: false });
  checks.int('recent', c.recent, 1, 'number of newest updates averaged into the recent length');
  checks.fraction('fraction', c.fraction, 'share of the baseline length below which the collapse fires');
  checks.fraction('clearFraction', c.clearFraction, 'share of the baseline length at which the episode clears');
  checks.ordered('fraction', c.fraction, 'clearFraction', c.clearFraction, 'the episode must clear above the level that fires it (hysteresis)');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class ResponseLengthDetector implements Detector<ResponseLengthPoint> {
  private readonly levels: LaggedBaseline;
  private readonly latch: AlertLatch;

  constructor(readonly config: ResponseLengthConfig = responseLengthDefaults) {
    this.levels = new LaggedBaseline(config.baselineWindow, config.recent, config.minBaseline);
    this.latch = new AlertLatch(config);
  }

  observe(point: ResponseLengthPoint): DetectorAlert[] {
    if (!Number.isFinite(point.tokensPerSample)) return [];
    const levels = this.levels.push(point.tokensPerSample);
    if (levels === null) return [];
    const c = this.config;
    const { recent, baseline, baselinePoints } = levels;
    const threshold = c.fraction * baseline;
    const state = heldWhileImproving(baseline > 0 && recent < threshold ? 'breach' : recent >= c.clearFraction * baseline ? 'clear' : 'neutral', point.improving);
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: RESPONSE_LENGTH_COLLAPSE,
        severity: 'warning',
        at: point.at,
        value: recent,
        threshold,
        message: `responses shrank to ${fmt(recent)} generated tokens per sample (mean of the last ${c.recent} updates), below ${c.fraction} × the baseline ${fmt(baseline)}`,
        evidence: { recent, baseline, ratio: recent / baseline, baselineUpdates: baselinePoints, lastTokensPerSample: point.tokensPerSample },
      },
    ];
  }
}

// Reward-variance cliff: the Echo Trap's early warning (docs/algorithms.md §4.3). RAGEN v1 saw the in-group
// reward std collapse first (FrozenLake-PPO: std fell at step 40, the mean only at step 90): every group
// answers alike, group-relative advantages vanish, and the task gradient with them.
//
// Input: one point per rollout batch (RolloutStatsEvent scope 'batch'): `meanInGroupRewardStd` (the batch
// mean of the per-group std, RAGEN's rollout/in_group_std) and `rewardMean`.
//
// Rule (our design; RAGEN reads the curves by eye):
//   recent   = mean of the last `recent` batches (std and reward mean; 8 by default: the batch mean of in-group
//              stds over a few groups is noisy — on FrozenLake's healthy runs it swings with a CV near 0.4 from
//              batch to batch, so a mean of 3 falls below half its level on most healthy runs, while a mean of 8
//              does on few, and an Echo Trap's std stays down for tens of batches before the mean follows),
//   baseline = median of up to `baselineWindow` batches before those (a lagging, robust level),
//   breach   when baselineStd ≥ minBaselineStd,
//            recentStd < stdFraction · baselineStd           (the std fell sharply), and
//            recentMean ≥ baselineMean − (1 − meanFraction) · |baselineMean|   (the mean still holds:
//            ≥ meanFraction · baseline for a positive mean; a negative mean may not fall by more than
//            (1 − meanFraction) of its size), and
//            the newest batch's success rate < solvedSuccessRate   (groups that agree because nearly every
//            rollout succeeds have solved the task: convergence, not the Echo Trap);
//   clear    when recentStd ≥ clearFraction · baselineStd.
// Needs minBaseline baseline batches first. One alert per spell of the condition (AlertLatch). A slow decline that the
// baseline follows is not a cliff and does not fire; a fall of mean and std together is reward collapse,
// not this early warning, and does not fire either.
import { ConfigError } from '../core/errors.js';
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { LaggedBaseline } from './rolling.js';
import { heldWhileImproving } from './progress.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const REWARD_VARIANCE_CLIFF = 'reward_variance_cliff';

export interface RewardVarianceCliffPoint {
  /** Ordinal of the batch in the run (or any increasing position). */
  readonly at: number;
  readonly inGroupStd: number;
  readonly rewardMean: number;
  /** Successful trajectories / trajectories (RolloutStatsEvent.successRate), when known. */
  readonly successRate?: number;
  /** The run is improving (progress.ts): a breach then is convergence and holds its fire. */
  readonly improving?: boolean;
}

export interface RewardVarianceCliffConfig extends LatchConfig {
  readonly enabled: boolean;
  /** Batches in the baseline (their median), ending `recent` batches before the newest. */
  readonly baselineWindow: number;
  /** Baseline batches needed before the rule applies (warm-up). */
  readonly minBaseline: number;
  /** Newest batches averaged into the recent level. */
  readonly recent: number;
  /** Fire when the recent std is below this fraction of the baseline std. */
  readonly stdFraction: number;
  /** The episode clears when the recent std is back to this fraction of the baseline. */
  readonly clearFraction: number;
  /** The reward mean "holds" while it keeps this fraction of its baseline. */
  readonly meanFraction: number;
  /** No alert when the baseline std itself is below this (a run that never had reward variance). */
  readonly minBaselineStd: number;
  /** No alert while the newest batch's success rate is at least this (the task is solved; 1 only exempts perfect batches). */
  readonly solvedSuccessRate: number;
}

export const rewardVarianceCliffDefaults: RewardVarianceCliffConfig = Object.freeze({
  enabled: true,
  baselineWindow: 20,
  minBaseline: 8,
  recent: 8,
  stdFraction: 0.5,
  clearFraction: 0.75,
  meanFraction: 0.8,
  minBaselineStd: 0.02,
  solvedSuccessRate: 0.95,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 20,
});

export function rewardVarianceCliffConfig(overrides?: Partial<RewardVarianceCliffConfig>, section = 'detectors.rewardVarianceCliff'): RewardVarianceCliffConfig {
  const c = withDefaults(section, rewardVarianceCliffDefaults, overrides);
  const checks = new Checks(section, rewardVarianceCliffDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('baselineWindow', c.baselineWindow, 1, 'number of batches whose median is the baseline');
  checks.int('minBaseline', c.minBaseline, 1, 'number of baseline batches needed before the detector can fire (warm-up)');
  checks.ordered('minBaseline', c.minBaseline, 'baselineWindow', c.baselineWindow, 'the warm-up cannot need more batches than the baseline window holds', { strict: false });
  checks.int('recent', c.recent, 1, 'number of newest batches averaged into the recent level');
  checks.fraction('stdFraction', c.stdFraction, 'share of the baseline in-group std below which the cliff fires');
  checks.fraction('clearFraction', c.clearFraction, 'share of the baseline in-group std at which the episode clears');
  checks.ordered('stdFraction', c.stdFraction, 'clearFraction', c.clearFraction, 'the episode must clear above the level that fires it (hysteresis)');
  checks.fraction('meanFraction', c.meanFraction, 'share of its baseline the reward mean must keep for the cliff to count as an early warning');
  checks.number('minBaselineStd', c.minBaselineStd, 0, 'least baseline in-group std for which a cliff means anything');
  if (!(c.solvedSuccessRate > 0 && c.solvedSuccessRate <= 1)) {
    throw new ConfigError(
      `${section}.solvedSuccessRate must be a number in (0, 1], got ${c.solvedSuccessRate}: it is the success rate from which agreeing groups count as a solved task, not a cliff. Set it to a number in (0, 1] (default 0.95) or leave it out.`,
    );
  }
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class RewardVarianceCliffDetector implements Detector<RewardVarianceCliffPoint> {
  private readonly stds: LaggedBaseline;
  private readonly means: LaggedBaseline;
  private lastSuccessRate = Number.NaN;
  private readonly latch: AlertLatch;

  constructor(readonly config: RewardVarianceCliffConfig = rewardVarianceCliffDefaults) {
    this.stds = new LaggedBaseline(config.baselineWindow, config.recent, config.minBaseline);
    this.means = new LaggedBaseline(config.baselineWindow, config.recent, config.minBaseline);
    this.latch = new AlertLatch(config);
  }

  observe(point: RewardVarianceCliffPoint): DetectorAlert[] {
    if (!Number.isFinite(point.inGroupStd) || !Number.isFinite(point.rewardMean)) return [];
    const c = this.config;
    const stds = this.stds.push(point.inGroupStd);
    const means = this.means.push(point.rewardMean);
    this.lastSuccessRate = point.successRate ?? Number.NaN;
    if (stds === null || means === null) return [];

    const { recent: recentStd, baseline: baselineStd, baselinePoints } = stds;
    const { recent: recentMean, baseline: baselineMean } = means;
    const threshold = c.stdFraction * baselineStd;
    const meanFloor = baselineMean - (1 - c.meanFraction) * Math.abs(baselineMean);
    const meanHolds = recentMean >= meanFloor;
    const solved = this.lastSuccessRate >= c.solvedSuccessRate;

    const breach = baselineStd >= c.minBaselineStd && recentStd < threshold && meanHolds && !solved;
    const state = heldWhileImproving(breach ? 'breach' : recentStd >= c.clearFraction * baselineStd ? 'clear' : 'neutral', point.improving);
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: REWARD_VARIANCE_CLIFF,
        severity: 'warning',
        at: point.at,
        value: recentStd,
        threshold,
        message:
          `in-group reward std fell to ${fmt(recentStd)} (mean of the last ${c.recent} batches), below ${c.stdFraction} × its baseline ${fmt(baselineStd)}, ` +
          `while the reward mean holds at ${fmt(recentMean)} (baseline ${fmt(baselineMean)}): groups stop disagreeing, the Echo Trap's early warning`,
        evidence: {
          recentStd,
          baselineStd,
          recentMean,
          baselineMean,
          meanFloor,
          stdRatio: baselineStd > 0 ? recentStd / baselineStd : 0,
          baselineBatches: baselinePoints,
          lastBatchStd: point.inGroupStd,
          ...(Number.isFinite(this.lastSuccessRate) ? { successRate: this.lastSuccessRate } : {}),
        },
      },
    ];
  }
}

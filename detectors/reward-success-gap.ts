// The reward stops paying for success: failed episodes earn about as much as successful ones. A reward bug
// (a term that pays for lasting, for a format, for a side effect) or a policy that found how to earn reward
// without solving the task — reward hacking — shows here first: the success rate falls only once the policy
// has learned to exploit the reward, while the gap between what a success and a failure earn closes as soon
// as the reward changes.
//
// Input: one point per window of trajectories (action-windows.ts), each finished episode's total reward and
// success, attributed to the window of its newest step's policy version.
// Rule (our design): gap = mean reward of the window's successes − mean reward of its failures, scored when
// it holds at least `minEach` of both; early = mean gap of the first `earlyWindows` scored windows, which
// must be positive (a reward that never paid successes more has nothing to lose). With the gap's standard
// error se = √(var_s/n_s + var_f/n_f):
//   breach when gap < keep · early and keep · early − gap ≥ z · se (not a noisy window of a noisy reward),
//   clear when gap ≥ clearKeep · early.
// A bug that pays a few failures more than a success moves the means little but the ranks at once, so the
// window's rank overlap is read too: overlap = the share of (failure, success) pairs in which the failure earned
// more (ties count half; Mann–Whitney's U / (n_s · n_f)), early overlap = its mean over the same first windows
// (0 for a reward that pays every success more than every failure). With its standard error under random ranks,
// se_U = √((n_s + n_f + 1) / (12 · n_s · n_f)):
//   breach also when overlap − early overlap ≥ minRankRise and ≥ z · se_U;
//   the spell clears only when the rank overlap is back below early overlap + minRankRise / 2 as well.
// Critical: a run trained on a reward that no longer pays for success learns the wrong thing every update.
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { Checks, withDefaults } from './config-checks.js';
import { mean, std } from './rolling.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const REWARD_SUCCESS_GAP = 'reward_success_gap';

/** One finished episode: its total reward and whether it solved its task. */
export interface EpisodeOutcome {
  readonly reward: number;
  readonly success: boolean;
}

export interface RewardSuccessGapPoint {
  /** Index of the window. */
  readonly at: number;
  readonly outcomes: readonly EpisodeOutcome[];
}

export interface RewardSuccessGapConfig extends LatchConfig {
  readonly enabled: boolean;
  /** Least successes and least failures in a window for it to be scored. */
  readonly minEach: number;
  /** Scored windows whose mean gap is the early level. */
  readonly earlyWindows: number;
  /** Breach below this share of the early gap. */
  readonly keep: number;
  /** The spell clears at or above this share of the early gap. */
  readonly clearKeep: number;
  /** Standard errors the gap must lie below keep · early, and the rank overlap above its early level (a noisy reward's window does not fire). */
  readonly z: number;
  /** Least rise of the rank overlap (the share of failure–success pairs the failure out-earned) over its early level. */
  readonly minRankRise: number;
}

export const rewardSuccessGapDefaults: RewardSuccessGapConfig = Object.freeze({
  enabled: true,
  minEach: 4,
  earlyWindows: 3,
  keep: 0.5,
  clearKeep: 0.75,
  z: 4,
  minRankRise: 0.1,
  confirm: 1,
  rearmAfter: 2,
  cooldown: 5,
});

export function rewardSuccessGapConfig(overrides?: Partial<RewardSuccessGapConfig>, section = 'detectors.rewardSuccessGap'): RewardSuccessGapConfig {
  const c = withDefaults(section, rewardSuccessGapDefaults, overrides);
  const checks = new Checks(section, rewardSuccessGapDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.int('minEach', c.minEach, 2, 'least number of successful and of failed episodes in a window for it to be scored');
  checks.int('earlyWindows', c.earlyWindows, 1, 'number of first scored windows whose mean gap is the early level');
  checks.fraction('keep', c.keep, 'share of the early reward gap (success − failure) below which the alert fires');
  checks.fraction('clearKeep', c.clearKeep, 'share of the early reward gap at or above which the spell clears');
  checks.ordered('keep', c.keep, 'clearKeep', c.clearKeep, 'the spell must clear above the share that fires it (hysteresis)');
  checks.number('z', c.z, 0, 'standard errors by which the gap must lie below the firing share (and the rank overlap above its early level)');
  checks.fraction('minRankRise', c.minRankRise, 'least rise over its early level of the share of failure–success pairs in which the failure earned more');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class RewardSuccessGapDetector implements Detector<RewardSuccessGapPoint> {
  private readonly early: { gap: number; overlap: number }[] = [];
  private readonly latch: AlertLatch;

  constructor(readonly config: RewardSuccessGapConfig = rewardSuccessGapDefaults) {
    this.latch = new AlertLatch(config);
  }

  observe(point: RewardSuccessGapPoint): DetectorAlert[] {
    const c = this.config;
    const finite = point.outcomes.filter((o) => Number.isFinite(o.reward));
    const successes = finite.filter((o) => o.success).map((o) => o.reward);
    const failures = finite.filter((o) => !o.success).map((o) => o.reward);
    if (successes.length < c.minEach || failures.length < c.minEach) return [];
    const s = { mean: mean(successes), sd: std(successes) };
    const f = { mean: mean(failures), sd: std(failures) };
    const gap = s.mean - f.mean;
    const overlap = rankOverlap(failures, successes);
    if (this.early.length < c.earlyWindows) {
      this.early.push({ gap, overlap });
      return [];
    }
    const early = mean(this.early.map((e) => e.gap));
    if (!(early > 0)) return [];
    const earlyOverlap = mean(this.early.map((e) => e.overlap));
    const threshold = c.keep * early;
    const se = Math.sqrt(s.sd ** 2 / successes.length + f.sd ** 2 / failures.length);
    const seRank = Math.sqrt((successes.length + failures.length + 1) / (12 * successes.length * failures.length));
    const rise = overlap - earlyOverlap;
    const gapBreach = gap < threshold && threshold - gap >= c.z * se;
    const rankBreach = rise >= c.minRankRise && rise >= c.z * seRank;
    const state = gapBreach || rankBreach ? 'breach' : gap >= c.clearKeep * early && rise < c.minRankRise / 2 ? 'clear' : 'neutral';
    if (!this.latch.update(point.at, state)) return [];
    const why = gapBreach
      ? `a gap of ${fmt(gap)}, below ${c.keep} × its early ${fmt(early)}`
      : `${fmt(100 * overlap)} % of failure–success pairs ranked the failure higher, against ${fmt(100 * earlyOverlap)} % early`;
    return [
      {
        kind: REWARD_SUCCESS_GAP,
        severity: 'critical',
        at: point.at,
        value: gapBreach ? gap : overlap,
        threshold: gapBreach ? threshold : earlyOverlap + Math.max(c.minRankRise, c.z * seRank),
        message:
          `the reward stopped paying for success: failed episodes earned ${fmt(f.mean)} on average against ${fmt(s.mean)} for successful ones ` +
          `(${why}) — a reward bug, or reward hacking`,
        evidence: {
          gap,
          early,
          successRewardMean: s.mean,
          failureRewardMean: f.mean,
          successes: successes.length,
          failures: failures.length,
          standardError: se,
          rankOverlap: overlap,
          earlyRankOverlap: earlyOverlap,
        },
      },
    ];
  }
}

/** The share of (failure, success) pairs in which the failure earned more, ties counting half. */
function rankOverlap(failures: readonly number[], successes: readonly number[]): number {
  let above = 0;
  for (const f of failures) for (const s of successes) above += f > s ? 1 : f === s ? 0.5 : 0;
  return above / (failures.length * successes.length);
}

// The run's progress, read from one reward mean per point of a detector's own topic (rollout batches'
// `rewardMean`, learner steps' `batch.rewardMean`): whether the run has gained clearly over its start and still
// keeps most of that gain. Convergence shows the Echo Trap's first signs — groups agree, entropy falls, replies
// grow alike — because the policy solves its tasks; while the run is improving those signs are not a collapse,
// and the detectors that read them hold their fire (docs/collapse-detectors.md).
//
// Rule (our design): early = mean of the first `earlyPoints` reward means, noise = their standard deviation;
// recent = mean of the last `recent`; peak = the highest recent level so far.
//   improving when recent − early ≥ minGain · max(noise, minNoise · max(|early|, 1)) and
//                   recent ≥ peak − (1 − keepGain) · (peak − early).
// The reward's own topic feeds it, so what a detector decides never depends on how topics interleave.
import type { PointState } from './alert-latch.js';
import { Checks, withDefaults } from './config-checks.js';
import { Window, mean, std } from './rolling.js';

export interface ProgressConfig {
  /** Reward means whose mean (and standard deviation) is the early level. */
  readonly earlyPoints: number;
  /** Newest reward means averaged into the recent level. */
  readonly recent: number;
  /** The gain over the early level that counts, in early standard deviations. */
  readonly minGain: number;
  /** Least noise, as a fraction of max(|early|, 1): a flat early stretch does not make every wobble a gain. */
  readonly minNoise: number;
  /** Share of its best gain the run must keep to count as improving. */
  readonly keepGain: number;
}

export const progressDefaults: ProgressConfig = Object.freeze({ earlyPoints: 5, recent: 5, minGain: 3, minNoise: 0.02, keepGain: 0.75 });

export function progressConfig(overrides?: Partial<ProgressConfig>, section = 'detectors.progress'): ProgressConfig {
  const c = withDefaults(section, progressDefaults, overrides);
  const checks = new Checks(section, progressDefaults);
  checks.int('earlyPoints', c.earlyPoints, 2, 'number of first reward means whose mean and spread are the early level');
  checks.int('recent', c.recent, 1, 'number of newest reward means averaged into the recent level');
  checks.number('minGain', c.minGain, 0, 'gain over the early level that counts as progress, in early standard deviations', { exclusive: true });
  checks.number('minNoise', c.minNoise, 0, 'least early noise, as a fraction of max(|early|, 1)');
  checks.fraction('keepGain', c.keepGain, 'share of its best gain the run must keep to count as improving');
  return Object.freeze(c);
}

export class ProgressTrend {
  private readonly early: number[] = [];
  private readonly latest: Window;
  private peak = Number.NEGATIVE_INFINITY;

  constructor(readonly config: ProgressConfig = progressDefaults) {
    this.latest = new Window(config.recent);
  }

  /** Adds one reward mean (non-finite ones are skipped) and says whether the run is now improving. */
  push(rewardMean: number | undefined): boolean {
    if (rewardMean !== undefined && Number.isFinite(rewardMean)) {
      if (this.early.length < this.config.earlyPoints) this.early.push(rewardMean);
      this.latest.push(rewardMean);
      if (this.latest.full) this.peak = Math.max(this.peak, mean(this.latest.values()));
    }
    return this.improving;
  }

  get improving(): boolean {
    const l = this.levels();
    return l !== null && l.recent - l.early >= this.config.minGain * l.noise && l.recent >= this.peak - (1 - this.config.keepGain) * (this.peak - l.early);
  }

  /**
   * The run gained clearly over its start at its best and has since given back more than (1 − keepGain) of that
   * gain; undefined while too few reward means are known (a source without them never holds a detector's fire).
   */
  get declining(): boolean | undefined {
    const l = this.levels();
    if (l === null) return undefined;
    const gain = this.peak - l.early;
    return gain >= this.config.minGain * l.noise && l.recent < this.peak - (1 - this.config.keepGain) * gain;
  }

  /** The early level, its noise (floored) and the recent level; null until both windows are full. */
  private levels(): { early: number; noise: number; recent: number } | null {
    const c = this.config;
    if (this.early.length < c.earlyPoints || !this.latest.full) return null;
    const early = mean(this.early);
    return { early, noise: Math.max(std(this.early), c.minNoise * Math.max(Math.abs(early), 1)), recent: mean(this.latest.values()) };
  }
}

/** A breach while the run is improving is a sign of convergence: neither a fire nor a clear. */
export function heldWhileImproving(state: PointState, improving: boolean | undefined): PointState {
  return improving === true && state === 'breach' ? 'neutral' : state;
}

/** A breach while the run keeps what it gained is no loss of it: neither a fire nor a clear. */
export function heldUnlessDeclining(state: PointState, declining: boolean | undefined): PointState {
  return declining === false && state === 'breach' ? 'neutral' : state;
}

/** A breach where (nearly) every episode succeeds is convergence on solved tasks: neither a fire nor a clear. */
export function heldWhenSolved(state: PointState, successRate: number | undefined, solvedSuccessRate: number): PointState {
  return state === 'breach' && successRate !== undefined && successRate >= solvedSuccessRate ? 'neutral' : state;
}

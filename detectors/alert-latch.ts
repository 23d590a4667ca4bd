// The alert latch: one alert per spell of a condition (not per breaching point), by hysteresis and cooldown,
// shared by every detector.
//
// Each point is classified by the detector as
//   'breach'    — the alert condition holds,
//   'clear'     — the signal is back on the healthy side of the (looser) clear threshold,
//   'neutral'   — between the two thresholds, or not enough data to say.
// The latch fires when `confirm` consecutive points breach while it is armed. It then stays active,
// whatever the points say, until `rearmAfter` consecutive points are 'clear' *and* at least `cooldown`
// units (learner steps, batches, windows: the `at` of the points) have passed since it fired. A breach
// that returns sooner is the same spell and stays silent.
import { ConfigError } from '../core/errors.js';
import type { Checks } from './config-checks.js';

export type PointState = 'breach' | 'clear' | 'neutral';

export interface LatchConfig {
  /** Consecutive breaching points needed to fire (1 = fire on the first). */
  readonly confirm: number;
  /** Consecutive clear points needed before the latch can fire again. */
  readonly rearmAfter: number;
  /** Least distance, in the points' `at` units, between two alerts of one detector. */
  readonly cooldown: number;
}

/** Checks the latch fields of a detector's config (section names the detector in messages). */
export function checkLatch(checks: Checks, config: LatchConfig): void {
  checks.int('confirm', config.confirm, 1, 'consecutive breaching points before the alert fires; 1 fires at once, more waits out single noisy points');
  checks.int('rearmAfter', config.rearmAfter, 1, 'consecutive healthy points before the detector may fire again');
  checks.int('cooldown', config.cooldown, 0, 'least distance (in updates, batches or windows) between two alerts of the detector; 0 for none');
}

export class AlertLatch {
  private active = false;
  private breachRun = 0;
  private clearRun = 0;
  private lastFiredAt: number | null = null;

  constructor(private readonly config: LatchConfig) {
    if (config.confirm < 1 || config.rearmAfter < 1 || config.cooldown < 0) throw new ConfigError('AlertLatch: confirm and rearmAfter must be ≥ 1 and cooldown ≥ 0');
  }

  /** True while an episode is open (fired and not re-armed yet). */
  get isActive(): boolean {
    return this.active;
  }

  /** Feeds one point; true when the alert fires at this point. */
  update(at: number, state: PointState): boolean {
    if (state === 'breach') {
      this.clearRun = 0;
      this.breachRun++;
      if (!this.active && this.breachRun >= this.config.confirm) {
        this.active = true;
        this.lastFiredAt = at;
        return true;
      }
      return false;
    }
    this.breachRun = 0;
    if (state === 'neutral') {
      this.clearRun = 0;
      return false;
    }
    this.clearRun++;
    if (this.active && this.clearRun >= this.config.rearmAfter && (this.lastFiredAt === null || at - this.lastFiredAt >= this.config.cooldown)) {
      this.active = false;
    }
    return false;
  }
}

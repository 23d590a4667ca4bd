// Policy-shift spike: one update moved the policy far from the one that collected its batch.
//
// Input: one point per learner update, the learner_step event's metrics.ppoKl — the masked mean over the
// update's minibatch steps of log π_old − log π_θ on the batch's action tokens (verl's ppo_kl, a k1
// estimate of KL(π_old ‖ π_θ) in nats; each minibatch measures it before its own step, so later ones see
// how far the earlier steps of the same update went).
// Rule: breach when ppoKl > maxKl (default 1 nat), clear when ≤ clearKl (0.5); one alert per episode.
// Why: PPO's clip stops the gradient of tokens whose ratio left [1 − ε, 1 + ε], but several epochs and
// minibatches at a high learning rate can still carry the policy far away in one update; common PPO
// implementations stop an update's epochs at a target KL of 0.01–0.05. In `bench collapse` the collapses
// that gave the other detectors no precursor were single updates with a PPO-KL above 1 nat, while the runs
// that did not fall stayed well below it: the default sits between the two (docs/results/collapse.md). The
// alert comes with the update, before the rollouts of the changed policy show the fall.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const POLICY_SHIFT_SPIKE = 'policy_shift_spike';

export interface PolicyShiftPoint {
  /** Learner step. */
  readonly at: number;
  /** The update's PPO-KL (nats). */
  readonly ppoKl: number;
}

export interface PolicyShiftConfig extends LatchConfig {
  readonly enabled: boolean;
  /** PPO-KL (nats) above which an update is a policy-shift spike. */
  readonly maxKl: number;
  /** The episode clears when PPO-KL is back at or below this. */
  readonly clearKl: number;
}

export const policyShiftDefaults: PolicyShiftConfig = Object.freeze({
  enabled: true,
  maxKl: 1,
  clearKl: 0.5,
  confirm: 1,
  rearmAfter: 3,
  cooldown: 10,
});

export function policyShiftConfig(overrides?: Partial<PolicyShiftConfig>, section = 'detectors.policyShift'): PolicyShiftConfig {
  const c = withDefaults(section, policyShiftDefaults, overrides);
  const checks = new Checks(section, policyShiftDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checks.number('maxKl', c.maxKl, 0, 'PPO-KL in nats above which one update moved the policy too far', { exclusive: true });
  checks.number('clearKl', c.clearKl, 0, 'PPO-KL in nats at or below which the episode clears');
  checks.ordered('clearKl', c.clearKl, 'maxKl', c.maxKl, 'the episode must clear below the KL that fires it (hysteresis)');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class PolicyShiftDetector implements Detector<PolicyShiftPoint> {
  private readonly latch: AlertLatch;

  constructor(readonly config: PolicyShiftConfig = policyShiftDefaults) {
    this.latch = new AlertLatch(config);
  }

  observe(point: PolicyShiftPoint): DetectorAlert[] {
    const x = point.ppoKl;
    const c = this.config;
    if (!Number.isFinite(x)) return []; // the 'nan' detector reports non-finite learner values
    const state = x > c.maxKl ? 'breach' : x <= c.clearKl ? 'clear' : 'neutral';
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: POLICY_SHIFT_SPIKE,
        severity: 'warning',
        at: point.at,
        value: x,
        threshold: c.maxKl,
        message:
          `update ${point.at} moved the policy ${fmt(x)} nats (PPO-KL) from the one that collected its batch, above ${fmt(c.maxKl)}: ` +
          `the clip did not hold it; single updates this large preceded falls in success (lower the learning rate or the epochs, or stop an update's epochs at a target KL)`,
        evidence: { ppoKl: x, maxKl: c.maxKl },
      },
    ];
  }
}

// Non-finite learner metrics ('nan'): a loss, entropy, KL or gradient norm that is NaN or infinite means
// the update diverged (verl skips such a step and zeroes the gradients, docs/algorithms.md §8; the other
// detectors skip such points). Rule: breach when any watched field is not finite, clear when all are.
// Severity critical. One alert per episode: a run that keeps producing NaN alerts once until it recovers.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import type { Detector, DetectorAlert } from './types.js';

export const NON_FINITE = 'nan';

export interface NonFinitePoint {
  /** Learner step. */
  readonly at: number;
  /** The watched metrics by name. */
  readonly values: Readonly<Record<string, number>>;
}

export interface NonFiniteConfig extends LatchConfig {
  readonly enabled: boolean;
}

export const nonFiniteDefaults: NonFiniteConfig = Object.freeze({ enabled: true, confirm: 1, rearmAfter: 1, cooldown: 10 });

export function nonFiniteConfig(overrides?: Partial<NonFiniteConfig>, section = 'detectors.nonFinite'): NonFiniteConfig {
  const c = withDefaults(section, nonFiniteDefaults, overrides);
  const checks = new Checks(section, nonFiniteDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class NonFiniteDetector implements Detector<NonFinitePoint> {
  private readonly latch: AlertLatch;

  constructor(readonly config: NonFiniteConfig = nonFiniteDefaults) {
    this.latch = new AlertLatch(config);
  }

  observe(point: NonFinitePoint): DetectorAlert[] {
    const bad = Object.entries(point.values).filter(([, v]) => !Number.isFinite(v));
    if (!this.latch.update(point.at, bad.length > 0 ? 'breach' : 'clear')) return [];
    const [firstName, firstValue] = bad[0]!;
    return [
      {
        kind: NON_FINITE,
        severity: 'critical',
        at: point.at,
        value: firstValue,
        threshold: 0,
        message: `learner metrics are not finite (${bad.map(([name, v]) => `${name} = ${v}`).join(', ')}): the update diverged; ${firstName} first`,
        evidence: Object.fromEntries(bad),
      },
    ];
  }
}

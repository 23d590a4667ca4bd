// Repetition across different inputs: the same action text produced for different states — RAGEN v1's
// Echo Trap ("reasoning converges to repeated, templated phrasing", docs/algorithms.md §4.3) seen directly.
//
// Input: windows of (input, action) pairs (action-windows.ts). The rate of a window is the fraction of its
// steps whose exact (trimmed) action text also occurs for another input in the same window.
// Rule (our design): early = mean rate of the run's first `earlyWindows` scored windows;
//   breach when rate > early + delta, clear when rate ≤ early + clearDelta.
// Environments whose actions are a few fixed words (Bandit, FrozenLake without reasoning) repeat across
// states by nature; their early rate is near 1, so the rule cannot fire there — as intended. A breach in a
// window whose episodes succeed at ≥ solvedSuccessRate holds its fire, as template collapse's does.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import type { ActionPair } from './action-windows.js';
import { heldWhenSolved } from './progress.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const ACTION_REPETITION = 'action_repetition';

/** Fraction of pairs whose action text also occurs under another input. */
export function crossInputRepetition(pairs: readonly ActionPair[]): { rate: number; distinctActions: number } {
  const inputsOf = new Map<string, Set<string>>();
  for (const pair of pairs) {
    const inputs = inputsOf.get(pair.action);
    if (inputs) inputs.add(pair.input);
    else inputsOf.set(pair.action, new Set([pair.input]));
  }
  if (pairs.length === 0) return { rate: 0, distinctActions: 0 };
  const repeated = pairs.filter((pair) => inputsOf.get(pair.action)!.size > 1).length;
  return { rate: repeated / pairs.length, distinctActions: inputsOf.size };
}

export interface RepetitionWindowPoint {
  readonly at: number;
  readonly pairs: readonly ActionPair[];
  /** Share of the window's finished episodes that succeeded, when it has any. */
  readonly successRate?: number;
}

export interface ActionRepetitionConfig extends LatchConfig {
  readonly enabled: boolean;
  readonly earlyWindows: number;
  /** Fire when the rate exceeds its early level by more than this. */
  readonly delta: number;
  /** The episode clears when the rate is back within this of its early level. */
  readonly clearDelta: number;
  /** No breach counts in a window whose episodes succeed at least this often (the tasks are solved). */
  readonly solvedSuccessRate: number;
}

export const actionRepetitionDefaults: ActionRepetitionConfig = Object.freeze({
  enabled: true,
  earlyWindows: 3,
  delta: 0.3,
  clearDelta: 0.1,
  solvedSuccessRate: 0.95,
  confirm: 2,
  rearmAfter: 2,
  cooldown: 5,
});

export function actionRepetitionConfig(overrides?: Partial<ActionRepetitionConfig>, section = 'detectors.actionRepetition'): ActionRepetitionConfig {
  const c = withDefaults(section, actionRepetitionDefaults, overrides);
  const checks = new Checks(section, actionRepetitionDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector (it reads the trajectories topic)');
  checks.int('earlyWindows', c.earlyWindows, 1, 'number of first scored windows whose mean repetition rate is the early level');
  checks.fraction('delta', c.delta, 'rise of the cross-input repetition rate over its early level that fires the alert');
  checks.number('clearDelta', c.clearDelta, 0, 'rise over the early level at or below which the episode clears');
  checks.ordered('clearDelta', c.clearDelta, 'delta', c.delta, 'the episode must clear below the rise that fires it (hysteresis)');
  checks.fraction('solvedSuccessRate', c.solvedSuccessRate, 'success rate of a window from which one action for every input counts as the answer, not a collapse');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class ActionRepetitionDetector implements Detector<RepetitionWindowPoint> {
  private readonly early: number[] = [];
  private readonly latch: AlertLatch;

  constructor(readonly config: ActionRepetitionConfig = actionRepetitionDefaults) {
    this.latch = new AlertLatch(config);
  }

  observe(point: RepetitionWindowPoint): DetectorAlert[] {
    const c = this.config;
    const { rate, distinctActions } = crossInputRepetition(point.pairs);
    if (this.early.length < c.earlyWindows) {
      this.early.push(rate);
      return [];
    }
    const early = this.early.reduce((a, b) => a + b, 0) / this.early.length;
    const threshold = early + c.delta;
    const state = heldWhenSolved(rate > threshold ? 'breach' : rate <= early + c.clearDelta ? 'clear' : 'neutral', point.successRate, c.solvedSuccessRate);
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: ACTION_REPETITION,
        severity: 'warning',
        at: point.at,
        value: rate,
        threshold,
        message: `${fmt(100 * rate)}% of the actions repeat word for word across different inputs (${distinctActions} distinct actions in ${point.pairs.length} steps), up from ${fmt(100 * early)}% early in the run`,
        evidence: { rate, early, distinctActions, steps: point.pairs.length },
      },
    ];
  }
}

// Template collapse (RAGEN-2, docs/algorithms.md §5): outputs stay diverse within an input but stop depending
// on the input — mutual information I(X;Z) falls while H(Z|X) stays up, so entropy cannot see it.
//
// RAGEN-2 estimates I(X;Z) on the learner by cross-scoring every sampled reasoning under every prompt of
// the batch (teacher-forced log-probs). That needs the policy and is out of scope here. This detector is a
// cheap, model-free proxy computed from the trajectories alone:
//   X = the step's input (stateKey, else a hash of the observation), Z = one token drawn uniformly from the
//   step's action tokens; counts n(x, t) over every action token of a window of policy versions;
//   I  = H(X) + H(T) − H(X,T), plug-in entropies with the Miller–Madow correction (B − 1)/(2N) on each
//        (B = occupied cells, N = tokens), which removes most of the small-sample upward bias of plug-in MI;
//   U  = I / H(X) ∈ [0, 1]: the share of the input's entropy the action tokens reveal, so windows that
//        visit fewer or more states stay comparable.
// A policy whose words depend on the state (it talks about "row 2, column 3" there and about the box
// elsewhere) has U well above 0; a template emitted whatever the input has U ≈ 0, however varied it is.
// A unigram proxy misses dependence carried by word order only; it is a trend signal, not an estimate of
// RAGEN-2's I(X;Z).
//
// Rule (our design): early = mean U of the run's first `earlyWindows` scored windows;
//   breach when U < fraction · early, clear when U ≥ clearFraction · early; none while early < minEarly.
// confirm (default 2) consecutive windows before firing: one window is a small sample.
// A breach in a window whose finished episodes succeed at ≥ solvedSuccessRate is neither a fire nor a clear:
// one action for every input that solves the tasks is the answer (a bandit's best arm), not a collapse.
import { Checks, withDefaults } from './config-checks.js';
import { checkLatch, AlertLatch, type LatchConfig } from './alert-latch.js';
import { heldWhenSolved } from './progress.js';
import type { ActionPair } from './action-windows.js';
import { fmt, type Detector, type DetectorAlert } from './types.js';

export const TEMPLATE_COLLAPSE = 'template_collapse';

export interface InputDependence {
  /** Miller–Madow corrected I(X;T) in nats (may be slightly negative from noise). */
  readonly mi: number;
  /** Plug-in I(X;T) in nats. */
  readonly miPlugin: number;
  /** H(X) in nats (token-weighted input distribution). */
  readonly inputEntropy: number;
  /** H(T) in nats (the token distribution). */
  readonly tokenEntropy: number;
  /** mi / inputEntropy (0 when inputEntropy is 0). */
  readonly dependence: number;
  readonly tokens: number;
  readonly inputs: number;
  readonly distinctTokens: number;
}

function entropyOf(counts: Iterable<number>, total: number): { h: number; occupied: number } {
  let h = 0;
  let occupied = 0;
  for (const n of counts) {
    if (n === 0) continue;
    occupied++;
    const p = n / total;
    h -= p * Math.log(p);
  }
  return { h, occupied };
}

/** The input-dependence statistics of a window's pairs. */
export function inputDependence(pairs: readonly ActionPair[]): InputDependence {
  const byInput = new Map<string, number>();
  const byToken = new Map<number, number>();
  const joint = new Map<string, number>();
  let total = 0;
  for (const pair of pairs) {
    for (const token of pair.tokens) {
      total++;
      byInput.set(pair.input, (byInput.get(pair.input) ?? 0) + 1);
      byToken.set(token, (byToken.get(token) ?? 0) + 1);
      const key = `${token}\u0000${pair.input}`;
      joint.set(key, (joint.get(key) ?? 0) + 1);
    }
  }
  if (total === 0) return { mi: 0, miPlugin: 0, inputEntropy: 0, tokenEntropy: 0, dependence: 0, tokens: 0, inputs: 0, distinctTokens: 0 };
  const hx = entropyOf(byInput.values(), total);
  const ht = entropyOf(byToken.values(), total);
  const hxt = entropyOf(joint.values(), total);
  const miPlugin = hx.h + ht.h - hxt.h;
  const mi = miPlugin + (hx.occupied - 1 + (ht.occupied - 1) - (hxt.occupied - 1)) / (2 * total);
  return {
    mi,
    miPlugin,
    inputEntropy: hx.h,
    tokenEntropy: ht.h,
    dependence: hx.h > 0 ? mi / hx.h : 0,
    tokens: total,
    inputs: hx.occupied,
    distinctTokens: ht.occupied,
  };
}

export interface TemplateWindowPoint {
  /** Window index. */
  readonly at: number;
  readonly pairs: readonly ActionPair[];
  /** Share of the window's finished episodes that succeeded, when it has any. */
  readonly successRate?: number;
}

export interface TemplateCollapseConfig extends LatchConfig {
  readonly enabled: boolean;
  /** The first this many scored windows define the early input dependence. */
  readonly earlyWindows: number;
  /** Fire when U is below this fraction of its early level. */
  readonly fraction: number;
  /** The episode clears at this fraction of the early level. */
  readonly clearFraction: number;
  /** Early U below this means the actions never depended on the input: no alerts. */
  readonly minEarly: number;
  /** No breach counts in a window whose episodes succeed at least this often (the tasks are solved). */
  readonly solvedSuccessRate: number;
}

export const templateCollapseDefaults: TemplateCollapseConfig = Object.freeze({
  enabled: true,
  earlyWindows: 3,
  fraction: 0.4,
  clearFraction: 0.6,
  minEarly: 0.01,
  solvedSuccessRate: 0.95,
  confirm: 2,
  rearmAfter: 2,
  cooldown: 5,
});

export function templateCollapseConfig(overrides?: Partial<TemplateCollapseConfig>, section = 'detectors.templateCollapse'): TemplateCollapseConfig {
  const c = withDefaults(section, templateCollapseDefaults, overrides);
  const checks = new Checks(section, templateCollapseDefaults);
  checks.boolean('enabled', c.enabled, 'switch for this detector (it reads the trajectories topic)');
  checks.int('earlyWindows', c.earlyWindows, 1, 'number of first scored windows whose mean input dependence is the early level');
  checks.fraction('fraction', c.fraction, 'share of the early input dependence below which template collapse fires');
  checks.fraction('clearFraction', c.clearFraction, 'share of the early input dependence at which the episode clears');
  checks.ordered('fraction', c.fraction, 'clearFraction', c.clearFraction, 'the episode must clear above the level that fires it (hysteresis)');
  checks.number('minEarly', c.minEarly, 0, 'least early input dependence (I/H(X)) the rule compares against');
  checks.fraction('solvedSuccessRate', c.solvedSuccessRate, 'success rate of a window from which one action for every input counts as the answer, not a collapse');
  checkLatch(checks, c);
  return Object.freeze(c);
}

export class TemplateCollapseDetector implements Detector<TemplateWindowPoint> {
  private readonly early: number[] = [];
  private readonly latch: AlertLatch;

  constructor(readonly config: TemplateCollapseConfig = templateCollapseDefaults) {
    this.latch = new AlertLatch(config);
  }

  observe(point: TemplateWindowPoint): DetectorAlert[] {
    const c = this.config;
    const stats = inputDependence(point.pairs);
    if (stats.inputEntropy === 0) return [];
    if (this.early.length < c.earlyWindows) {
      this.early.push(stats.dependence);
      return [];
    }
    const early = this.early.reduce((a, b) => a + b, 0) / this.early.length;
    if (early < c.minEarly) return [];
    const threshold = c.fraction * early;
    const u = stats.dependence;
    const state = heldWhenSolved(u < threshold ? 'breach' : u >= c.clearFraction * early ? 'clear' : 'neutral', point.successRate, c.solvedSuccessRate);
    if (!this.latch.update(point.at, state)) return [];
    return [
      {
        kind: TEMPLATE_COLLAPSE,
        severity: 'warning',
        at: point.at,
        value: u,
        threshold,
        message:
          `actions stopped depending on the input: the action tokens reveal ${fmt(u)} of the input entropy (I(X;T)/H(X), ${stats.inputs} inputs, ${stats.tokens} tokens), ` +
          `below ${c.fraction} × its early level ${fmt(early)}, while the token entropy is ${fmt(stats.tokenEntropy)} nats — a template-collapse proxy (RAGEN-2)`,
        evidence: {
          dependence: u,
          early,
          mi: stats.mi,
          miPlugin: stats.miPlugin,
          inputEntropy: stats.inputEntropy,
          tokenEntropy: stats.tokenEntropy,
          tokens: stats.tokens,
          inputs: stats.inputs,
          distinctTokens: stats.distinctTokens,
          steps: point.pairs.length,
        },
      },
    ];
  }
}

// `trajflow bench learning --diagnose`: what one in-process run's updates are made of, iteration by iteration —
// the advantage signal the action tokens receive, how it lines up with the BFS-optimal action, the gradient per
// layer, and the policy's behaviour on fixed probe states (does its choice depend on the map at all?). The
// measurements behind docs/results/learning-diagnosis.md.
import { goalDistances, lakeMove, type LakeMap, type Tile } from '../envs/frozen-lake-map.js';
import { EVAL_SEEDS } from '../envs/seeds.js';
import { Rng } from '../core/rng.js';
import type { PolicyBundle } from '../learner/policy/bundle.js';
import type { BatchOutput, RawGroup } from '../processors/pipeline/process-batch.js';
import { SpecialToken } from '../tokenizer/word-pieces.js';
import { lakeOptimalActions, sokobanDistances, sokobanOptimalActions } from './supervised-labels.js';
import { Cell } from '../envs/sokoban-room.js';
import { supervisedTask, type LabelledState } from './supervised-states.js';
import { replyProbabilities } from './supervised-train.js';

/** What the processors handed the learner in one iteration. */
export interface SignalDiagnosis {
  /** Share of groups whose trajectories all scored the same (no episode-level signal). */
  readonly zeroVarianceGroups: number;
  /** Share of groups where at least one rollout succeeded, and where every rollout failed. */
  readonly groupsWithSuccess: number;
  readonly groupsAllFailed: number;
  /** Loss tokens that are action words, and the other loss tokens (EOS and separators: formatting). */
  readonly actionTokens: number;
  readonly formatTokens: number;
  readonly meanAbsAdvantageAction: number;
  readonly meanAbsAdvantageFormat: number;
  /** Share of action tokens whose advantage is exactly 0 (no gradient from them). */
  readonly zeroAdvantageActions: number;
  /** Share of steps whose reply the environment refused. */
  readonly invalidReplies: number;
  /** FrozenLake and Sokoban (null elsewhere): Pearson correlation of a step's advantage with "the action was BFS-optimal". */
  readonly advantageOptimalCorrelation: number | null;
  /** FrozenLake and Sokoban: of the steps with a positive advantage, the share whose action was optimal; likewise negative. */
  readonly optimalAmongPositive: number | null;
  readonly optimalAmongNegative: number | null;
  /** FrozenLake and Sokoban: share of the sampled actions that were optimal. */
  readonly optimalActionsTaken: number | null;
}

const ACTIONS = ['Left', 'Down', 'Right', 'Up'];

/** The map and player of a FrozenLake observation as the environment renders it; null for anything else (a finished state). */
export function parseLakeObservation(observation: string): { map: LakeMap; player: number } | null {
  const rows = observation.split('\n');
  const size = rows.length;
  if (size < 2 || rows.some((r) => [...r].length !== size)) return null;
  const cells = rows.flatMap((r) => [...r]);
  const player = cells.indexOf('P');
  const goal = cells.indexOf('G');
  if (player < 0 || goal < 0) return null;
  const tiles = cells.map((c): Tile => (c === 'O' ? 'H' : c === 'G' ? 'G' : 'F'));
  return { map: { size, tiles, start: player, goal }, player };
}

/** The BFS-optimal actions (indices into Left, Down, Right, Up) from a FrozenLake observation; null when it is not one. */
function optimalFrom(observation: string): number[] | null {
  const parsed = parseLakeObservation(observation);
  return parsed ? lakeOptimalActions(parsed.map, goalDistances(parsed.map), parsed.player) : null;
}

const SOKOBAN_FIXED: Record<string, number> = { '#': Cell.wall, _: Cell.floor, O: Cell.target, '√': Cell.target, X: Cell.floor, P: Cell.floor, S: Cell.target };

/** The BFS-optimal actions (indices into Up, Down, Left, Right) from a Sokoban observation; null when it is not one. */
export function sokobanOptimalFrom(observation: string): number[] | null {
  const rows = observation.split('\n').map((r) => [...r]);
  const cols = rows[0]?.length ?? 0;
  if (rows.length < 3 || rows.some((r) => r.length !== cols)) return null;
  const cells = rows.flat();
  if (cells.some((c) => SOKOBAN_FIXED[c] === undefined)) return null;
  const player = cells.findIndex((c) => c === 'P' || c === 'S');
  const boxes = cells.flatMap((c, i) => (c === 'X' || c === '√' ? [i] : []));
  if (player < 0 || boxes.length === 0) return null;
  const layout = { rows: rows.length, cols, fixed: cells.map((c) => SOKOBAN_FIXED[c]!) };
  const state = { player, boxes };
  return sokobanOptimalActions(layout, sokobanDistances(layout, state), state);
}
const SOKOBAN_ACTIONS = ['Up', 'Down', 'Left', 'Right'];

function pearson(xs: readonly number[], ys: readonly number[]): number | null {
  const n = xs.length;
  if (n < 2) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (xs[i]! - mx) * (ys[i]! - my);
    sxx += (xs[i]! - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  }
  return sxx === 0 || syy === 0 ? null : sxy / Math.sqrt(sxx * syy);
}

const share = (part: number, whole: number): number | null => (whole === 0 ? null : part / whole);

/** The iteration's signal: groups' variance, advantages by token kind, and (FrozenLake, Sokoban) against the optimal action. */
export function diagnoseSignal(groups: readonly RawGroup[], output: BatchOutput, env: string, actionIds: ReadonlySet<number>): SignalDiagnosis {
  const zeroVariance = groups.filter((g) => new Set(g.trajectories.map((t) => t.totalReward)).size <= 1).length;
  const withSuccess = groups.filter((g) => g.trajectories.some((t) => t.success)).length;
  const action: number[] = [];
  const format: number[] = [];
  // Per step: the advantage on its first action token, and whether that action was optimal.
  const stepAdvantage = new Map<string, number[]>();
  for (const sample of output.samples) {
    const firstActionPerStep: number[] = [];
    let previousMasked = false;
    sample.tokenIds.forEach((id, i) => {
      const masked = sample.lossMask[i] === 1;
      if (masked && actionIds.has(id)) action.push(Math.abs(sample.advantages[i]!));
      else if (masked) format.push(Math.abs(sample.advantages[i]!));
      // A reply starts at a masked token after an unmasked one (the prompt); its first token is the step's first action.
      if (masked && !previousMasked && id !== SpecialToken.EOS) firstActionPerStep.push(sample.advantages[i]!);
      previousMasked = masked;
    });
    stepAdvantage.set(sample.episodeId, firstActionPerStep);
  }
  const steps = groups.flatMap((g) => g.trajectories.flatMap((t) => t.steps));
  const invalid = steps.filter((s) => !s.actionValid).length;
  const advantages: number[] = [];
  const optimal: number[] = [];
  if (env === 'FrozenLake' || env === 'Sokoban') {
    const words = env === 'FrozenLake' ? ACTIONS : SOKOBAN_ACTIONS;
    const optimalOf = env === 'FrozenLake' ? optimalFrom : sokobanOptimalFrom;
    for (const t of groups.flatMap((g) => g.trajectories)) {
      const advs = stepAdvantage.get(t.episodeId) ?? [];
      t.steps.forEach((step, k) => {
        const best = optimalOf(step.observation);
        const taken = words.indexOf(/<answer>\s*(\w+)/.exec(step.action)?.[1] ?? '');
        if (best === null || best.length === 0 || taken < 0 || advs[k] === undefined) return;
        advantages.push(advs[k]!);
        optimal.push(best.includes(taken) ? 1 : 0);
      });
    }
  }
  const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const lake = env === 'FrozenLake' || env === 'Sokoban';
  const positive = advantages.map((a, i) => [a, optimal[i]!] as const).filter(([a]) => a > 0);
  const negative = advantages.map((a, i) => [a, optimal[i]!] as const).filter(([a]) => a < 0);
  return {
    zeroVarianceGroups: zeroVariance / Math.max(1, groups.length),
    groupsWithSuccess: withSuccess / Math.max(1, groups.length),
    groupsAllFailed: groups.filter((g) => g.trajectories.every((t) => !t.success)).length / Math.max(1, groups.length),
    actionTokens: action.length,
    formatTokens: format.length,
    meanAbsAdvantageAction: mean(action),
    meanAbsAdvantageFormat: mean(format),
    zeroAdvantageActions: share(action.filter((a) => a === 0).length, action.length) ?? 0,
    invalidReplies: share(invalid, steps.length) ?? 0,
    advantageOptimalCorrelation: lake ? pearson(advantages, optimal) : null,
    optimalAmongPositive: lake ? share(positive.filter(([, o]) => o === 1).length, positive.length) : null,
    optimalAmongNegative: lake ? share(negative.filter(([, o]) => o === 1).length, negative.length) : null,
    optimalActionsTaken: lake ? share(optimal.filter((o) => o === 1).length, optimal.length) : null,
  };
}

/** The policy on fixed held-out states. */
export interface ProbeDiagnosis {
  /** Mean probability the policy gives the optimal actions (together). */
  readonly pOptimal: number;
  /** Share of states whose most likely action is optimal. */
  readonly greedyOptimal: number;
  /** Mean entropy of the policy per state, H(A | S), nats. */
  readonly conditionalEntropy: number;
  /** Entropy of the policy averaged over the states, H(A), nats; H(A) − H(A | S) is how much the action depends on the state. */
  readonly marginalEntropy: number;
  readonly mutualInformation: number;
  /** The average action distribution over the states (Left, Down, Right, Up for FrozenLake). */
  readonly marginal: readonly number[];
  /** FrozenLake only: of the states whose most likely action is not optimal, where that action leads — into a hole, into the edge (no move), or elsewhere. */
  readonly greedyErrors: { readonly hole: number; readonly edge: number; readonly other: number } | null;
}

/** States whose optimal actions are known (BFS), held out from training, the same for every run of an env. */
export function probeStates(env: string, envOptions: Record<string, unknown>, count: number): LabelledState[] | null {
  if (env !== 'FrozenLake' && env !== 'Sokoban') return null;
  const task = supervisedTask(env, envOptions);
  const rng = new Rng(20_261_205);
  return Array.from({ length: count }, (_, i) => task.draw(EVAL_SEEDS.first + 700_000_000 + i, rng));
}

const entropy = (p: readonly number[]): number => -p.reduce((s, x) => s + (x > 0 ? x * Math.log(x) : 0), 0);

export function probePolicy(bundle: PolicyBundle, states: readonly LabelledState[]): ProbeDiagnosis {
  // Drop EOS (index 0): masked at ACT by nonEmptyReplies, and an action-less reply otherwise.
  const probs = replyProbabilities(bundle, states).map((p) => p.slice(1));
  const width = probs[0]!.length;
  const marginal = Array.from({ length: width }, (_, a) => probs.reduce((s, p) => s + p[a]!, 0) / probs.length);
  const conditionalEntropy = probs.reduce((s, p) => s + entropy(p), 0) / probs.length;
  const marginalEntropy = entropy(marginal);
  const greedy = probs.map((p) => p.indexOf(Math.max(...p)));
  return {
    greedyErrors: greedyErrorKinds(states, greedy),
    pOptimal: states.reduce((s, st, i) => s + st.optimal.reduce((q, a) => q + probs[i]![a]!, 0), 0) / states.length,
    greedyOptimal: states.filter((st, i) => st.optimal.includes(probs[i]!.indexOf(Math.max(...probs[i]!)))).length / states.length,
    conditionalEntropy,
    marginalEntropy,
    mutualInformation: marginalEntropy - conditionalEntropy,
    marginal,
  };
}

/** Where the non-optimal greedy moves of FrozenLake states lead; null for other environments. */
function greedyErrorKinds(states: readonly LabelledState[], greedy: readonly number[]): ProbeDiagnosis['greedyErrors'] {
  const kinds = { hole: 0, edge: 0, other: 0 };
  for (const [i, state] of states.entries()) {
    if (state.optimal.includes(greedy[i]!)) continue;
    const parsed = parseLakeObservation(state.observation);
    if (!parsed) return null;
    const to = lakeMove(parsed.map.size, parsed.player, greedy[i]!);
    kinds[to === parsed.player ? 'edge' : parsed.map.tiles[to] === 'H' ? 'hole' : 'other']++;
  }
  return kinds;
}

/** Gradient norms summed (in squares) over the parameters of each layer: embeddings, each block, the output head. */
export function layerNorms(norms: ReadonlyMap<string, number>): Record<string, number> {
  const squares: Record<string, number> = {};
  for (const [name, norm] of norms) {
    const layer = name.startsWith('embed/') ? 'embed' : name.startsWith('block') ? name.split('/')[0]! : name.startsWith('head/') ? 'head' : 'final_ln';
    squares[layer] = (squares[layer] ?? 0) + norm * norm;
  }
  return Object.fromEntries(Object.entries(squares).map(([layer, s]) => [layer, Math.sqrt(s)]));
}

/** One iteration's diagnosis: the signal it trained on, the update's shape, and the policy after it. */
export interface IterationDiagnosis extends SignalDiagnosis {
  readonly iteration: number;
  /** Gradient norm per layer before clipping, averaged over the update's optimizer steps. */
  readonly gradNormByLayer: Record<string, number>;
  readonly probe: ProbeDiagnosis | null;
}

/** The hooks of runLocal that diagnose a run, and the records they fill (one per iteration). */
export function diagnosisRecorder(env: string, envOptions: Record<string, unknown>, actionIds: ReadonlySet<number>, probeCount = 200) {
  const states = probeStates(env, envOptions, probeCount);
  const records: IterationDiagnosis[] = [];
  let signal: SignalDiagnosis | null = null;
  let steps: Record<string, number>[] = [];
  return {
    records,
    onBatch: (_iteration: number, groups: readonly RawGroup[], output: BatchOutput) => {
      signal = diagnoseSignal(groups, output, env, actionIds);
      steps = [];
    },
    observeGradients: (norms: ReadonlyMap<string, number>) => void steps.push(layerNorms(norms)),
    onUpdated: (iteration: number, bundle: PolicyBundle) => {
      const layers = Object.keys(steps[0] ?? {});
      const gradNormByLayer = Object.fromEntries(layers.map((l) => [l, steps.reduce((s, x) => s + x[l]!, 0) / steps.length]));
      records.push({ iteration, ...signal!, gradNormByLayer, probe: states ? probePolicy(bundle, states) : null });
    },
  };
}

const f2 = (x: number | null | undefined): string => (x === null || x === undefined ? '-' : x.toFixed(2));

/** One line of the newest iteration's diagnosis, printed beside the evaluation. */
export function diagnosisLine(d: IterationDiagnosis | undefined): string {
  if (!d) return 'diagnosis: no update yet';
  const p = d.probe;
  const layers = Object.entries(d.gradNormByLayer)
    .map(([l, n]) => `${l} ${n.toFixed(3)}`)
    .join(' ');
  return (
    `diagnosis: zero-var groups ${f2(d.zeroVarianceGroups)} (all failed ${f2(d.groupsAllFailed)}), |A| action ${f2(d.meanAbsAdvantageAction)} format ${f2(d.meanAbsAdvantageFormat)} (${d.formatTokens} tokens), A=0 ${f2(d.zeroAdvantageActions)}, ` +
    `corr(A, optimal) ${f2(d.advantageOptimalCorrelation)}, optimal|A>0 ${f2(d.optimalAmongPositive)} |A<0 ${f2(d.optimalAmongNegative)}, taken ${f2(d.optimalActionsTaken)}, invalid ${f2(d.invalidReplies)}; ` +
    (p
      ? `probe P(opt) ${f2(p.pOptimal)} greedy-opt ${f2(p.greedyOptimal)} H(A|S) ${f2(p.conditionalEntropy)} H(A) ${f2(p.marginalEntropy)} MI ${p.mutualInformation.toFixed(3)} marginal [${p.marginal.map(f2).join(' ')}]${p.greedyErrors ? ` errors hole/edge/other ${p.greedyErrors.hole}/${p.greedyErrors.edge}/${p.greedyErrors.other}` : ''}; `
      : '') +
    `grad ${layers}`
  );
}

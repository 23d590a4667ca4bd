// GiGPO (docs/algorithms.md §3, arXiv 2505.10978; verl-agent `gigpo/core_gigpo.py`). One row per environment
// step of every trajectory in one episode group (one `uid`):
//   1. row score = the trajectory's score R(τ), minus the invalid-action penalty if *that step's* action
//      was invalid (verl-agent subtracts it from the row's last-token reward).
//   2. step returns R_t = Σ_k γ^k r_{t+k} over the trajectory's step rewards (Eq. 5), then minus the
//      penalty for an invalid step — after discounting, as verl-agent does. Option (ours, not the paper's):
//      stepReturns 'group_bellman' puts Q(s_t, a_t) from the group's own transition graph in R_t's place
//      (group-bellman.ts), so a step is credited with the best continuation the group found, not with
//      the random moves its own trajectory made afterwards.
//   3. episode advantage A^E (Eq. 3): mean/std over the group's rows — all step rows by default
//      (compute_mean_std_cross_steps=True: longer trajectories weigh more), or one row per trajectory.
//      mean_norm: score − mean; mean_std_norm: (score − mean)/(std + ε). A group of one row: mean 0, std 1.
//   4. anchor-state clusters (Eq. 6): see gigpo-anchor-states.ts.
//   5. step advantage A^S (Eq. 7) over each cluster's R_t: same two modes. A cluster of one: mean = its own
//      R_t, std 1, so A^S = 0.
//   6. A = A^E + ω·A^S (Eq. 8), per step, to be broadcast over that step's action tokens.
// std is torch.std (unbiased) everywhere, ε = 1e-6.
import { ConfigError } from '../../core/errors.js';
import { mean, unbiasedStd } from '../stats/moments.js';
import { discountedReturns } from '../rewards/discounted-returns.js';
import { buildAnchorGroups, type AnchorSimilarity } from './gigpo-anchor-states.js';
import { groupBellmanValues } from './group-bellman.js';

export type GigpoMode = 'mean_norm' | 'mean_std_norm';

export interface GigpoStep {
  /** Step reward r_t that the step returns are discounted from. */
  reward: number;
  /** Anchor state key (our `stateKey`); null = cannot be matched, a cluster of one. */
  anchor: string | null;
  /** Whether the action was valid (default true); only used with `invalidActionPenalty`. */
  actionValid?: boolean;
  /** The action text; only used with stepReturns 'group_bellman' (same anchor + same text = same action). */
  action?: string;
}

export interface GigpoTrajectory {
  /** Episode score R(τ) (verl-agent: the episode return). */
  score: number;
  steps: readonly GigpoStep[];
}

export interface GigpoOptions {
  /**
   * γ for the step returns. Default 0.95: every GiGPO example script sets it, although verl's config
   * default is 1.0 (docs/algorithms.md §3, Defaults).
   */
  gamma?: number;
  /** ω, the weight of the step-level advantage (`step_advantage_w`, default 1.0). */
  omega?: number;
  /** 'mean_norm' (config default; Sokoban, WebShop) or 'mean_std_norm' (ALFWorld, search). */
  mode?: GigpoMode;
  /** ε added to the std in mean_std_norm (1e-6). */
  epsilon?: number;
  /** Rows the episode mean/std is taken over: 'steps' (default, compute_mean_std_cross_steps=True) or 'trajectories'. */
  episodeStatsOver?: 'steps' | 'trajectories';
  /**
   * verl-agent's `invalid_action_penalty_coef` (0.1 in its scripts; default 0 here), applied as in its
   * trainer: after discounting, to the invalid step's return and row score. If your reward spec already
   * has an invalid_action_penalty term, leave this at 0 or the penalty counts twice.
   */
  invalidActionPenalty?: number;
  /** Similarity clustering of anchor keys instead of exact matching. */
  similarity?: AnchorSimilarity;
  /**
   * What A^S normalises: 'discounted' (default, the paper's Eq. 5 returns of each trajectory) or
   * 'group_bellman' (Q of the step's state and action from value iteration over the group's observed
   * transitions, group-bellman.ts; for environments whose anchor keys are the full state).
   */
  stepReturns?: 'discounted' | 'group_bellman';
}

export interface GigpoResult {
  /** A = A^E + ω·A^S, [trajectory][step]. */
  advantages: number[][];
  /** A^E per step row. */
  episodeAdvantages: number[][];
  /** A^S per step (unweighted). */
  stepAdvantages: number[][];
  /** R_t after the invalid-action penalty, [trajectory][step]. */
  stepReturns: number[][];
  /** Anchor cluster index of each step, [trajectory][step]. */
  anchorGroups: number[][];
  /** Size of each anchor cluster. */
  anchorGroupSizes: number[];
}

const GIGPO_OPTION_KEYS = ['gamma', 'omega', 'mode', 'epsilon', 'episodeStatsOver', 'invalidActionPenalty', 'similarity', 'stepReturns'];

export function checkGigpoOptions(options: GigpoOptions): void {
  const unknown = Object.keys(options).filter((key) => !GIGPO_OPTION_KEYS.includes(key));
  if (unknown.length > 0) throw new ConfigError(`gigpo: unknown option(s) ${unknown.join(', ')}; the options are ${GIGPO_OPTION_KEYS.join(', ')}.`);
  const { gamma, omega, mode, epsilon, episodeStatsOver, invalidActionPenalty, stepReturns } = options;
  if (gamma !== undefined && !(gamma >= 0 && gamma <= 1)) throw new ConfigError(`gigpo.gamma must be in [0, 1], e.g. 0.95; got ${gamma}.`);
  if (omega !== undefined && !Number.isFinite(omega)) throw new ConfigError(`gigpo.omega must be a finite number, e.g. 1.0; got ${omega}.`);
  if (mode !== undefined && mode !== 'mean_norm' && mode !== 'mean_std_norm') {
    throw new ConfigError(`gigpo.mode must be 'mean_norm' or 'mean_std_norm'; got ${JSON.stringify(mode)}.`);
  }
  if (epsilon !== undefined && !(epsilon > 0)) throw new ConfigError(`gigpo.epsilon must be > 0, e.g. 1e-6; got ${epsilon}.`);
  if (episodeStatsOver !== undefined && episodeStatsOver !== 'steps' && episodeStatsOver !== 'trajectories') {
    throw new ConfigError(`gigpo.episodeStatsOver must be 'steps' or 'trajectories'; got ${JSON.stringify(episodeStatsOver)}.`);
  }
  if (invalidActionPenalty !== undefined && !(invalidActionPenalty >= 0 && Number.isFinite(invalidActionPenalty))) {
    throw new ConfigError(`gigpo.invalidActionPenalty is a magnitude ≥ 0, e.g. 0.1; got ${invalidActionPenalty}.`);
  }
  if (stepReturns !== undefined && stepReturns !== 'discounted' && stepReturns !== 'group_bellman') {
    throw new ConfigError(`gigpo.stepReturns must be 'discounted' (the paper's) or 'group_bellman'; got ${JSON.stringify(stepReturns)}.`);
  }
  if (options.similarity !== undefined && stepReturns === 'group_bellman') {
    throw new ConfigError("gigpo.stepReturns 'group_bellman' needs exact anchor keys (the graph's states); leave gigpo.similarity unset with it.");
  }
}

/** (x − mean)/(std + ε) or x − mean, with the group-of-one stats the caller chose. */
function normalise(x: number, m: number, s: number, mode: GigpoMode, epsilon: number): number {
  return mode === 'mean_norm' ? x - m : (x - m) / (s + epsilon);
}

/** GiGPO advantages for the trajectories of one episode group. */
export function gigpoAdvantages(trajectories: readonly GigpoTrajectory[], options: GigpoOptions = {}): GigpoResult {
  checkGigpoOptions(options);
  const {
    gamma = 0.95,
    omega = 1.0,
    mode = 'mean_norm',
    epsilon = 1e-6,
    episodeStatsOver = 'steps',
    invalidActionPenalty = 0,
    similarity,
    stepReturns: returnsKind = 'discounted',
  } = options;
  const penaltyOf = (step: GigpoStep): number => (step.actionValid === false ? invalidActionPenalty : 0);

  // Steps 1–2: row scores and penalised discounted returns.
  const rowScores = trajectories.map((traj) => traj.steps.map((step) => traj.score - penaltyOf(step)));
  const stepReturns = penalisedReturns(trajectories, gamma, returnsKind, penaltyOf);
  const episodeAdvantages = episodeLevelAdvantages(rowScores, episodeStatsOver, mode, epsilon);
  const { flatStepAdvantages, clusterOf, sizes } = stepLevelAdvantages(trajectories, stepReturns, similarity, mode, epsilon);

  // Step 6: combine, and reshape the flat rows back to [trajectory][step].
  let row = 0;
  const stepAdvantages: number[][] = [];
  const anchorGroups: number[][] = [];
  for (const traj of trajectories) {
    stepAdvantages.push(flatStepAdvantages.slice(row, row + traj.steps.length));
    anchorGroups.push(clusterOf.slice(row, row + traj.steps.length));
    row += traj.steps.length;
  }
  const advantages = episodeAdvantages.map((rows, i) => rows.map((aE, t) => aE + omega * stepAdvantages[i]![t]!));
  return { advantages, episodeAdvantages, stepAdvantages, stepReturns, anchorGroups, anchorGroupSizes: sizes };
}

/** Step 2: each step's return R_t (discounted, or the group's Bellman Q), less its invalid-action penalty. */
function penalisedReturns(
  trajectories: readonly GigpoTrajectory[],
  gamma: number,
  returnsKind: NonNullable<GigpoOptions['stepReturns']>,
  penaltyOf: (step: GigpoStep) => number,
): number[][] {
  const rawReturns =
    returnsKind === 'group_bellman'
      ? groupBellmanValues(
          trajectories.map((traj) => traj.steps.map((step) => ({ anchor: step.anchor, action: step.action ?? '', reward: step.reward }))),
          gamma,
        )
      : trajectories.map((traj) =>
          discountedReturns(
            traj.steps.map((step) => step.reward),
            gamma,
          ),
        );
  return rawReturns.map((returns, i) => returns.map((ret, t) => ret - penaltyOf(trajectories[i]!.steps[t]!)));
}

/**
 * Step 3: episode-level advantage A^E of every row. With 'trajectories', verl-agent counts each trajectory's
 * *first* row (the first time it sees the (uid, traj_uid) pair), so that row's penalty is part of the statistic.
 */
function episodeLevelAdvantages(rowScores: readonly number[][], episodeStatsOver: 'steps' | 'trajectories', mode: GigpoMode, epsilon: number): number[][] {
  const statRows = episodeStatsOver === 'steps' ? rowScores.flat() : rowScores.filter((rows) => rows.length > 0).map((rows) => rows[0]!);
  const single = statRows.length === 1;
  const episodeMean = single ? 0 : mean(statRows);
  const episodeStd = single ? 1 : unbiasedStd(statRows);
  return rowScores.map((rows) => rows.map((x) => normalise(x, episodeMean, episodeStd, mode, epsilon)));
}

/** Steps 4–5: anchor-state clusters over every step row of the group, in trajectory then step order, and A^S per row. */
function stepLevelAdvantages(
  trajectories: readonly GigpoTrajectory[],
  stepReturns: readonly number[][],
  similarity: AnchorSimilarity | undefined,
  mode: GigpoMode,
  epsilon: number,
): { flatStepAdvantages: number[]; clusterOf: number[]; sizes: number[] } {
  const anchors = trajectories.flatMap((traj) => traj.steps.map((step) => step.anchor));
  const { clusterOf, sizes } = buildAnchorGroups(anchors, similarity);
  const flatReturns = stepReturns.flat();
  const members: number[][] = sizes.map(() => []);
  clusterOf.forEach((cluster, row) => members[cluster]!.push(flatReturns[row]!));
  const clusterMean = members.map((values) => mean(values));
  const clusterStd = members.map((values) => (values.length === 1 ? 1 : unbiasedStd(values)));
  const flatStepAdvantages = flatReturns.map((ret, row) => {
    const c = clusterOf[row]!;
    return normalise(ret, clusterMean[c]!, clusterStd[c]!, mode, epsilon);
  });
  return { flatStepAdvantages, clusterOf, sizes };
}

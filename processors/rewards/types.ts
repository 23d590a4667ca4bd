// Types of the reward pipeline: a run's RewardSpec is a list of weighted terms (a discriminated union on
// `kind`), and buildRewardFn turns it into a function from a trajectory to its reward.
import type { TrajectoryEvent } from '../../schemas/index.js';

/** What a reward function returns for one trajectory. */
export interface RewardResult {
  /** Scalar trajectory reward R(τ): the sum of every weighted term. Equals the sum of `perStep` when the trajectory has steps. */
  total: number;
  /** Reward of each step (turn), in step order. Trajectory-level terms (success, overlong, custom scalars) sit on the last step, as verl and RAGEN put the outcome reward on the last token. */
  perStep: number[];
  /** Discounted step returns G_t = Σ_k γ^k perStep[t+k] with the spec's γ (GiGPO Eq. 5, docs/algorithms.md §3 step 2). */
  returns: number[];
  /** Weighted contribution of each term to `total`, by term name. */
  parts: Record<string, number>;
}

/**
 * A user reward function. Return a number for a trajectory-level reward (put on the last step), or
 * `{ perStep }` with one value per step. The term's weight multiplies whatever it returns.
 */
export type CustomRewardFn = (trajectory: TrajectoryEvent) => number | { perStep: number[] };

interface TermBase {
  /** Multiplies the term (default 1). */
  weight?: number;
  /** Key of the term in `parts` (default: its kind, or the custom name). Names must be unique in a spec. */
  name?: string;
}

/** Environment return: the sum of step rewards, kept per step. */
export interface EnvReturnTerm extends TermBase {
  kind: 'env_return';
}

/** 1 if `trajectory.success`, else 0 (TrajectoryStep carries no metrics, so success comes from the trajectory). */
export interface SuccessTerm extends TermBase {
  kind: 'success';
}

/** −penalty on every step whose action was invalid: the format penalty (RAGEN −0.1, §4.4; GiGPO 0.1, §3). */
export interface InvalidActionPenaltyTerm extends TermBase {
  kind: 'invalid_action_penalty';
  /** Magnitude subtracted per invalid turn (≥ 0), e.g. 0.1. */
  penalty: number;
}

/** −penalty on every step, to favour short solutions. */
export interface StepPenaltyTerm extends TermBase {
  kind: 'step_penalty';
  /** Magnitude subtracted per step (≥ 0). */
  penalty: number;
}

/** DAPO's soft overlong punishment (docs/algorithms.md §2.2), on response length in tokens. */
export interface OverlongPenaltyTerm extends TermBase {
  kind: 'overlong_penalty';
  /** L_max: the maximum response length in tokens, e.g. 20480. */
  maxLength: number;
  /** L_buf: the soft buffer at the end of L_max over which the penalty ramps from 0 to −factor, e.g. 4096. */
  cacheLength: number;
  /** Penalty at L_max (default 1.0, verl's `penalty_factor`). */
  factor?: number;
  /**
   * 'trajectory' (default): the length is every action token of the episode (all the policy generated),
   * penalised once on the last step. 'turn': each step's own action length, penalised on that step —
   * use it when L_max is a per-turn limit (RAGEN: 400 tokens per turn).
   */
  scope?: 'trajectory' | 'turn';
}

/** A user reward function, given inline (`fn`) or registered beforehand with `registerReward(name, fn)`. */
export interface CustomTerm extends TermBase {
  kind: 'custom';
  /** Name of the function: its key in `parts`, and its registry key when `fn` is omitted. */
  name: string;
  fn?: CustomRewardFn;
}

export type RewardTerm = EnvReturnTerm | SuccessTerm | InvalidActionPenaltyTerm | StepPenaltyTerm | OverlongPenaltyTerm | CustomTerm;

export type RewardTermKind = RewardTerm['kind'];

/** The reward configuration of a run. */
export interface RewardSpec {
  /** Terms summed into the reward; at least one. */
  terms: RewardTerm[];
  /** Discount γ ∈ [0, 1] for `returns` (default 1; every GiGPO script uses 0.95). */
  gamma?: number;
}

export type RewardFn = (trajectory: TrajectoryEvent) => RewardResult;

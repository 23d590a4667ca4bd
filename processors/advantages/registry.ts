// The advantage estimators by name, each adapted to the same call: a batch of scored groups in, per
// group the advantage of every trajectory (trajectory-level estimators) and of every step (all of them;
// a trajectory-level value is repeated on each step of its trajectory). The sample builder broadcasts a
// step's value over that step's action tokens.
import { ConfigError } from '../../core/errors.js';
import { assertAligned, groupScores, type Group } from '../group.js';
import { drGrpoAdvantages } from './dr-grpo.js';
import { gigpoAdvantages, type GigpoOptions } from './gigpo.js';
import { grpoAdvantages, type GrpoOptions } from './grpo.js';
import { reinforcePlusPlusAdvantages } from './reinforce-plus-plus.js';
import { reinforcePlusPlusBaselineAdvantages } from './reinforce-plus-plus-baseline.js';
import { rlooAdvantages } from './rloo.js';
import { starpoAdvantages, type StarpoOptions } from './starpo.js';
import { actionTokenCount } from '../../schemas/wire-step.js';

export interface GroupAdvantages {
  groupId: string;
  /** One advantage per trajectory; null for step-level estimators (GiGPO, REINFORCE++). */
  perTrajectory: number[] | null;
  /** One advantage per step of each trajectory, [trajectory][step]. */
  perStep: number[][];
}

export interface Estimator<O> {
  readonly name: string;
  /** 'trajectory': one value per trajectory; 'step': one per step. */
  readonly level: 'trajectory' | 'step';
  /** 'group': each group on its own; 'batch': statistics over every group passed in one call. */
  readonly scope: 'group' | 'batch';
  compute(groups: readonly Group[], options?: O): GroupAdvantages[];
}

/** How REINFORCE++'s batch whitening weighs a position: by action-token count (verl's per-token statistics) or once each. */
export interface BatchWhiteningOptions {
  /** 'token' (default): a trajectory/step counts as many times as it has action tokens, as verl's per-token whitening does. 'unit': once each. */
  weighting?: 'token' | 'unit';
}

export interface ReinforcePlusPlusEstimatorOptions extends BatchWhiteningOptions {
  /** γ per step (default 1.0, verl `algorithm.gamma`). */
  gamma?: number;
}

function broadcast(group: Group, perTrajectory: number[]): GroupAdvantages {
  return {
    groupId: group.groupId,
    perTrajectory,
    perStep: group.trajectories.map((traj, i) => traj.steps.map(() => perTrajectory[i]!)),
  };
}

function trajectoryLevel<O>(name: string, fn: (scores: number[], options?: O) => number[]): Estimator<O> {
  return {
    name,
    level: 'trajectory',
    scope: 'group',
    compute: (groups, options) => groups.map((group) => broadcast(group, fn(groupScores(group), options))),
  };
}

function actionTokens(group: Group, i: number, t?: number): number {
  const steps = group.trajectories[i]!.steps;
  return t === undefined ? steps.reduce((sum, step) => sum + actionTokenCount(step), 0) : actionTokenCount(steps[t]!);
}

function checkWeighting(name: string, weighting: unknown): void {
  if (weighting !== undefined && weighting !== 'token' && weighting !== 'unit') {
    throw new ConfigError(`${name}.weighting must be 'token' or 'unit'; got ${JSON.stringify(weighting)}.`);
  }
}

export const estimators = {
  grpo: trajectoryLevel<GrpoOptions>('grpo', (scores, options) => grpoAdvantages(scores, options)),
  dr_grpo: trajectoryLevel<Record<string, never>>('dr_grpo', (scores) => drGrpoAdvantages(scores)),
  rloo: trajectoryLevel<Record<string, never>>('rloo', (scores) => rlooAdvantages(scores)),
  starpo: trajectoryLevel<StarpoOptions>('starpo', (scores, options) => starpoAdvantages(scores, options)),

  /**
   * REINFORCE++ with one position per step: r_t = the step's reward from the reward pipeline, returns
   * discounted per step, whitened over every step of the batch. Deviation from verl, which runs the
   * same recurrence per token: there γ discounts per token and the return is reset at every masked
   * (observation) token, so in a multi-turn sample no turn would see a later turn's reward. Per step,
   * a turn's return includes the later turns; with weighting 'token' the whitening statistics equal
   * verl's per-token ones for γ = 1. Call reinforcePlusPlusAdvantages with token positions for verl's
   * exact token-level numbers.
   */
  reinforce_plus_plus: {
    name: 'reinforce_plus_plus',
    level: 'step',
    scope: 'batch',
    compute(groups: readonly Group[], { gamma = 1.0, weighting = 'token' }: ReinforcePlusPlusEstimatorOptions = {}): GroupAdvantages[] {
      checkWeighting('reinforce_plus_plus', weighting);
      if (!(gamma >= 0 && gamma <= 1)) throw new ConfigError(`reinforce_plus_plus.gamma must be in [0, 1]; got ${gamma}.`);
      groups.forEach(assertAligned);
      const sequences = groups.flatMap((group) =>
        group.rewards.map((reward, i) => ({
          rewards: reward.perStep,
          mask: reward.perStep.map((_, t) => (weighting === 'token' ? actionTokens(group, i, t) : 1)),
        })),
      );
      const flat = reinforcePlusPlusAdvantages(sequences, { gamma });
      let k = 0;
      return groups.map((group) => ({
        groupId: group.groupId,
        perTrajectory: null,
        perStep: group.trajectories.map(() => flat[k++]!),
      }));
    },
  } satisfies Estimator<ReinforcePlusPlusEstimatorOptions>,

  /** REINFORCE++-baseline: r_i − mean_g, whitened over the batch (weighted by action tokens by default, as verl's per-token statistics). */
  reinforce_plus_plus_baseline: {
    name: 'reinforce_plus_plus_baseline',
    level: 'trajectory',
    scope: 'batch',
    compute(groups: readonly Group[], { weighting = 'token' }: BatchWhiteningOptions = {}): GroupAdvantages[] {
      checkWeighting('reinforce_plus_plus_baseline', weighting);
      const scores = groups.map(groupScores);
      const tokenCounts = weighting === 'token' ? groups.map((group) => group.trajectories.map((_, i) => actionTokens(group, i))) : undefined;
      const advantages = reinforcePlusPlusBaselineAdvantages(scores, { tokenCounts });
      return groups.map((group, g) => broadcast(group, advantages[g]!));
    },
  } satisfies Estimator<BatchWhiteningOptions>,

  /** GiGPO with the step rewards of the reward pipeline, the trajectory's total as its score and `stateKey` as the anchor. */
  gigpo: {
    name: 'gigpo',
    level: 'step',
    scope: 'group',
    compute(groups: readonly Group[], options: GigpoOptions = {}): GroupAdvantages[] {
      return groups.map((group) => {
        assertAligned(group);
        const result = gigpoAdvantages(
          group.trajectories.map((traj, i) => ({
            score: group.rewards[i]!.total,
            steps: traj.steps.map((step, t) => ({
              reward: group.rewards[i]!.perStep[t]!,
              anchor: step.stateKey,
              actionValid: step.actionValid,
              action: step.action,
            })),
          })),
          options,
        );
        return { groupId: group.groupId, perTrajectory: null, perStep: result.advantages };
      });
    },
  } satisfies Estimator<GigpoOptions>,
} as const;

export type EstimatorName = keyof typeof estimators;
export type EstimatorOptions<N extends EstimatorName> = NonNullable<Parameters<(typeof estimators)[N]['compute']>[1]>;

export const estimatorNames = Object.keys(estimators) as EstimatorName[];

/** Looks an estimator up by a name from config; ConfigError listing the valid names otherwise. */
export function estimatorByName(name: string): (typeof estimators)[EstimatorName] {
  if (!Object.hasOwn(estimators, name)) {
    throw new ConfigError(`unknown advantage estimator '${name}'; use one of ${estimatorNames.join(', ')}.`);
  }
  return estimators[name as EstimatorName];
}

/** Advantages for a batch of groups with the named estimator. */
export function computeAdvantages<N extends EstimatorName>(name: N, groups: readonly Group[], options?: EstimatorOptions<N>): GroupAdvantages[] {
  const estimator = estimators[name] as Estimator<EstimatorOptions<N>>;
  return estimator.compute(groups, options);
}

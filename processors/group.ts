// The unit every advantage estimator, filter and statistic works on: a group of trajectories that
// started from the same task or initial state (one `uid` in verl, docs/algorithms.md §1), each with the
// reward the run's reward pipeline gave it.
import { TrajflowError } from '../core/errors.js';
import type { TrajectoryEvent } from '../schemas/index.js';
import type { RewardFn, RewardResult } from './rewards/types.js';

export interface Group {
  groupId: string;
  trajectories: TrajectoryEvent[];
  /** rewards[i] is the reward of trajectories[i] (same length, same order), from buildRewardFn. */
  rewards: RewardResult[];
}

/** Scores every trajectory of a group with `rewardFn`. */
export function scoreGroup(groupId: string, trajectories: TrajectoryEvent[], rewardFn: RewardFn): Group {
  return { groupId, trajectories, rewards: trajectories.map(rewardFn) };
}

/** The scalar reward R(τ) of each trajectory, in order: the `scores` every estimator takes. */
export function groupScores(group: Group): number[] {
  assertAligned(group);
  return group.rewards.map((reward) => reward.total);
}

/** Throws when `rewards` does not line up with `trajectories` (a programming error upstream). */
export function assertAligned(group: Group): void {
  if (group.rewards.length !== group.trajectories.length) {
    throw new TrajflowError(
      'GROUP',
      `group ${group.groupId} has ${group.trajectories.length} trajectories but ${group.rewards.length} rewards; ` +
        'build it with scoreGroup so that rewards[i] belongs to trajectories[i].',
    );
  }
  group.rewards.forEach((reward, i) => {
    if (reward.perStep.length !== group.trajectories[i]!.steps.length) {
      throw new TrajflowError(
        'GROUP',
        `group ${group.groupId}, trajectory ${group.trajectories[i]!.episodeId}: ${reward.perStep.length} step rewards for ` + `${group.trajectories[i]!.steps.length} steps.`,
      );
    }
  });
}

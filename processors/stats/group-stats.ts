// Rollout statistics of one group: what RAGEN tracks per prompt group (reward mean and in-group std, the
// Echo Trap's first symptom, §4.3) plus success, pass@k / pass^k (§6), length and invalid actions.
import type { TrajectoryEvent } from '../../schemas/index.js';
import { assertAligned, type Group } from '../group.js';
import type { RewardResult } from '../rewards/types.js';
import { inGroupStd, mean } from './moments.js';
import { passAtK, passHatK } from './pass-at-k.js';

export interface RolloutStatsOptions {
  /** The k values for pass@k and pass^k (default 1..group size); a k larger than a group is skipped for that group. */
  ks?: readonly number[];
  /** What counts as a success (default `trajectory.success`; τ-bench uses reward within 1 ± 1e-6). */
  isSuccess?: (trajectory: TrajectoryEvent, reward: RewardResult) => boolean;
}

export interface GroupStats {
  groupId: string;
  /** Number of trajectories n. */
  size: number;
  /** Mean of R(τ). */
  rewardMean: number;
  /** In-group std of R(τ): unbiased (torch.std, as GRPO and the filters use), 0 for a group of one. */
  rewardStd: number;
  /** Number of successful trajectories c. */
  successes: number;
  /** c / n. */
  successRate: number;
  /** pass@k by k, for each requested k ≤ n. */
  passAtK: Record<number, number>;
  /** pass^k by k, for each requested k ≤ n. */
  passHatK: Record<number, number>;
  /** Mean number of steps per trajectory. */
  meanLength: number;
  /** Invalid actions / steps, over the group's steps (0 when there are no steps). */
  invalidActionRate: number;
  /** Trajectories whose outcome is 'incomplete' (when a run trains on them). */
  incomplete: number;
}

export function isSuccessDefault(trajectory: TrajectoryEvent): boolean {
  return trajectory.success;
}

export function groupStats(group: Group, { ks, isSuccess = isSuccessDefault }: RolloutStatsOptions = {}): GroupStats {
  assertAligned(group);
  const n = group.trajectories.length;
  const scores = group.rewards.map((reward) => reward.total);
  const successes = group.trajectories.filter((traj, i) => isSuccess(traj, group.rewards[i]!)).length;
  const passAt: Record<number, number> = {};
  const passHat: Record<number, number> = {};
  for (const k of ks ?? Array.from({ length: n }, (_, i) => i + 1)) {
    if (k < 1 || k > n) continue;
    passAt[k] = passAtK(n, successes, k);
    passHat[k] = passHatK(n, successes, k);
  }
  const steps = group.trajectories.reduce((sum, traj) => sum + traj.steps.length, 0);
  const invalid = group.trajectories.reduce((sum, traj) => sum + traj.steps.filter((step) => !step.actionValid).length, 0);
  return {
    groupId: group.groupId,
    size: n,
    rewardMean: n === 0 ? 0 : mean(scores),
    rewardStd: inGroupStd(scores),
    successes,
    successRate: n === 0 ? 0 : successes / n,
    passAtK: passAt,
    passHatK: passHat,
    meanLength: n === 0 ? 0 : steps / n,
    invalidActionRate: steps === 0 ? 0 : invalid / steps,
    incomplete: group.trajectories.filter((traj) => traj.outcome === 'incomplete').length,
  };
}

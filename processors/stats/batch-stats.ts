// Rollout statistics of one batch of groups, with every drop counted by its reason.
import type { DroppedGroup } from '../filters/types.js';
import type { Group } from '../group.js';
import { groupStats, type GroupStats, type RolloutStatsOptions } from './group-stats.js';
import { mean, unbiasedStd } from './moments.js';

export interface BatchStatsInput {
  /** The groups of the batch (pass them before filtering to describe the rollouts as generated). */
  groups: readonly Group[];
  /** Groups dropped by group assembly or by filters. */
  dropped?: readonly DroppedGroup[];
  /** Incomplete trajectories closed by the assembler and not put in any group (the default). */
  incompleteTrajectories?: number;
}

export interface BatchStats {
  groups: number;
  trajectories: number;
  /** Mean and unbiased std of R(τ) over every trajectory of the batch (std 0 with fewer than 2). */
  rewardMean: number;
  rewardStd: number;
  /** Mean over groups of the in-group std (RAGEN's rollout/in_group_std, the Echo Trap's early signal). */
  meanInGroupRewardStd: number;
  /** Successes / trajectories. */
  successRate: number;
  /** Mean over the groups with n ≥ k of their pass@k, by k (τ-bench averages over tasks). */
  passAtK: Record<number, number>;
  passHatK: Record<number, number>;
  /** Mean steps per trajectory. */
  meanLength: number;
  /** Invalid actions / steps over the batch. */
  invalidActionRate: number;
  /** Incomplete trajectories: those inside groups plus `incompleteTrajectories`. */
  incomplete: number;
  /** Number of dropped groups, and the count per `filter:reason`. */
  droppedGroups: number;
  droppedByReason: Record<string, number>;
  /** Per-group statistics, in input order. */
  perGroup: GroupStats[];
}

function meanByK(perGroup: readonly GroupStats[], pick: (stats: GroupStats) => Record<number, number>): Record<number, number> {
  const byK = new Map<number, number[]>();
  for (const stats of perGroup) {
    for (const [k, value] of Object.entries(pick(stats))) {
      const key = Number(k);
      byK.set(key, [...(byK.get(key) ?? []), value]);
    }
  }
  const out: Record<number, number> = {};
  for (const k of [...byK.keys()].sort((a, b) => a - b)) out[k] = mean(byK.get(k)!);
  return out;
}

export function batchStats({ groups, dropped = [], incompleteTrajectories = 0 }: BatchStatsInput, options: RolloutStatsOptions = {}): BatchStats {
  const perGroup = groups.map((group) => groupStats(group, options));
  const scores = groups.flatMap((group) => group.rewards.map((reward) => reward.total));
  const trajectories = scores.length;
  const allSteps = groups.flatMap((group) => group.trajectories.flatMap((traj) => traj.steps));
  const steps = allSteps.length;
  const invalid = allSteps.filter((step) => !step.actionValid).length;
  const successes = perGroup.reduce((sum, stats) => sum + stats.successes, 0);
  const droppedByReason: Record<string, number> = {};
  for (const drop of dropped) {
    const key = `${drop.filter}:${drop.reason}`;
    droppedByReason[key] = (droppedByReason[key] ?? 0) + 1;
  }
  return {
    groups: groups.length,
    trajectories,
    rewardMean: trajectories === 0 ? 0 : mean(scores),
    rewardStd: trajectories < 2 ? 0 : unbiasedStd(scores),
    meanInGroupRewardStd: perGroup.length === 0 ? 0 : mean(perGroup.map((stats) => stats.rewardStd)),
    successRate: trajectories === 0 ? 0 : successes / trajectories,
    passAtK: meanByK(perGroup, (stats) => stats.passAtK),
    passHatK: meanByK(perGroup, (stats) => stats.passHatK),
    meanLength: trajectories === 0 ? 0 : steps / trajectories,
    invalidActionRate: steps === 0 ? 0 : invalid / steps,
    incomplete: perGroup.reduce((sum, stats) => sum + stats.incomplete, 0) + incompleteTrajectories,
    droppedGroups: dropped.length,
    droppedByReason,
    perGroup,
  };
}

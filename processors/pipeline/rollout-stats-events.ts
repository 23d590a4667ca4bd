// Rollout statistics as events (one per batch and one per group), so dashboards and the collapse
// detector read them from Kafka/ClickHouse like everything else. Ids and times are derived from the
// batch itself, so re-processing the same steps gives the same events.
import { createHash } from 'node:crypto';
import type { RolloutStatsEvent } from '../../schemas/index.js';
import type { BatchStats } from '../stats/batch-stats.js';

const byK = (values: Record<number, number>): Record<string, number> => Object.fromEntries(Object.entries(values).map(([k, v]) => [String(k), v]));

export function batchIdOf(groupIds: readonly string[]): string {
  return `batch-${createHash('sha256')
    .update([...groupIds].sort().join('\n'))
    .digest('hex')
    .slice(0, 24)}`;
}

/** How many of the groups closed for each reason (only the reasons that occurred), for the batch's event. */
export function closedByOf(groups: readonly { readonly closedBy: string }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const group of groups) counts[group.closedBy] = (counts[group.closedBy] ?? 0) + 1;
  return counts;
}

/**
 * The batch's event and one per group. `closedBy` counts the batch's groups by the reason their assembly closed
 * them (closedByOf): per batch, so ClickHouse sums them over a run (docs/design/group-completion.md).
 */
export function rolloutStatsEvents(
  runId: string,
  groupIds: readonly string[],
  stats: BatchStats,
  eventTimeMs: number,
  closedBy: Readonly<Record<string, number>> = {},
): RolloutStatsEvent[] {
  const batchId = batchIdOf(groupIds);
  const batch: RolloutStatsEvent = {
    runId,
    scope: 'batch',
    batchId,
    groupId: null,
    groups: stats.groups,
    trajectories: stats.trajectories,
    rewardMean: stats.rewardMean,
    rewardStd: stats.rewardStd,
    meanInGroupRewardStd: stats.meanInGroupRewardStd,
    successRate: stats.successRate,
    passAtK: byK(stats.passAtK),
    passHatK: byK(stats.passHatK),
    meanLength: stats.meanLength,
    invalidActionRate: stats.invalidActionRate,
    incomplete: stats.incomplete,
    droppedGroups: stats.droppedGroups,
    droppedByReason: stats.droppedByReason,
    eventTimeMs,
    closedBy: { ...closedBy },
  };
  const groups = stats.perGroup.map(
    (group): RolloutStatsEvent => ({
      runId,
      scope: 'group',
      batchId,
      groupId: group.groupId,
      groups: 1,
      trajectories: group.size,
      rewardMean: group.rewardMean,
      rewardStd: group.rewardStd,
      meanInGroupRewardStd: group.rewardStd,
      successRate: group.successRate,
      passAtK: byK(group.passAtK),
      passHatK: byK(group.passHatK),
      meanLength: group.meanLength,
      invalidActionRate: group.invalidActionRate,
      incomplete: group.incomplete,
      droppedGroups: 0,
      droppedByReason: {},
      eventTimeMs,
      closedBy: {},
    }),
  );
  return [batch, ...groups];
}

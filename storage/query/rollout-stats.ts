// GET /v1/runs/:runId/rollout-stats: the rollout_stats rows of a run as stored, per batch (scope=batch, the
// default) or per group (scope=group), optionally of one batch or one group. Field names are the
// RolloutStatsEvent's (schemas/rollout_stats/v1.avsc). FINAL, so a row the sink stored twice shows once.
import { RUN_WINDOW, enumParam, idParam, limitParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { sqlInt, sqlString } from './sql.js';
import { int, kMap, mapOf, num, read, type AnalyticsStore } from './store.js';

export const ROLLOUT_STATS_DEFAULT_LIMIT = 100;

export interface RolloutStatsQuery extends TimeWindow {
  readonly runId: string;
  readonly scope: 'batch' | 'group';
  readonly limit: number;
  readonly order: 'asc' | 'desc';
  readonly batchId?: string;
  readonly groupId?: string;
}

export const rolloutStatsParams = ['scope', 'limit', 'sinceMs', 'untilMs', 'order', 'batchId', 'groupId'] as const;

export function parseRolloutStatsQuery(runId: string, query: RawQuery, nowMs: number): RolloutStatsQuery {
  const values = readQuery(query, rolloutStatsParams);
  const scope = enumParam(values, 'scope', ['batch', 'group'], 'batch');
  const limit = limitParam(values, ROLLOUT_STATS_DEFAULT_LIMIT);
  const window = windowParams(values, nowMs, RUN_WINDOW);
  const order = enumParam(values, 'order', ['asc', 'desc'], 'asc');
  const batchId = idParam(values, 'batchId');
  const groupId = idParam(values, 'groupId');
  return { runId, scope, limit, ...window, order, ...(batchId === undefined ? {} : { batchId }), ...(groupId === undefined ? {} : { groupId }) };
}

/** The columns of a rollout_stats row, as read by this module and the event stream. */
export const ROLLOUT_STATS_COLUMNS = `run_id, scope, batch_id, group_id, groups, trajectories, reward_mean, reward_std, mean_in_group_reward_std,
       success_rate, pass_at_k_keys, pass_at_k_values, pass_hat_k_keys, pass_hat_k_values, mean_length, invalid_action_rate,
       incomplete, dropped_groups, dropped_by_reason_keys, dropped_by_reason_values, closed_by_keys, closed_by_values, event_time_ms`;

export function rolloutStatsSql(q: RolloutStatsQuery): string {
  const where = [`run_id = ${sqlString(q.runId)}`, `scope = ${sqlString(q.scope)}`, `event_time_ms >= ${sqlInt(q.sinceMs)}`, `event_time_ms < ${sqlInt(q.untilMs)}`];
  if (q.batchId !== undefined) where.push(`batch_id = ${sqlString(q.batchId)}`);
  if (q.groupId !== undefined) where.push(`group_id = ${sqlString(q.groupId)}`);
  const direction = q.order === 'asc' ? 'ASC' : 'DESC';
  return `SELECT ${ROLLOUT_STATS_COLUMNS}
FROM rollout_stats FINAL
WHERE ${where.join(' AND ')}
ORDER BY event_time_ms ${direction}, batch_id ${direction}, group_id ${direction}
LIMIT ${sqlInt(q.limit + 1)}`;
}

export interface RolloutStatsRow {
  run_id: string;
  scope: string;
  batch_id: string;
  group_id: string;
  groups: number;
  trajectories: number;
  reward_mean: number | null;
  reward_std: number | null;
  mean_in_group_reward_std: number | null;
  success_rate: number | null;
  pass_at_k_keys: string[];
  pass_at_k_values: Array<number | null>;
  pass_hat_k_keys: string[];
  pass_hat_k_values: Array<number | null>;
  mean_length: number | null;
  invalid_action_rate: number | null;
  incomplete: number;
  dropped_groups: number;
  dropped_by_reason_keys: string[];
  dropped_by_reason_values: Array<number | null>;
  closed_by_keys: string[];
  closed_by_values: number[];
  event_time_ms: number;
}

/** The figures of a rollout batch or group, as JSON (null for a float that is not finite); curve points pool them. */
export interface RolloutFigures {
  readonly groups: number;
  readonly trajectories: number;
  readonly rewardMean: number | null;
  readonly rewardStd: number | null;
  readonly meanInGroupRewardStd: number | null;
  readonly successRate: number | null;
  readonly passAtK: Record<string, number | null>;
  readonly passHatK: Record<string, number | null>;
  readonly meanLength: number | null;
  readonly invalidActionRate: number | null;
  readonly incomplete: number;
  readonly droppedGroups: number;
}

/** A RolloutStatsEvent as JSON (null for a float that is not finite). */
export interface RolloutStatsView extends RolloutFigures {
  readonly runId: string;
  readonly scope: string;
  readonly batchId: string;
  readonly groupId: string | null;
  readonly droppedByReason: Record<string, number | null>;
  /** Groups of the batch by close reason (rollout_stats v2; {} for a group row or a batch written before). */
  readonly closedBy: Record<string, number | null>;
  readonly eventTimeMs: number;
}

export function rolloutStatsView(row: RolloutStatsRow): RolloutStatsView {
  return {
    runId: row.run_id,
    scope: row.scope,
    batchId: row.batch_id,
    // The sink stores '' for a batch row's absent group (the sorting key cannot be Nullable on 18.16).
    groupId: row.group_id === '' ? null : row.group_id,
    groups: int(row.groups),
    trajectories: int(row.trajectories),
    rewardMean: num(row.reward_mean),
    rewardStd: num(row.reward_std),
    meanInGroupRewardStd: num(row.mean_in_group_reward_std),
    successRate: num(row.success_rate),
    passAtK: kMap(row.pass_at_k_keys, row.pass_at_k_values),
    passHatK: kMap(row.pass_hat_k_keys, row.pass_hat_k_values),
    meanLength: num(row.mean_length),
    invalidActionRate: num(row.invalid_action_rate),
    incomplete: int(row.incomplete),
    droppedGroups: int(row.dropped_groups),
    droppedByReason: mapOf(row.dropped_by_reason_keys, row.dropped_by_reason_values),
    closedBy: mapOf(row.closed_by_keys, row.closed_by_values),
    eventTimeMs: int(row.event_time_ms),
  };
}

export interface RolloutStatsResult {
  readonly rolloutStats: RolloutStatsView[];
  readonly truncated: boolean;
}

export async function queryRolloutStats(store: AnalyticsStore, q: RolloutStatsQuery): Promise<RolloutStatsResult> {
  const rows = await read<RolloutStatsRow>(store, rolloutStatsSql(q));
  return { rolloutStats: rows.slice(0, q.limit).map(rolloutStatsView), truncated: rows.length > q.limit };
}

// GET /v1/runs/:runId/curve: the learning curve of a run, one point per rollout batch (rollout_stats rows of
// scope 'batch') or, with bucketMs, one point per time bucket. Bucketed points pool the batches exactly as
// if they were one batch: reward mean and success rate weighted by trajectories, the reward std pooled
// from the batches' means and (unbiased) stds, pass@k and pass^k weighted by groups, env steps summed.
//
// Without bucketMs, a window holding more batches than `limit` is downsampled automatically: the server
// picks the smallest whole-second bucket that gives at most `limit` points and says so (autoBucketed).
// Every query reads rollout_stats FINAL, so a batch the sink stored twice counts once.
//
// Each point also counts the groups closed by each reason (closed_by_keys/values, rollout_stats v2; empty for a
// batch written before): closedTimeout and closedIdle are the groups completed without all their members.
// And it says how far the run had got: its env steps so far, and the newest policy version published by its newest
// batch (progress.ts), so that runs can be compared by env steps or by policy version.
import { DAY_MS, RUN_WINDOW, intParam, limitParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { versionsAt } from './progress.js';
import { sqlInt, sqlString } from './sql.js';
import type { RolloutFigures, RolloutStatsRow } from './rollout-stats.js';
import { int, kMap, num, read, type AnalyticsStore } from './store.js';

export const MIN_BUCKET_MS = 1000;
export const MAX_BUCKET_MS = 366 * DAY_MS;
export const CURVE_DEFAULT_LIMIT = 1000;

export interface SeriesQuery extends TimeWindow {
  readonly runId: string;
  /** Most points returned. */
  readonly limit: number;
  /** Bucket width; absent = one point per batch (or an automatic bucket when there are too many). */
  readonly bucketMs?: number;
}

export const curveParams = ['sinceMs', 'untilMs', 'bucketMs', 'limit'] as const;

/** The reasons a group closes (processors/assembly/assemble-groups.ts), counted per point. */
const CLOSE_REASONS = ['full', 'idle', 'timeout', 'evicted'] as const;

/** A batch row's count of groups closed for `reason`, from its closed_by map. */
const closedCount = (reason: string): string => `arraySum(arrayFilter((v, k) -> k = ${sqlString(reason)}, closed_by_values, closed_by_keys))`;

/** closed_<reason>_count columns: per batch, or (`sum`) summed over a bucket. */
const closedColumns = (sum: boolean): string => CLOSE_REASONS.map((reason) => `${sum ? `sum(${closedCount(reason)})` : closedCount(reason)} AS closed_${reason}_count`).join(', ');

/** Parses ?sinceMs=&untilMs=&bucketMs=&limit= for a run (the run id already checked by routeId). */
export function parseSeriesQuery(runId: string, query: RawQuery, nowMs: number): SeriesQuery {
  const values = readQuery(query, curveParams);
  const limit = limitParam(values, CURVE_DEFAULT_LIMIT);
  const window = windowParams(values, nowMs, RUN_WINDOW);
  const bucketMs = values.has('bucketMs') ? intParam(values, 'bucketMs', { min: MIN_BUCKET_MS, max: MAX_BUCKET_MS }, MIN_BUCKET_MS) : undefined;
  return { runId, limit, ...window, ...(bucketMs === undefined ? {} : { bucketMs }) };
}

/** The WHERE of every batch-series query. */
export function batchWhere(q: Pick<SeriesQuery, 'runId' | 'sinceMs' | 'untilMs'>): string {
  return `run_id = ${sqlString(q.runId)} AND scope = 'batch' AND event_time_ms >= ${sqlInt(q.sinceMs)} AND event_time_ms < ${sqlInt(q.untilMs)}`;
}

/** How many batches the window holds, their time span, and the env steps before the window (for cumulative counts). */
export function extentSql(q: Pick<SeriesQuery, 'runId' | 'sinceMs' | 'untilMs'>): string {
  const inside = `event_time_ms >= ${sqlInt(q.sinceMs)}`;
  return `SELECT countIf(${inside}) AS batches, minIf(event_time_ms, ${inside}) AS first_ms, maxIf(event_time_ms, ${inside}) AS last_ms,
       sumIf(mean_length * trajectories, NOT (${inside})) AS env_steps_before
FROM rollout_stats FINAL
WHERE run_id = ${sqlString(q.runId)} AND scope = 'batch' AND event_time_ms < ${sqlInt(q.untilMs)}`;
}

/** One row per batch, oldest first, limit + 1 of them (the extra one says there were more). */
export function batchPointsSql(q: SeriesQuery): string {
  return `SELECT batch_id, event_time_ms, groups, trajectories, reward_mean, reward_std, mean_in_group_reward_std, success_rate,
       pass_at_k_keys, pass_at_k_values, pass_hat_k_keys, pass_hat_k_values, mean_length, invalid_action_rate, incomplete, dropped_groups,
       ${closedColumns(false)}
FROM rollout_stats FINAL
WHERE ${batchWhere(q)}
ORDER BY event_time_ms ASC, batch_id ASC
LIMIT ${sqlInt(q.limit + 1)}`;
}

const bucketExpr = (bucketMs: number): string => `intDiv(event_time_ms, ${sqlInt(bucketMs)}) * ${sqlInt(bucketMs)}`;

/** One row per bucket, the sums the pooled statistics are computed from. */
export function bucketPointsSql(q: SeriesQuery, bucketMs: number): string {
  return `SELECT ${bucketExpr(bucketMs)} AS bucket_start_ms, count() AS batches, max(event_time_ms) AS last_event_time_ms,
       sum(groups) AS group_count, sum(trajectories) AS trajectory_count,
       sum(reward_mean * trajectories) AS reward_sum,
       sum((toFloat64(trajectories) - 1) * reward_std * reward_std + trajectories * reward_mean * reward_mean) AS reward_square_sum,
       sum(success_rate * trajectories) AS success_sum,
       sum(mean_in_group_reward_std * groups) AS in_group_std_sum,
       sum(mean_length * trajectories) AS env_steps,
       sum(invalid_action_rate * mean_length * trajectories) AS invalid_actions,
       sum(incomplete) AS incomplete_count, sum(dropped_groups) AS dropped_group_count,
       ${closedColumns(true)}
FROM rollout_stats FINAL
WHERE ${batchWhere(q)}
GROUP BY bucket_start_ms
ORDER BY bucket_start_ms ASC
LIMIT ${sqlInt(q.limit + 1)}`;
}

/**
 * pass@k and pass^k per bucket (null bucketMs: over the whole window), weighted by the batches' group
 * counts: one row per bucket with parallel arrays of keys ('at:<k>' or 'hat:<k>') and values, and how many
 * batches reported pass values.
 */
export function passKSql(q: SeriesQuery, bucketMs: number | null): string {
  const bucket = bucketMs === null ? '0' : bucketExpr(bucketMs);
  return `SELECT bucket_start_ms, groupArray(pass_key) AS keys, groupArray(pass_value) AS values, max(key_batches) AS batches
FROM (
  SELECT ${bucket} AS bucket_start_ms, k_key AS pass_key, sum(k_value * groups) / sum(groups) AS pass_value, count() AS key_batches
  FROM rollout_stats FINAL
  ARRAY JOIN
    arrayConcat(arrayMap(k -> concat('at:', k), pass_at_k_keys), arrayMap(k -> concat('hat:', k), pass_hat_k_keys)) AS k_key,
    arrayConcat(pass_at_k_values, pass_hat_k_values) AS k_value
  WHERE ${batchWhere(q)}
  GROUP BY bucket_start_ms, k_key
)
GROUP BY bucket_start_ms
ORDER BY bucket_start_ms ASC
LIMIT ${sqlInt(q.limit + 1)}`;
}

/**
 * The smallest whole-second bucket that puts a span of `spanMs` into at most `limit` buckets: a span cut
 * into buckets aligned at multiples of the width touches at most floor(span / width) + 2 of them.
 */
export function autoBucketMs(spanMs: number, limit: number): number {
  const raw = limit < 3 ? spanMs + 1 : Math.ceil(spanMs / (limit - 2));
  return Math.min(MAX_BUCKET_MS, Math.max(MIN_BUCKET_MS, Math.ceil(raw / 1000) * 1000));
}

export interface ExtentRow {
  batches: number;
  first_ms: number;
  last_ms: number;
  env_steps_before: number | null;
}

/** A batch row of the curve: the rollout-stats columns it reads. */
export type BatchPointRow = Pick<
  RolloutStatsRow,
  | 'batch_id'
  | 'event_time_ms'
  | 'groups'
  | 'trajectories'
  | 'reward_mean'
  | 'reward_std'
  | 'mean_in_group_reward_std'
  | 'success_rate'
  | 'pass_at_k_keys'
  | 'pass_at_k_values'
  | 'pass_hat_k_keys'
  | 'pass_hat_k_values'
  | 'mean_length'
  | 'invalid_action_rate'
  | 'incomplete'
  | 'dropped_groups'
> &
  ClosedCountRow;

/** Groups closed by each reason in a batch or a bucket. */
export interface ClosedCountRow {
  closed_full_count: number;
  closed_idle_count: number;
  closed_timeout_count: number;
  closed_evicted_count: number;
}

export interface BucketPointRow extends ClosedCountRow {
  bucket_start_ms: number;
  batches: number;
  last_event_time_ms: number;
  group_count: number;
  trajectory_count: number;
  reward_sum: number | null;
  reward_square_sum: number | null;
  success_sum: number | null;
  in_group_std_sum: number | null;
  env_steps: number | null;
  invalid_actions: number | null;
  incomplete_count: number;
  dropped_group_count: number;
}

export interface PassKRow {
  bucket_start_ms: number;
  keys: string[];
  values: Array<number | null>;
  /** Batches that reported the most common k. */
  batches: number;
}

/** A batch, or a bucket of batches pooled exactly (rewardStd: the unbiased std over all their trajectories). */
export interface CurvePoint extends RolloutFigures {
  /** The batch's event time, or the start of the bucket. */
  readonly timeMs: number;
  /** The batch (null for a bucket of several). */
  readonly batchId: string | null;
  /** Batches in the point (1 without buckets). */
  readonly batches: number;
  /** The newest batch time in the point. */
  readonly lastEventTimeMs: number;
  /** rewardMean − rewardStd and rewardMean + rewardStd: the band a chart shades. */
  readonly rewardLow: number | null;
  readonly rewardHigh: number | null;
  /** Env steps (turns) in the point's trajectories. */
  readonly envSteps: number | null;
  /** Env steps of the run's batches up to and including this point. */
  readonly cumulativeEnvSteps: number | null;
  /** The newest policy version the learner had published by the point's newest batch; null before the first. */
  readonly policyVersion: number | null;
  /** Groups of the point closed by each reason: full, idle (no member for a while), timeout, evicted (docs/design/group-completion.md). */
  readonly closedFull: number;
  readonly closedIdle: number;
  readonly closedTimeout: number;
  readonly closedEvicted: number;
}

/** What one batch or bucket holds, before the run's progress up to it is added. */
type PointFigures = Omit<CurvePoint, 'cumulativeEnvSteps' | 'policyVersion'>;

const closedCounts = (row: ClosedCountRow): Pick<CurvePoint, 'closedFull' | 'closedIdle' | 'closedTimeout' | 'closedEvicted'> => ({
  closedFull: int(row.closed_full_count),
  closedIdle: int(row.closed_idle_count),
  closedTimeout: int(row.closed_timeout_count),
  closedEvicted: int(row.closed_evicted_count),
});

const band = (mean: number | null, std: number | null): [number | null, number | null] => (mean === null || std === null ? [null, null] : [mean - std, mean + std]);

const ratio = (sum: number | null, count: number): number | null => (sum === null || count === 0 ? null : sum / count);

export function batchPoint(row: BatchPointRow): PointFigures {
  const trajectories = int(row.trajectories);
  const rewardMean = num(row.reward_mean);
  const rewardStd = num(row.reward_std);
  const meanLength = num(row.mean_length);
  const [rewardLow, rewardHigh] = band(rewardMean, rewardStd);
  return {
    timeMs: int(row.event_time_ms),
    batchId: row.batch_id,
    batches: 1,
    lastEventTimeMs: int(row.event_time_ms),
    groups: int(row.groups),
    trajectories,
    rewardMean,
    rewardStd,
    rewardLow,
    rewardHigh,
    successRate: num(row.success_rate),
    meanInGroupRewardStd: num(row.mean_in_group_reward_std),
    passAtK: kMap(row.pass_at_k_keys, row.pass_at_k_values),
    passHatK: kMap(row.pass_hat_k_keys, row.pass_hat_k_values),
    meanLength,
    invalidActionRate: num(row.invalid_action_rate),
    incomplete: int(row.incomplete),
    droppedGroups: int(row.dropped_groups),
    ...closedCounts(row),
    envSteps: meanLength === null ? null : Math.round(meanLength * trajectories),
  };
}

/** The pooled statistics of a bucket; pass maps come from the passK query (empty until merged). */
export function bucketPoint(row: BucketPointRow): PointFigures {
  const n = int(row.trajectory_count);
  const groups = int(row.group_count);
  const rewardMean = ratio(num(row.reward_sum), n);
  const squares = num(row.reward_square_sum);
  // Σ[(n_i − 1)s_i² + n_i m_i²] − N·M² is the sum of squared deviations of all N rewards from their mean.
  const rewardStd = rewardMean === null || squares === null ? null : n < 2 ? 0 : Math.sqrt(Math.max(0, (squares - n * rewardMean * rewardMean) / (n - 1)));
  const envSteps = num(row.env_steps);
  const [rewardLow, rewardHigh] = band(rewardMean, rewardStd);
  return {
    timeMs: int(row.bucket_start_ms),
    batchId: null,
    batches: int(row.batches),
    lastEventTimeMs: int(row.last_event_time_ms),
    groups,
    trajectories: n,
    rewardMean,
    rewardStd,
    rewardLow,
    rewardHigh,
    successRate: ratio(num(row.success_sum), n),
    meanInGroupRewardStd: ratio(num(row.in_group_std_sum), groups),
    passAtK: {},
    passHatK: {},
    meanLength: ratio(envSteps, n),
    invalidActionRate: envSteps === null ? null : envSteps === 0 ? 0 : ratio(num(row.invalid_actions), envSteps),
    incomplete: int(row.incomplete_count),
    droppedGroups: int(row.dropped_group_count),
    ...closedCounts(row),
    envSteps: envSteps === null ? null : Math.round(envSteps),
  };
}

/** Splits a passK row's 'at:<k>' / 'hat:<k>' keys into the two maps. */
export function passMaps(row: PassKRow): { passAtK: Record<string, number | null>; passHatK: Record<string, number | null> } {
  const at: [string[], unknown[]] = [[], []];
  const hat: [string[], unknown[]] = [[], []];
  row.keys.forEach((key, i) => {
    const [kind, k] = key.split(':') as [string, string];
    const target = kind === 'at' ? at : hat;
    target[0].push(k);
    target[1].push(row.values[i]);
  });
  return { passAtK: kMap(...at), passHatK: kMap(...hat) };
}

export interface SeriesPlan {
  /** Batches in the window. */
  readonly batches: number;
  /** The bucket used: the one asked for, one chosen automatically, or null (one point per batch). */
  readonly bucketMs: number | null;
  readonly autoBucketed: boolean;
  readonly envStepsBefore: number | null;
}

/** Decides between per-batch points and buckets from the window's extent. */
export async function planSeries(store: AnalyticsStore, q: SeriesQuery): Promise<SeriesPlan> {
  const [extent] = await read<ExtentRow>(store, extentSql(q));
  const batches = int(extent?.batches);
  const envStepsBefore = extent === undefined ? 0 : num(extent.env_steps_before);
  if (q.bucketMs !== undefined) return { batches, bucketMs: q.bucketMs, autoBucketed: false, envStepsBefore };
  if (batches <= q.limit) return { batches, bucketMs: null, autoBucketed: false, envStepsBefore };
  return { batches, bucketMs: autoBucketMs(int(extent?.last_ms) - int(extent?.first_ms), q.limit), autoBucketed: true, envStepsBefore };
}

export interface CurveResult extends SeriesPlan {
  /** More points matched than `limit`: the oldest `limit` are returned (widen bucketMs to see the rest). */
  readonly truncated: boolean;
  readonly points: CurvePoint[];
}

/** Adds the running env-step count, from the steps before the window, and the policy version of each point. */
function withProgress(points: readonly PointFigures[], before: number | null, versions: ReadonlyArray<number | null>): CurvePoint[] {
  let total = before === null ? null : Math.round(before);
  return points.map((point, i) => {
    total = total === null || point.envSteps === null ? null : total + point.envSteps;
    return { ...point, cumulativeEnvSteps: total, policyVersion: versions[i] ?? null };
  });
}

/** The points with the run's progress up to each. */
async function progressed(store: AnalyticsStore, q: SeriesQuery, points: readonly PointFigures[], before: number | null): Promise<CurvePoint[]> {
  const versions = await versionsAt(
    store,
    q.runId,
    points.map((p) => p.lastEventTimeMs),
  );
  return withProgress(points, before, versions);
}

export async function queryCurve(store: AnalyticsStore, q: SeriesQuery): Promise<CurveResult> {
  const plan = await planSeries(store, q);
  if (plan.batches === 0) return { ...plan, truncated: false, points: [] };
  if (plan.bucketMs === null) {
    const rows = await read<BatchPointRow>(store, batchPointsSql(q));
    return { ...plan, truncated: rows.length > q.limit, points: await progressed(store, q, rows.slice(0, q.limit).map(batchPoint), plan.envStepsBefore) };
  }
  const [rows, passRows] = await Promise.all([read<BucketPointRow>(store, bucketPointsSql(q, plan.bucketMs)), read<PassKRow>(store, passKSql(q, plan.bucketMs))]);
  const pass = new Map(passRows.map((row) => [int(row.bucket_start_ms), passMaps(row)]));
  const points = rows.slice(0, q.limit).map((row) => ({ ...bucketPoint(row), ...(pass.get(int(row.bucket_start_ms)) ?? {}) }));
  return { ...plan, truncated: rows.length > q.limit, points: await progressed(store, q, points, plan.envStepsBefore) };
}

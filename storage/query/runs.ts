// GET /v1/runs: every run with events in a time window, newest activity first, from what the sink stored:
// steps (env, step rows, episodes started, policy versions that acted), trajectories (assembled and
// successful episodes), rollout batches, learner steps and published policy versions. One aggregate per
// table, unioned and summed by run — no JOIN. The small tables count by distinct key (uniqExact), so a row
// the sink stored twice is counted once without the cost of FINAL. The steps table is the big one (tens of
// millions of rows), where hashing every event id costs many times a plain scan (docs/design/runs-list-counts.md,
// docs/results/benchmarks.md#bench-queries), so steps are counted as rows — a step the sink stored twice after
// a crash counts twice until ClickHouse merges the duplicate away — and episodes as rows of step 0. Assembled
// episodes are distinct 64-bit hashes of their ids (half the time of hashing the strings; two ids collide
// with a chance of about 1 in 10^7 at a million episodes).
//
// With runIds only those runs are read (the run id leads every table's key, so the scan is theirs alone), over the
// widest window by default: how a page that names its runs, such as the comparison of runs, learns which exist.
import { DAY_MS, idListParam, limitParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { sqlInt, sqlString } from './sql.js';
import { int, read, type AnalyticsStore } from './store.js';

export const RUNS_DEFAULT_LIMIT = 100;
/** Runs with events in the last 30 days unless sinceMs says otherwise. */
export const RUNS_DEFAULT_WINDOW_MS = 30 * DAY_MS;
/** The widest window: every table is scanned over it (not only one run's rows). */
export const RUNS_MAX_WINDOW_MS = 366 * DAY_MS;
/** Most run ids one request may name. */
export const RUNS_MAX_IDS = 100;

export interface RunsQuery extends TimeWindow {
  readonly limit: number;
  /** Only these runs. */
  readonly runIds?: readonly string[];
}

export const runsParams = ['limit', 'sinceMs', 'untilMs', 'runIds'] as const;

export function parseRunsQuery(query: RawQuery, nowMs: number): RunsQuery {
  const values = readQuery(query, runsParams);
  const limit = limitParam(values, RUNS_DEFAULT_LIMIT);
  const runIds = idListParam(values, 'runIds', RUNS_MAX_IDS);
  const defaultWindowMs = runIds === undefined ? RUNS_DEFAULT_WINDOW_MS : RUNS_MAX_WINDOW_MS;
  return { limit, ...windowParams(values, nowMs, { defaultWindowMs, maxWindowMs: RUNS_MAX_WINDOW_MS }), ...(runIds === undefined ? {} : { runIds }) };
}

/** A table's rows in the window (by `column`), of the runs asked for when the query names them. */
function inWindow(column: string, q: RunsQuery): string {
  const window = `${column} >= ${sqlInt(q.sinceMs)} AND ${column} < ${sqlInt(q.untilMs)}`;
  return q.runIds === undefined ? window : `run_id IN (${q.runIds.map(sqlString).join(', ')}) AND ${window}`;
}

/**
 * The runs SELECT; asks for limit + 1 rows so the caller can say whether there were more. Every part has
 * the same columns and types (UNION ALL on 18.16 does not convert types): env name/version, first and
 * last event time, then counts, then the highest policy version (-1 where the table has none).
 */
export function runsSql(q: RunsQuery): string {
  const zero = 'toUInt64(0)';
  const none = "''";
  const parts = [
    `SELECT run_id, any(env_name) AS env_name, any(env_version) AS env_version,
         min(event_time_ms) AS first_ms, max(event_time_ms) AS last_ms,
         toUInt64(count()) AS step_events, toUInt64(countIf(step_index = 0)) AS episodes,
         ${zero} AS trajectories, ${zero} AS successes, ${zero} AS batches, ${zero} AS learner_steps,
         toInt64(max(policy_version)) AS policy_version
       FROM steps WHERE ${inWindow('event_time_ms', q)} GROUP BY run_id`,
    `SELECT run_id, any(env_name), any(env_version), min(first_event_time_ms), max(last_event_time_ms),
         ${zero}, ${zero}, toUInt64(uniqExact(cityHash64(episode_id))), toUInt64(uniqExactIf(cityHash64(episode_id), success = 1)), ${zero}, ${zero},
         toInt64(max(max_policy_version))
       FROM trajectories WHERE ${inWindow('last_event_time_ms', q)} GROUP BY run_id`,
    `SELECT run_id, ${none}, ${none}, min(event_time_ms), max(event_time_ms),
         ${zero}, ${zero}, ${zero}, ${zero}, toUInt64(uniqExact(batch_id)), ${zero}, toInt64(-1)
       FROM rollout_stats WHERE scope = 'batch' AND ${inWindow('event_time_ms', q)} GROUP BY run_id`,
    `SELECT run_id, ${none}, ${none}, min(event_time_ms), max(event_time_ms),
         ${zero}, ${zero}, ${zero}, ${zero}, ${zero}, toUInt64(uniqExact(step)), toInt64(max(policy_version))
       FROM learner_steps WHERE ${inWindow('event_time_ms', q)} GROUP BY run_id`,
    `SELECT run_id, ${none}, ${none}, min(created_at_ms), max(created_at_ms),
         ${zero}, ${zero}, ${zero}, ${zero}, ${zero}, ${zero}, toInt64(max(version))
       FROM policy_versions WHERE ${inWindow('created_at_ms', q)} GROUP BY run_id`,
  ];
  return `SELECT run_id,
       anyIf(env_name, env_name != '') AS env_name, anyIf(env_version, env_version != '') AS env_version,
       min(first_ms) AS first_event_time_ms, max(last_ms) AS last_event_time_ms,
       sum(step_events) AS step_events, sum(episodes) AS episodes, sum(trajectories) AS trajectories,
       sum(successes) AS successes, sum(batches) AS batches, sum(learner_steps) AS learner_steps,
       max(policy_version) AS latest_policy_version
FROM (
${parts.join('\nUNION ALL\n')}
)
GROUP BY run_id
ORDER BY last_event_time_ms DESC, run_id ASC
LIMIT ${sqlInt(q.limit + 1)}`;
}

export interface RunRow {
  run_id: string;
  env_name: string;
  env_version: string;
  first_event_time_ms: number;
  last_event_time_ms: number;
  step_events: number;
  episodes: number;
  trajectories: number;
  successes: number;
  batches: number;
  learner_steps: number;
  latest_policy_version: number;
}

export interface RunView {
  readonly runId: string;
  /** The environment of the run's steps or trajectories; null when only learner-side events were seen. */
  readonly envName: string | null;
  readonly envVersion: string | null;
  /** First and last event time seen in the window, ms since the epoch. */
  readonly firstEventTimeMs: number;
  readonly lastEventTimeMs: number;
  /** Step rows stored (a redelivered duplicate counts until ClickHouse merges it; see the header). */
  readonly stepEvents: number;
  /** Episodes whose first step (index 0) is stored, counted the same way. */
  readonly episodes: number;
  /** Episodes assembled into trajectories, and how many of them succeeded. */
  readonly assembledEpisodes: number;
  readonly successfulEpisodes: number;
  /** Rollout batches (rollout_stats rows of scope 'batch'). */
  readonly rolloutBatches: number;
  readonly learnerSteps: number;
  /** Highest policy version seen (published, or that acted in a step); null when none. */
  readonly latestPolicyVersion: number | null;
}

export function runView(row: RunRow): RunView {
  const version = int(row.latest_policy_version);
  return {
    runId: row.run_id,
    envName: row.env_name === '' ? null : row.env_name,
    envVersion: row.env_version === '' ? null : row.env_version,
    firstEventTimeMs: int(row.first_event_time_ms),
    lastEventTimeMs: int(row.last_event_time_ms),
    stepEvents: int(row.step_events),
    episodes: int(row.episodes),
    assembledEpisodes: int(row.trajectories),
    successfulEpisodes: int(row.successes),
    rolloutBatches: int(row.batches),
    learnerSteps: int(row.learner_steps),
    latestPolicyVersion: version < 0 ? null : version,
  };
}

export interface RunsResult {
  readonly runs: RunView[];
  readonly truncated: boolean;
}

export async function queryRuns(store: AnalyticsStore, q: RunsQuery): Promise<RunsResult> {
  const rows = await read<RunRow>(store, runsSql(q));
  return { runs: rows.slice(0, q.limit).map(runView), truncated: rows.length > q.limit };
}

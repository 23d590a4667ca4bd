// How far a run had got at a given time, so that charts can put runs side by side by progress rather than by the
// clock: the env steps of the run's rollout batches recorded up to that time (the curve's cumulativeEnvSteps), and
// the newest policy version the learner had published by then. Each is read as a step function of time, one row
// per distinct time from the earliest time asked on (everything before it pooled into one row at time 0), and
// looked up for each time in TypeScript: portable SQL (no ASOF JOIN on ClickHouse 18.16), and one scan of the run.
import { sqlInt, sqlString } from './sql.js';
import { int, num, read, type AnalyticsStore } from './store.js';

/** A step of a step function of time: at `time_ms` the env steps grow by `amount`, or the version becomes `amount`. */
export interface ProgressRow {
  time_ms: number;
  amount: number | null;
}

/** The env steps of the run's batches by event time up to untilMs; those before fromMs pooled at time 0. FINAL: a batch stored twice counts once. */
export function envStepsByTimeSql(runId: string, fromMs: number, untilMs: number): string {
  return `SELECT if(event_time_ms < ${sqlInt(fromMs)}, 0, event_time_ms) AS time_ms, sum(mean_length * trajectories) AS amount
FROM rollout_stats FINAL
WHERE run_id = ${sqlString(runId)} AND scope = 'batch' AND event_time_ms <= ${sqlInt(untilMs)}
GROUP BY time_ms
ORDER BY time_ms ASC`;
}

/** The highest policy version published by time up to untilMs; those before fromMs pooled at time 0. */
export function versionsByTimeSql(runId: string, fromMs: number, untilMs: number): string {
  return `SELECT if(created_at_ms < ${sqlInt(fromMs)}, 0, created_at_ms) AS time_ms, max(version) AS amount
FROM policy_versions
WHERE run_id = ${sqlString(runId)} AND created_at_ms <= ${sqlInt(untilMs)}
GROUP BY time_ms
ORDER BY time_ms ASC`;
}

/**
 * For each time, the running sum (env steps, rounded) or running maximum (versions) of the rows at or before it;
 * null where no row is. Rows without an amount (a non-finite sum) are skipped.
 */
export function progressAt(rows: readonly ProgressRow[], timesMs: readonly number[], combine: 'sum' | 'max'): Array<number | null> {
  const steps = rows
    .map((row) => ({ timeMs: int(row.time_ms), amount: num(row.amount) }))
    .filter((step): step is { timeMs: number; amount: number } => step.amount !== null)
    .sort((a, b) => a.timeMs - b.timeMs);
  const order = timesMs.map((_, i) => i).sort((a, b) => timesMs[a]! - timesMs[b]!);
  const out: Array<number | null> = timesMs.map(() => null);
  let next = 0;
  let value: number | null = null;
  for (const i of order) {
    while (next < steps.length && steps[next]!.timeMs <= timesMs[i]!) {
      const { amount } = steps[next++]!;
      value = value === null ? amount : combine === 'sum' ? value + amount : Math.max(value, amount);
    }
    out[i] = value === null ? null : combine === 'sum' ? Math.round(value) : value;
  }
  return out;
}

/** The run's env steps at each time (null before its first rollout batch); no query for no times. */
export async function envStepsAt(store: AnalyticsStore, runId: string, timesMs: readonly number[]): Promise<Array<number | null>> {
  if (timesMs.length === 0) return [];
  const rows = await read<ProgressRow>(store, envStepsByTimeSql(runId, Math.min(...timesMs), Math.max(...timesMs)));
  return progressAt(rows, timesMs, 'sum');
}

/** The run's newest published policy version at each time (null before its first); no query for no times. */
export async function versionsAt(store: AnalyticsStore, runId: string, timesMs: readonly number[]): Promise<Array<number | null>> {
  if (timesMs.length === 0) return [];
  const rows = await read<ProgressRow>(store, versionsByTimeSql(runId, Math.min(...timesMs), Math.max(...timesMs)));
  return progressAt(rows, timesMs, 'max');
}

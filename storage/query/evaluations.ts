// GET /v1/runs/:runId/evaluations: the held-out evaluations of a run's policy versions (the evaluations
// table), in policy-version order by default. Field names are the EvaluationEvent's
// (schemas/evaluation/v1.avsc). FINAL, so a version evaluated twice, or an event the sink stored twice,
// shows once.
import { RUN_WINDOW, enumParam, limitParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { sqlInt, sqlString } from './sql.js';
import { int, num, read, type AnalyticsStore } from './store.js';

export const EVALUATIONS_DEFAULT_LIMIT = 1000;

export interface EvaluationsQuery extends TimeWindow {
  readonly runId: string;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

export const evaluationsParams = ['limit', 'sinceMs', 'untilMs', 'order'] as const;

export function parseEvaluationsQuery(runId: string, query: RawQuery, nowMs: number): EvaluationsQuery {
  const values = readQuery(query, evaluationsParams);
  const limit = limitParam(values, EVALUATIONS_DEFAULT_LIMIT);
  const window = windowParams(values, nowMs, RUN_WINDOW);
  return { runId, limit, ...window, order: enumParam(values, 'order', ['asc', 'desc'], 'asc') };
}

/** The columns of an evaluations row, as read by this module and the event stream. */
export const EVALUATION_COLUMNS = `run_id, policy_version, trained_iteration, env_steps, env_name, env_options, tasks, greedy_success,
       mean_reward, mean_steps, random_success, duration_ms, event_time_ms`;

/** The evaluations of a run in a window, without ORDER BY and LIMIT. */
export function evaluationsSelect(q: Pick<EvaluationsQuery, 'runId' | 'sinceMs' | 'untilMs'>): string {
  return `SELECT ${EVALUATION_COLUMNS}
FROM evaluations FINAL
WHERE run_id = ${sqlString(q.runId)} AND event_time_ms >= ${sqlInt(q.sinceMs)} AND event_time_ms < ${sqlInt(q.untilMs)}`;
}

export function evaluationsSql(q: EvaluationsQuery): string {
  const direction = q.order === 'asc' ? 'ASC' : 'DESC';
  return `${evaluationsSelect(q)}
ORDER BY policy_version ${direction}
LIMIT ${sqlInt(q.limit + 1)}`;
}

export interface EvaluationRow {
  run_id: string;
  policy_version: number;
  trained_iteration: number;
  env_steps: number;
  env_name: string;
  env_options: string;
  tasks: number;
  greedy_success: number | null;
  mean_reward: number | null;
  mean_steps: number | null;
  random_success: number | null;
  duration_ms: number | null;
  event_time_ms: number;
}

/** An EvaluationEvent as JSON (null for a float that is not finite); envOptions stays the JSON text the event carries. */
export interface EvaluationView {
  readonly runId: string;
  readonly policyVersion: number;
  /** -1: trained on no iteration. */
  readonly trainedIteration: number;
  /** -1: unknown. */
  readonly envSteps: number;
  readonly envName: string;
  readonly envOptions: string;
  readonly tasks: number;
  readonly greedySuccess: number | null;
  readonly meanReward: number | null;
  readonly meanSteps: number | null;
  readonly randomSuccess: number | null;
  readonly durationMs: number | null;
  readonly eventTimeMs: number;
}

export function evaluationView(row: EvaluationRow): EvaluationView {
  return {
    runId: row.run_id,
    policyVersion: int(row.policy_version),
    trainedIteration: int(row.trained_iteration),
    envSteps: int(row.env_steps),
    envName: row.env_name,
    envOptions: row.env_options,
    tasks: int(row.tasks),
    greedySuccess: num(row.greedy_success),
    meanReward: num(row.mean_reward),
    meanSteps: num(row.mean_steps),
    randomSuccess: num(row.random_success),
    durationMs: num(row.duration_ms),
    eventTimeMs: int(row.event_time_ms),
  };
}

export interface EvaluationsResult {
  readonly evaluations: EvaluationView[];
  readonly truncated: boolean;
}

export async function queryEvaluations(store: AnalyticsStore, q: EvaluationsQuery): Promise<EvaluationsResult> {
  const rows = await read<EvaluationRow>(store, evaluationsSql(q));
  return { evaluations: rows.slice(0, q.limit).map(evaluationView), truncated: rows.length > q.limit };
}

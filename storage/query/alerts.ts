// GET /v1/runs/:runId/alerts: the collapse alerts of a run (collapse_alerts with their evidence map from
// collapse_alert_evidence), newest first by default, optionally of one detector kind or severity. Each alert
// says how far the run had got when it was raised (`envSteps`, progress.ts); the event stream leaves it null.
import { RUN_WINDOW, enumParam, limitParam, patternParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { envStepsAt } from './progress.js';
import { sqlInt, sqlString } from './sql.js';
import { int, mapOf, num, read, type AnalyticsStore } from './store.js';

export const ALERTS_DEFAULT_LIMIT = 100;

export interface AlertsQuery extends TimeWindow {
  readonly runId: string;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
  readonly kind?: string;
  readonly severity?: string;
}

export const alertsParams = ['limit', 'sinceMs', 'untilMs', 'order', 'kind', 'severity'] as const;

export function parseAlertsQuery(runId: string, query: RawQuery, nowMs: number): AlertsQuery {
  const values = readQuery(query, alertsParams);
  const limit = limitParam(values, ALERTS_DEFAULT_LIMIT);
  const window = windowParams(values, nowMs, RUN_WINDOW);
  const order = enumParam(values, 'order', ['asc', 'desc'], 'desc');
  const kind = patternParam(values, 'kind', /^[a-z0-9][a-z0-9_-]{0,63}$/, 'a detector kind (lowercase letters, digits, _ and -), e.g. entropy_collapse');
  const severity = patternParam(values, 'severity', /^[a-z]{1,32}$/, 'a severity (lowercase letters), e.g. warning');
  return { runId, limit, ...window, order, ...(kind === undefined ? {} : { kind }), ...(severity === undefined ? {} : { severity }) };
}

const runWindow = (q: Pick<AlertsQuery, 'runId' | 'sinceMs' | 'untilMs'>): string =>
  `run_id = ${sqlString(q.runId)} AND event_time_ms >= ${sqlInt(q.sinceMs)} AND event_time_ms < ${sqlInt(q.untilMs)}`;

/** The alert columns with the evidence joined in; `where` adds to the run-and-window filter. */
export function alertsSelect(q: Pick<AlertsQuery, 'runId' | 'sinceMs' | 'untilMs'>, extraWhere: readonly string[] = []): string {
  return `SELECT alert_id, run_id, kind, severity, learner_step, policy_version, value, threshold, message, event_time_ms,
       evidence_keys, evidence_values
FROM collapse_alerts FINAL
ANY LEFT JOIN (
  SELECT run_id, alert_id, evidence_keys, evidence_values
  FROM collapse_alert_evidence FINAL
  WHERE ${runWindow(q)}
) AS evidence USING (run_id, alert_id)
WHERE ${[runWindow(q), ...extraWhere].join(' AND ')}`;
}

export function alertsSql(q: AlertsQuery): string {
  const extra: string[] = [];
  if (q.kind !== undefined) extra.push(`kind = ${sqlString(q.kind)}`);
  if (q.severity !== undefined) extra.push(`severity = ${sqlString(q.severity)}`);
  const direction = q.order === 'asc' ? 'ASC' : 'DESC';
  return `${alertsSelect(q, extra)}
ORDER BY event_time_ms ${direction}, alert_id ${direction}
LIMIT ${sqlInt(q.limit + 1)}`;
}

export interface AlertRow {
  alert_id: string;
  run_id: string;
  kind: string;
  severity: string;
  learner_step: number;
  policy_version: number;
  value: number | null;
  threshold: number | null;
  message: string;
  event_time_ms: number;
  evidence_keys: string[];
  evidence_values: Array<number | null>;
}

/** A CollapseAlertEvent as JSON (null for a float that is not finite — a 'nan' alert's value is NaN). */
export interface AlertView {
  readonly alertId: string;
  readonly runId: string;
  readonly kind: string;
  readonly severity: string;
  readonly learnerStep: number;
  readonly policyVersion: number;
  readonly value: number | null;
  readonly threshold: number | null;
  readonly message: string;
  readonly evidence: Record<string, number | null>;
  readonly eventTimeMs: number;
  /** Env steps of the run's rollout batches recorded at or before the alert; null before the first, and in the event stream. */
  readonly envSteps: number | null;
}

export function alertView(row: AlertRow, envSteps: number | null = null): AlertView {
  return {
    alertId: row.alert_id,
    runId: row.run_id,
    kind: row.kind,
    severity: row.severity,
    learnerStep: int(row.learner_step),
    policyVersion: int(row.policy_version),
    value: num(row.value),
    threshold: num(row.threshold),
    message: row.message,
    evidence: mapOf(row.evidence_keys, row.evidence_values),
    eventTimeMs: int(row.event_time_ms),
    envSteps,
  };
}

export interface AlertsResult {
  readonly alerts: AlertView[];
  readonly truncated: boolean;
}

export async function queryAlerts(store: AnalyticsStore, q: AlertsQuery): Promise<AlertsResult> {
  const rows = await read<AlertRow>(store, alertsSql(q));
  const kept = rows.slice(0, q.limit);
  const envSteps = await envStepsAt(
    store,
    q.runId,
    kept.map((row) => int(row.event_time_ms)),
  );
  return { alerts: kept.map((row, i) => alertView(row, envSteps[i] ?? null)), truncated: rows.length > q.limit };
}

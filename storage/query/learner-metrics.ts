// GET /v1/runs/:runId/learner-metrics: one row per learner update (optimiser step) with every field of the
// LearnerStepEvent: learner_steps joined with learner_step_details (clipFractionLow, backend and the free
// `metrics` map, where a learner puts what has no column — importance-weight statistics, for example).
//
// A diverging learner reports NaN and infinities; JSON has no literal for them, so they come back as null
// and `nonFinite` names each such field with its value ('nan', 'inf', '-inf') — a chart can mark them.
//
// Each step also says how far the run had got when it ran (`envSteps`, progress.ts), so runs can be compared by
// env steps; the event stream, which sends one row at a time, leaves it null.
import { RUN_WINDOW, enumParam, limitParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { envStepsAt } from './progress.js';
import { sqlInt, sqlString } from './sql.js';
import { int, mapOf, num, read, type AnalyticsStore } from './store.js';

export const LEARNER_METRICS_DEFAULT_LIMIT = 1000;

export interface LearnerMetricsQuery extends TimeWindow {
  readonly runId: string;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
}

export const learnerMetricsParams = ['limit', 'sinceMs', 'untilMs', 'order'] as const;

export function parseLearnerMetricsQuery(runId: string, query: RawQuery, nowMs: number): LearnerMetricsQuery {
  const values = readQuery(query, learnerMetricsParams);
  const limit = limitParam(values, LEARNER_METRICS_DEFAULT_LIMIT);
  const window = windowParams(values, nowMs, RUN_WINDOW);
  return { runId, limit, ...window, order: enumParam(values, 'order', ['asc', 'desc'], 'asc') };
}

/** Float columns of learner_steps and their event field names. */
const FLOAT_FIELDS: ReadonlyArray<readonly [column: string, field: string]> = [
  ['total_loss', 'totalLoss'],
  ['policy_loss', 'policyLoss'],
  ['kl_loss', 'klLoss'],
  ['entropy_loss', 'entropyLoss'],
  ['entropy', 'entropy'],
  ['kl', 'kl'],
  ['clip_fraction', 'clipFraction'],
  ['grad_norm_pre_clip', 'gradNormPreClip'],
  ['learning_rate', 'learningRate'],
  ['staleness_mean', 'stalenessMean'],
  ['staleness_max', 'stalenessMax'],
  ['duration_ms', 'durationMs'],
];

/** `field=value` for every float that is not finite (the field names are constants, not input). */
function nonFiniteExpr(): string {
  const columns = FLOAT_FIELDS.map(([column, field]) => `if(isFinite(${column}), '', concat('${field}=', toString(${column})))`);
  columns.push(`if(ifNull(isFinite(clip_fraction_low), 1), '', concat('clipFractionLow=', toString(assumeNotNull(clip_fraction_low))))`);
  return `arrayConcat(
         arrayFilter(x -> x != '', [${columns.join(', ')}]),
         arrayFilter(x -> x != '', arrayMap((k, v) -> if(isFinite(v), '', concat('metrics.', k, '=', toString(v))), metrics_keys, metrics_values)))`;
}

/** The window and run filter, for learner_steps and for the details subquery alike. */
const runWindow = (q: Pick<LearnerMetricsQuery, 'runId' | 'sinceMs' | 'untilMs'>): string =>
  `run_id = ${sqlString(q.runId)} AND event_time_ms >= ${sqlInt(q.sinceMs)} AND event_time_ms < ${sqlInt(q.untilMs)}`;

/** The learner steps of a run in a window with their details joined, without ORDER BY and LIMIT. */
export function learnerMetricsSelect(q: Pick<LearnerMetricsQuery, 'runId' | 'sinceMs' | 'untilMs'>): string {
  return `SELECT step, policy_version, ${FLOAT_FIELDS.map(([column]) => column).join(', ')}, tokens, samples, event_time_ms,
       clip_fraction_low, backend, metrics_keys, metrics_values, has_details,
       ${nonFiniteExpr()} AS non_finite
FROM learner_steps FINAL
ANY LEFT JOIN (
  SELECT run_id, step, clip_fraction_low, backend, metrics_keys, metrics_values, toUInt8(1) AS has_details
  FROM learner_step_details FINAL
  WHERE ${runWindow(q)}
) AS details USING (run_id, step)
WHERE ${runWindow(q)}`;
}

export function learnerMetricsSql(q: LearnerMetricsQuery): string {
  const direction = q.order === 'asc' ? 'ASC' : 'DESC';
  return `${learnerMetricsSelect(q)}
ORDER BY step ${direction}
LIMIT ${sqlInt(q.limit + 1)}`;
}

export interface LearnerMetricsRow {
  step: number;
  policy_version: number;
  total_loss: number | null;
  policy_loss: number | null;
  kl_loss: number | null;
  entropy_loss: number | null;
  entropy: number | null;
  kl: number | null;
  clip_fraction: number | null;
  grad_norm_pre_clip: number | null;
  learning_rate: number | null;
  staleness_mean: number | null;
  staleness_max: number | null;
  duration_ms: number | null;
  tokens: number;
  samples: number;
  event_time_ms: number;
  clip_fraction_low: number | null;
  backend: string;
  metrics_keys: string[];
  metrics_values: Array<number | null>;
  has_details: number;
  non_finite: string[];
}

/** A LearnerStepEvent as JSON, plus `nonFinite`. */
export interface LearnerMetricsView {
  readonly step: number;
  readonly policyVersion: number;
  readonly totalLoss: number | null;
  readonly policyLoss: number | null;
  readonly klLoss: number | null;
  readonly entropyLoss: number | null;
  readonly entropy: number | null;
  readonly kl: number | null;
  readonly clipFraction: number | null;
  /** Null when the learner does not report it (or the details row is missing). */
  readonly clipFractionLow: number | null;
  readonly gradNormPreClip: number | null;
  readonly learningRate: number | null;
  readonly tokens: number;
  readonly samples: number;
  readonly stalenessMean: number | null;
  readonly stalenessMax: number | null;
  readonly durationMs: number | null;
  /** Null when the details row (backend, metrics) has not been stored. */
  readonly backend: string | null;
  readonly metrics: Record<string, number | null>;
  readonly eventTimeMs: number;
  /** Fields whose value is NaN or infinite (shown as null above), e.g. {"totalLoss": "nan"}. */
  readonly nonFinite: Record<string, string>;
  /** Env steps of the run's rollout batches recorded at or before the step; null before the first, and in the event stream. */
  readonly envSteps: number | null;
}

export function learnerMetricsView(row: LearnerMetricsRow, envSteps: number | null = null): LearnerMetricsView {
  const nonFinite: Record<string, string> = {};
  for (const entry of row.non_finite ?? []) {
    const at = entry.lastIndexOf('=');
    nonFinite[entry.slice(0, at)] = entry.slice(at + 1);
  }
  const hasDetails = int(row.has_details) === 1;
  return {
    step: int(row.step),
    policyVersion: int(row.policy_version),
    totalLoss: num(row.total_loss),
    policyLoss: num(row.policy_loss),
    klLoss: num(row.kl_loss),
    entropyLoss: num(row.entropy_loss),
    entropy: num(row.entropy),
    kl: num(row.kl),
    clipFraction: num(row.clip_fraction),
    clipFractionLow: num(row.clip_fraction_low),
    gradNormPreClip: num(row.grad_norm_pre_clip),
    learningRate: num(row.learning_rate),
    tokens: int(row.tokens),
    samples: int(row.samples),
    stalenessMean: num(row.staleness_mean),
    stalenessMax: num(row.staleness_max),
    durationMs: num(row.duration_ms),
    backend: hasDetails ? row.backend : null,
    metrics: mapOf(row.metrics_keys, row.metrics_values),
    eventTimeMs: int(row.event_time_ms),
    nonFinite,
    envSteps,
  };
}

export interface LearnerMetricsResult {
  readonly learnerSteps: LearnerMetricsView[];
  readonly truncated: boolean;
}

export async function queryLearnerMetrics(store: AnalyticsStore, q: LearnerMetricsQuery): Promise<LearnerMetricsResult> {
  const rows = await read<LearnerMetricsRow>(store, learnerMetricsSql(q));
  const kept = rows.slice(0, q.limit);
  const envSteps = await envStepsAt(
    store,
    q.runId,
    kept.map((row) => int(row.event_time_ms)),
  );
  return { learnerSteps: kept.map((row, i) => learnerMetricsView(row, envSteps[i] ?? null)), truncated: rows.length > q.limit };
}

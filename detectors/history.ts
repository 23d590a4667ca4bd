// The detectors over a run's history in ClickHouse (the tables the sink fills), for runs that finished
// before the detectors ran, or to check what the live detectors said.
//
//   learnerStepsSql / rolloutBatchesSql  the rows to rebuild the run's events from; historicalAlerts runs
//                                        the same engine over them, so history and live agree by construction.
//   gradNormSpikeSql                     the grad-norm rule in SQL alone (rolling median/MAD robust z over
//                                        the previous `window` updates), for dashboards and ad-hoc queries.
// Portable SQL: ClickHouse 18.16 has no window functions (and its greatest() takes two arguments), so rolling statistics are array functions over
// one groupArray per run (fine for the thousands of updates a run has). FINAL collapses the sink's copies.
import type { LearnerStepEvent, RolloutStatsEvent } from '../schemas/index.js';
import { buildDetectorsConfig, type DetectorsConfig } from './config.js';
import { sqlString } from '../storage/query/sql.js';
import { alertEvent } from './alert-event.js';
import { CollapseEngine, type DetectorInput } from './engine.js';
import type { CollapseAlertEvent } from '../schemas/index.js';
import { gradNormSpikeDefaults, type GradNormSpikeConfig } from './grad-norm-spike.js';

/** What the history queries need of ClickHouse (ClickHouseHttp has it). */
export interface HistoryStore {
  queryJson<T = Record<string, unknown>>(sql: string): Promise<T[]>;
}

/** Every learner step of a run with its details, in step order. */
export function learnerStepsSql(runId: string): string {
  const run = sqlString(runId);
  return `SELECT run_id, step, policy_version, total_loss, policy_loss, kl_loss, entropy_loss, entropy, kl, clip_fraction,
       clip_fraction_low, grad_norm_pre_clip, learning_rate, tokens, samples, staleness_mean, staleness_max, duration_ms,
       event_time_ms, backend, metrics_keys, metrics_values
FROM learner_steps FINAL
ANY LEFT JOIN (
  SELECT run_id, step, clip_fraction_low, backend, metrics_keys, metrics_values
  FROM learner_step_details FINAL
  WHERE run_id = ${run}
) AS details USING (run_id, step)
WHERE run_id = ${run}
ORDER BY step`;
}

/** Every batch-scope rollout statistic of a run, in the order the processors wrote them (topic order). */
export function rolloutBatchesSql(runId: string): string {
  return `SELECT run_id, batch_id, groups, trajectories, reward_mean, reward_std, mean_in_group_reward_std, success_rate,
       pass_at_k_keys, pass_at_k_values, pass_hat_k_keys, pass_hat_k_values, mean_length, invalid_action_rate, incomplete,
       dropped_groups, dropped_by_reason_keys, dropped_by_reason_values, event_time_ms
FROM rollout_stats FINAL
WHERE run_id = ${sqlString(runId)} AND scope = 'batch'
ORDER BY kafka_partition, kafka_offset`;
}

/**
 * Per learner step of a run: the gradient norm, the median and MAD of the previous `window` values (of
 * ln(norm) when logScale), the robust z and whether it is above k — the grad-norm spike rule without its
 * episode latch (consecutive spiking updates all show `spike` = 1). Steps with a non-finite or (log) ≤ 0
 * norm are left out, as the detector skips them.
 */
export function gradNormSpikeSql(runId: string, config: Partial<GradNormSpikeConfig> = {}): string {
  const { window, warmup, k, minRelativeScale, logScale } = { ...gradNormSpikeDefaults, ...config };
  const y = logScale ? 'log(x)' : 'x';
  const floor = logScale ? `${minRelativeScale}` : `${minRelativeScale} * abs(med)`;
  return `SELECT step, grad_norm, length(win) AS previous, arrayReduce('median', win) AS med,
       arrayReduce('median', arrayMap(v -> abs(v - med), win)) AS mad,
       greatest(greatest(1.4826 * mad, ${floor}), 1e-12) AS scale,
       (y - med) / scale AS z,
       previous >= ${warmup} AND z > ${k} AS spike
FROM (
  SELECT arraySort(groupArray((step, grad_norm_pre_clip))) AS pairs,
         arrayMap(t -> tupleElement(t, 1), pairs) AS steps,
         arrayMap(t -> tupleElement(t, 2), pairs) AS norms,
         arrayMap(x -> ${y}, norms) AS ys,
         arrayMap(i -> arraySlice(ys, greatest(1, i - ${window}), least(i - 1, ${window})), arrayEnumerate(ys)) AS wins
  FROM learner_steps FINAL
  WHERE run_id = ${sqlString(runId)} AND isFinite(grad_norm_pre_clip)${logScale ? ' AND grad_norm_pre_clip > 0' : ''}
)
ARRAY JOIN steps AS step, norms AS grad_norm, ys AS y, wins AS win
ORDER BY step`;
}

const finite = (v: unknown): number => (v === null || v === undefined ? Number.NaN : Number(v));
const mapOf = (keys: unknown, values: unknown): Record<string, number> => {
  const ks = (keys as string[] | undefined) ?? [];
  const vs = (values as unknown[] | undefined) ?? [];
  return Object.fromEntries(ks.map((k, i) => [k, finite(vs[i])]));
};

/** A learner_steps row (with its details) as the event the sink stored. NaN/∞ come back as null: NaN here. */
export function learnerStepFromRow(row: Record<string, unknown>): LearnerStepEvent {
  return {
    runId: String(row.run_id),
    step: Number(row.step),
    policyVersion: Number(row.policy_version),
    totalLoss: finite(row.total_loss),
    policyLoss: finite(row.policy_loss),
    klLoss: finite(row.kl_loss),
    entropyLoss: finite(row.entropy_loss),
    entropy: finite(row.entropy),
    kl: finite(row.kl),
    clipFraction: finite(row.clip_fraction),
    clipFractionLow: row.clip_fraction_low === null || row.clip_fraction_low === undefined ? null : finite(row.clip_fraction_low),
    gradNormPreClip: finite(row.grad_norm_pre_clip),
    learningRate: finite(row.learning_rate),
    tokens: Number(row.tokens),
    samples: Number(row.samples),
    stalenessMean: finite(row.staleness_mean),
    stalenessMax: Number(row.staleness_max),
    durationMs: finite(row.duration_ms),
    backend: String(row.backend ?? ''),
    eventTimeMs: Number(row.event_time_ms),
    metrics: mapOf(row.metrics_keys, row.metrics_values),
  };
}

/** A rollout_stats batch row as the event the processors wrote. */
export function rolloutBatchFromRow(row: Record<string, unknown>): RolloutStatsEvent {
  return {
    runId: String(row.run_id),
    scope: 'batch',
    batchId: String(row.batch_id),
    groupId: null,
    groups: Number(row.groups),
    trajectories: Number(row.trajectories),
    rewardMean: finite(row.reward_mean),
    rewardStd: finite(row.reward_std),
    meanInGroupRewardStd: finite(row.mean_in_group_reward_std),
    successRate: finite(row.success_rate),
    passAtK: mapOf(row.pass_at_k_keys, row.pass_at_k_values),
    passHatK: mapOf(row.pass_hat_k_keys, row.pass_hat_k_values),
    meanLength: finite(row.mean_length),
    invalidActionRate: finite(row.invalid_action_rate),
    incomplete: Number(row.incomplete),
    droppedGroups: Number(row.dropped_groups),
    droppedByReason: Object.fromEntries(Object.entries(mapOf(row.dropped_by_reason_keys, row.dropped_by_reason_values)).map(([k, v]) => [k, Math.round(v)])),
    eventTimeMs: Number(row.event_time_ms),
    // The detectors do not watch why groups closed.
    closedBy: {},
  };
}

/**
 * The alerts the detectors raise over a run's stored learner steps and rollout batches (the trajectory
 * detectors need the trajectories, which the sink does not store with their steps: not covered here).
 * Same ids as the live detectors give for the same events.
 */
export async function historicalAlerts(store: HistoryStore, runId: string, config: DetectorsConfig = buildDetectorsConfig()): Promise<CollapseAlertEvent[]> {
  const steps = (await store.queryJson(learnerStepsSql(runId))).map(learnerStepFromRow);
  const batches = (await store.queryJson(rolloutBatchesSql(runId))).map(rolloutBatchFromRow);
  const engine = new CollapseEngine(config);
  const inputs: DetectorInput[] = [
    ...steps.map((event): DetectorInput => ({ type: 'learner_step', event })),
    ...batches.map((event): DetectorInput => ({ type: 'rollout_stats', event })),
  ];
  // All learner steps go first: every attribution is then final, as the live hold makes it.
  const raised = inputs.flatMap((input) => engine.observe(input));
  return raised.map((r) => alertEvent(r, r.attribution ?? engine.attribute(r.runId, r.eventTimeMs)));
}

// Trajectories: GET /v1/runs/:runId/trajectories (the assembled episodes of a run, from `trajectories` with
// their metrics) and GET /v1/trajectories/:episodeId (one episode turn by turn).
//
// Where the turn-by-turn view comes from: the trajectory event is stored without its steps (every step is
// in `steps` already), so the turns are the episode's rows in `steps`; the training sample built from the
// episode is in `samples` (counts only), and its token arrays — token ids, loss mask, per-token advantages,
// behaviour log-probs — are in `sample_tokens` only when the sink runs with --include-sample-tokens.
//
// With the token arrays, each turn is located in the sample: the processors lay a sample out as the kept
// turns in order, each turn's observation tokens (loss mask 0) then its action tokens (loss mask 1), with
// the oldest turns dropped first when the context window is full. Walking back from the end, a turn's span
// is its action tokens (checked token by token against the step) preceded by the loss-mask-0 run before
// them. A turn's advantage is then the advantage on its action tokens. When the check fails (the stored
// steps are not the ones the sample was built from), no spans are given and the advantage falls back to
// the sample's stepAdvantages (GiGPO: one per kept turn, the last turns) or, when every loss token has the
// same advantage (trajectory-level estimators), that value.
import type { StoredStepRow } from '../../storage/sink/rows.js';
import { HttpProblem, problemTypes } from '../../core/problem.js';
import { RUN_WINDOW, boolParam, enumParam, idParam, limitParam, readQuery, windowParams, type RawQuery, type TimeWindow } from './params.js';
import { sqlInt, sqlString } from './sql.js';
import { int, mapOf, num, read, type AnalyticsStore } from './store.js';

export const TRAJECTORIES_DEFAULT_LIMIT = 100;
/** Most steps returned for one episode. */
export const MAX_EPISODE_STEPS = 1000;
/** Most run ids named when an episode id is in several runs. */
const MAX_AMBIGUOUS_RUNS = 5;

// ---------------------------------------------------------------------------------------------- list

export interface TrajectoriesQuery extends TimeWindow {
  readonly runId: string;
  readonly limit: number;
  readonly order: 'asc' | 'desc';
  readonly success?: boolean;
  readonly outcome?: 'terminated' | 'truncated' | 'incomplete';
  readonly groupId?: string;
}

export const trajectoriesParams = ['limit', 'sinceMs', 'untilMs', 'order', 'success', 'outcome', 'groupId'] as const;

export function parseTrajectoriesQuery(runId: string, query: RawQuery, nowMs: number): TrajectoriesQuery {
  const values = readQuery(query, trajectoriesParams);
  const limit = limitParam(values, TRAJECTORIES_DEFAULT_LIMIT);
  const window = windowParams(values, nowMs, RUN_WINDOW);
  const order = enumParam(values, 'order', ['asc', 'desc'], 'desc');
  const success = boolParam(values, 'success');
  const outcome = values.has('outcome') ? enumParam(values, 'outcome', ['terminated', 'truncated', 'incomplete'], 'terminated') : undefined;
  const groupId = idParam(values, 'groupId');
  return {
    runId,
    limit,
    ...window,
    order,
    ...(success === undefined ? {} : { success }),
    ...(outcome === undefined ? {} : { outcome }),
    ...(groupId === undefined ? {} : { groupId }),
  };
}

const TRAJECTORY_COLUMNS = `run_id, env_name, env_version, group_id, episode_id, outcome, step_count, total_reward, success, invalid_actions,
       gap_count, min_policy_version, max_policy_version, first_event_time_ms, last_event_time_ms, metrics_keys, metrics_values`;

/** trajectories FINAL with trajectory_metrics joined; `where` filters both (their columns share names). */
function trajectoriesSelect(where: readonly string[]): string {
  return `SELECT ${TRAJECTORY_COLUMNS}
FROM trajectories FINAL
ANY LEFT JOIN (
  SELECT run_id, group_id, episode_id, metrics_keys, metrics_values
  FROM trajectory_metrics FINAL
  WHERE ${where.join(' AND ')}
) AS metric_maps USING (run_id, group_id, episode_id)
WHERE ${where.join(' AND ')}`;
}

export function trajectoriesSql(q: TrajectoriesQuery): string {
  const window = [`run_id = ${sqlString(q.runId)}`, `last_event_time_ms >= ${sqlInt(q.sinceMs)}`, `last_event_time_ms < ${sqlInt(q.untilMs)}`];
  if (q.groupId !== undefined) window.push(`group_id = ${sqlString(q.groupId)}`);
  const filters: string[] = [];
  if (q.success !== undefined) filters.push(`success = ${q.success ? 1 : 0}`);
  if (q.outcome !== undefined) filters.push(`outcome = ${sqlString(q.outcome)}`);
  const direction = q.order === 'asc' ? 'ASC' : 'DESC';
  // The metrics subquery needs only the key filters; success and outcome are trajectories' columns.
  const select = trajectoriesSelect(window);
  return `${select}${filters.length > 0 ? ` AND ${filters.join(' AND ')}` : ''}
ORDER BY last_event_time_ms ${direction}, episode_id ${direction}
LIMIT ${sqlInt(q.limit + 1)}`;
}

export interface TrajectoryRow {
  run_id: string;
  env_name: string;
  env_version: string;
  group_id: string;
  episode_id: string;
  outcome: string;
  step_count: number;
  total_reward: number | null;
  success: number;
  invalid_actions: number;
  gap_count: number;
  min_policy_version: number;
  max_policy_version: number;
  first_event_time_ms: number;
  last_event_time_ms: number;
  metrics_keys: string[];
  metrics_values: Array<number | null>;
}

/** A TrajectoryEvent as JSON without its steps. */
export interface TrajectoryView {
  readonly runId: string;
  readonly envName: string;
  readonly envVersion: string;
  readonly groupId: string;
  readonly episodeId: string;
  readonly outcome: string;
  readonly stepCount: number;
  readonly totalReward: number | null;
  readonly success: boolean;
  readonly invalidActions: number;
  readonly gapCount: number;
  readonly minPolicyVersion: number;
  readonly maxPolicyVersion: number;
  readonly firstEventTimeMs: number;
  readonly lastEventTimeMs: number;
  readonly metrics: Record<string, number | null>;
}

export function trajectoryView(row: TrajectoryRow): TrajectoryView {
  return {
    runId: row.run_id,
    envName: row.env_name,
    envVersion: row.env_version,
    groupId: row.group_id,
    episodeId: row.episode_id,
    outcome: row.outcome,
    stepCount: int(row.step_count),
    totalReward: num(row.total_reward),
    success: int(row.success) === 1,
    invalidActions: int(row.invalid_actions),
    gapCount: int(row.gap_count),
    minPolicyVersion: int(row.min_policy_version),
    maxPolicyVersion: int(row.max_policy_version),
    firstEventTimeMs: int(row.first_event_time_ms),
    lastEventTimeMs: int(row.last_event_time_ms),
    metrics: mapOf(row.metrics_keys, row.metrics_values),
  };
}

export interface TrajectoriesResult {
  readonly trajectories: TrajectoryView[];
  readonly truncated: boolean;
}

export async function queryTrajectories(store: AnalyticsStore, q: TrajectoriesQuery): Promise<TrajectoriesResult> {
  const rows = await read<TrajectoryRow>(store, trajectoriesSql(q));
  return { trajectories: rows.slice(0, q.limit).map(trajectoryView), truncated: rows.length > q.limit };
}

// -------------------------------------------------------------------------------------------- detail

export interface EpisodeQuery {
  readonly episodeId: string;
  /** The run, when the path or ?runId= names it; otherwise found from the episode id. */
  readonly runId?: string;
}

export const episodeParams = ['runId'] as const;

/** ?runId= of GET /v1/trajectories/:episodeId (the ids already checked by routeId when from the path). */
export function parseEpisodeQuery(episodeId: string, query: RawQuery, runIdFromPath?: string): EpisodeQuery {
  const values = readQuery(query, runIdFromPath === undefined ? episodeParams : []);
  const runId = runIdFromPath ?? idParam(values, 'runId');
  return { episodeId, ...(runId === undefined ? {} : { runId }) };
}

/** The runs an episode id appears in (trajectories or steps); at most MAX_AMBIGUOUS_RUNS + 1. */
export function episodeRunsSql(episodeId: string): string {
  const id = sqlString(episodeId);
  return `SELECT run_id FROM (
  SELECT run_id FROM trajectories WHERE episode_id = ${id} GROUP BY run_id
  UNION ALL
  SELECT run_id FROM steps WHERE episode_id = ${id} GROUP BY run_id
)
GROUP BY run_id
ORDER BY run_id
LIMIT ${sqlInt(MAX_AMBIGUOUS_RUNS + 1)}`;
}

const episodeWhere = (runId: string, episodeId: string): string[] => [`run_id = ${sqlString(runId)}`, `episode_id = ${sqlString(episodeId)}`];

export function episodeTrajectorySql(runId: string, episodeId: string): string {
  return `${trajectoriesSelect(episodeWhere(runId, episodeId))}
ORDER BY last_event_time_ms DESC
LIMIT 1`;
}

/** The episode's steps in order; limit + 1 to tell whether there were more. */
export function episodeStepsSql(runId: string, episodeId: string, limit = MAX_EPISODE_STEPS): string {
  return `SELECT event_id, env_name, env_version, group_id, step_index, observation, has_observation_token_ids, observation_token_ids,
       action, action_token_ids, action_log_probs, policy_version, reward, terminated, truncated, action_valid, state_key,
       metrics_keys, metrics_values, info_keys, info_values, event_time_ms
FROM steps FINAL
WHERE ${episodeWhere(runId, episodeId).join(' AND ')}
ORDER BY step_index ASC, event_time_ms ASC, event_id ASC
LIMIT ${sqlInt(limit + 1)}`;
}

/**
 * The episode's samples, newest first, with the token arrays of those that have them. From `samples_by_episode`
 * (migration 0004: the samples sorted by run and episode), not `samples`, whose sorting key (run_id, sample_id)
 * made this a read of every sample of the run; the token arrays are looked up by their key (run_id, sample_id).
 */
export function episodeSamplesSql(runId: string, episodeId: string): string {
  const where = episodeWhere(runId, episodeId).join(' AND ');
  return `SELECT sample_id, group_id, policy_version, reward, estimator, group_size, group_reward_mean, group_reward_std,
       token_count, loss_token_count, event_time_ms,
       has_tokens, token_ids, loss_mask, advantages, behaviour_log_probs, has_step_advantages, step_advantages
FROM samples_by_episode FINAL
ANY LEFT JOIN (
  SELECT run_id, sample_id, toUInt8(1) AS has_tokens, token_ids, loss_mask, advantages, behaviour_log_probs, has_step_advantages, step_advantages
  FROM sample_tokens FINAL
  WHERE run_id = ${sqlString(runId)} AND sample_id IN (SELECT sample_id FROM samples_by_episode WHERE ${where})
) AS token_arrays USING (run_id, sample_id)
WHERE ${where}
ORDER BY event_time_ms DESC, sample_id DESC
LIMIT 10`;
}

/** The steps columns episodeStepsSql selects. */
export type StepRow = Omit<StoredStepRow, 'run_id' | 'episode_id' | 'kafka_topic' | 'kafka_partition' | 'kafka_offset'>;

export interface SampleRow {
  sample_id: string;
  group_id: string;
  policy_version: number;
  reward: number | null;
  estimator: string;
  group_size: number;
  group_reward_mean: number | null;
  group_reward_std: number | null;
  token_count: number;
  loss_token_count: number;
  event_time_ms: number;
  has_tokens: number;
  token_ids: number[];
  loss_mask: number[];
  advantages: Array<number | null>;
  behaviour_log_probs: Array<number | null>;
  has_step_advantages: number;
  step_advantages: Array<number | null>;
}

/** Where a turn is in the sample's token arrays: [observationStart, actionStart) observation, [actionStart, end) action. */
export interface TurnSpan {
  readonly observationStart: number;
  readonly actionStart: number;
  readonly end: number;
}

export interface StepView {
  readonly eventId: string;
  readonly stepIndex: number;
  readonly observation: string;
  readonly observationTokenIds: number[] | null;
  readonly action: string;
  readonly actionTokenIds: number[];
  readonly actionLogProbs: Array<number | null>;
  readonly policyVersion: number;
  readonly reward: number | null;
  readonly terminated: boolean;
  readonly truncated: boolean;
  readonly actionValid: boolean;
  readonly stateKey: string | null;
  readonly metrics: Record<string, number | null>;
  readonly info: Record<string, string>;
  readonly eventTimeMs: number;
  /** The advantage the loss gave this turn's action tokens; null when no stored sample says. */
  readonly advantage: number | null;
  /** The turn's tokens in `sample.tokens` (null: not in the sample — dropped by the context window, or not aligned). */
  readonly sampleSpan: TurnSpan | null;
}

export interface SampleTokens {
  readonly tokenIds: number[];
  /** 1 where the token is in the loss (the policy generated it), 0 for tokens the environment returned. */
  readonly lossMask: number[];
  readonly advantages: Array<number | null>;
  readonly behaviourLogProbs: Array<number | null>;
}

export interface SampleView {
  readonly sampleId: string;
  readonly policyVersion: number;
  readonly reward: number | null;
  readonly estimator: string;
  readonly groupSize: number;
  readonly groupRewardMean: number | null;
  readonly groupRewardStd: number | null;
  readonly tokenCount: number;
  readonly lossTokenCount: number;
  readonly eventTimeMs: number;
  /** Null when the sink did not store the token arrays (it does with --include-sample-tokens). */
  readonly tokens: SampleTokens | null;
  /** GiGPO's per-turn advantages of the kept turns; null for trajectory-level estimators or without tokens. */
  readonly stepAdvantages: Array<number | null> | null;
}

export type AdvantageSource = 'sample-tokens' | 'step-advantages' | 'trajectory-advantage' | null;

export interface EpisodeView {
  readonly runId: string;
  readonly episodeId: string;
  /** The assembled trajectory; null when the episode has steps but was never assembled. */
  readonly trajectory: TrajectoryView | null;
  readonly steps: StepView[];
  /** More than MAX_EPISODE_STEPS steps: the first ones are returned. */
  readonly stepsTruncated: boolean;
  /** The newest training sample built from the episode; null when there is none. */
  readonly sample: SampleView | null;
  /** Samples of the episode (a replay with other settings builds another). */
  readonly sampleIds: string[];
  /** Whether the sample's token arrays are stored (sink --include-sample-tokens). */
  readonly tokensStored: boolean;
  /** Where the steps' advantages come from. */
  readonly advantageSource: AdvantageSource;
  /** Whether the steps were located in the sample's tokens (sampleSpan). */
  readonly aligned: boolean;
}

export function stepView(row: StepRow): Omit<StepView, 'advantage' | 'sampleSpan'> {
  const info: Record<string, string> = {};
  (row.info_keys ?? []).forEach((key, i) => (info[key] = row.info_values?.[i] ?? ''));
  return {
    eventId: row.event_id,
    stepIndex: int(row.step_index),
    observation: row.observation,
    observationTokenIds: int(row.has_observation_token_ids) === 1 ? row.observation_token_ids : null,
    action: row.action,
    actionTokenIds: row.action_token_ids,
    actionLogProbs: row.action_log_probs.map(num),
    policyVersion: int(row.policy_version),
    reward: num(row.reward),
    terminated: int(row.terminated) === 1,
    truncated: int(row.truncated) === 1,
    actionValid: int(row.action_valid) === 1,
    stateKey: row.state_key,
    metrics: mapOf(row.metrics_keys, row.metrics_values),
    info,
    eventTimeMs: int(row.event_time_ms),
  };
}

export function sampleView(row: SampleRow): SampleView {
  const hasTokens = int(row.has_tokens) === 1;
  return {
    sampleId: row.sample_id,
    policyVersion: int(row.policy_version),
    reward: num(row.reward),
    estimator: row.estimator,
    groupSize: int(row.group_size),
    groupRewardMean: num(row.group_reward_mean),
    groupRewardStd: num(row.group_reward_std),
    tokenCount: int(row.token_count),
    lossTokenCount: int(row.loss_token_count),
    eventTimeMs: int(row.event_time_ms),
    tokens: hasTokens ? { tokenIds: row.token_ids, lossMask: row.loss_mask, advantages: row.advantages.map(num), behaviourLogProbs: row.behaviour_log_probs.map(num) } : null,
    stepAdvantages: hasTokens && int(row.has_step_advantages) === 1 ? row.step_advantages.map(num) : null,
  };
}

/**
 * Locates each turn in a sample's tokens, walking back from the end (see the top of the file). Returns one
 * span per turn (null for turns the context window dropped), or null when the turns do not match the tokens.
 */
export function alignTurns(
  turns: ReadonlyArray<{ readonly actionTokenIds: readonly number[] }>,
  tokens: Pick<SampleTokens, 'tokenIds' | 'lossMask'>,
): Array<TurnSpan | null> | null {
  const { tokenIds, lossMask } = tokens;
  if (tokenIds.length !== lossMask.length) return null;
  const spans: Array<TurnSpan | null> = turns.map(() => null);
  let end = tokenIds.length;
  for (let i = turns.length - 1; i >= 0 && end > 0; i--) {
    const action = turns[i]!.actionTokenIds;
    const actionStart = end - action.length;
    if (actionStart < 0) return null;
    for (let t = 0; t < action.length; t++) {
      if (tokenIds[actionStart + t] !== action[t] || lossMask[actionStart + t] !== 1) return null;
    }
    let observationStart = actionStart;
    while (observationStart > 0 && lossMask[observationStart - 1] === 0) observationStart--;
    spans[i] = { observationStart, actionStart, end };
    end = observationStart;
  }
  // Tokens left over belong to no turn: the steps are not the ones the sample was built from.
  return end === 0 ? spans : null;
}

/** Each turn's advantage, and where it came from. */
export function turnAdvantages(
  turns: ReadonlyArray<{ readonly actionTokenIds: readonly number[] }>,
  sample: SampleView | null,
): { advantages: Array<number | null>; spans: Array<TurnSpan | null>; source: AdvantageSource; aligned: boolean } {
  const none = turns.map(() => null);
  if (sample?.tokens == null) return { advantages: none, spans: none, source: null, aligned: false };
  const tokens = sample.tokens;
  const spans = alignTurns(turns, tokens);
  if (spans !== null) {
    const advantages = spans.map((span) => (span === null || span.actionStart === span.end ? null : (tokens.advantages[span.actionStart] ?? null)));
    return { advantages, spans, source: 'sample-tokens', aligned: true };
  }
  if (sample.stepAdvantages !== null) {
    // The kept turns are the last ones: align the list with the end of the episode.
    const offset = turns.length - sample.stepAdvantages.length;
    const advantages = turns.map((_, i) => (i - offset >= 0 ? (sample.stepAdvantages![i - offset] ?? null) : null));
    return { advantages, spans: none, source: 'step-advantages', aligned: false };
  }
  const inLoss = tokens.advantages.filter((_, t) => tokens.lossMask[t] === 1);
  const first = inLoss[0];
  if (first !== undefined && first !== null && inLoss.every((a) => a === first)) {
    return { advantages: turns.map(() => first), spans: none, source: 'trajectory-advantage', aligned: false };
  }
  return { advantages: none, spans: none, source: null, aligned: false };
}

/** Finds the episode's run (404 when the episode is unknown, 409 when several runs have it). */
async function resolveRun(store: AnalyticsStore, q: EpisodeQuery): Promise<string> {
  if (q.runId !== undefined) return q.runId;
  const runs = (await read<{ run_id: string }>(store, episodeRunsSql(q.episodeId))).map((r) => r.run_id);
  if (runs.length === 0) throw new HttpProblem(problemTypes.notFound, `no episode '${q.episodeId}' in any run`, { field: 'episodeId' });
  if (runs.length > 1) {
    const shown = runs.slice(0, MAX_AMBIGUOUS_RUNS).join(', ');
    throw new HttpProblem(problemTypes.ambiguous, `episode '${q.episodeId}' is in more than one run (${shown}${runs.length > MAX_AMBIGUOUS_RUNS ? ', …' : ''}): add ?runId=`, {
      field: 'runId',
      runIds: shown,
    });
  }
  return runs[0]!;
}

export async function queryEpisode(store: AnalyticsStore, q: EpisodeQuery): Promise<EpisodeView> {
  const runId = await resolveRun(store, q);
  const [trajectoryRows, stepRows, sampleRows] = await Promise.all([
    read<TrajectoryRow>(store, episodeTrajectorySql(runId, q.episodeId)),
    read<StepRow>(store, episodeStepsSql(runId, q.episodeId)),
    read<SampleRow>(store, episodeSamplesSql(runId, q.episodeId)),
  ]);
  if (trajectoryRows.length === 0 && stepRows.length === 0) {
    throw new HttpProblem(problemTypes.notFound, `no episode '${q.episodeId}' in run '${runId}'`, { field: 'episodeId' });
  }
  const steps = stepRows.slice(0, MAX_EPISODE_STEPS).map(stepView);
  const sample = sampleRows[0] === undefined ? null : sampleView(sampleRows[0]);
  // The sample was built from the assembled trajectory: one step per index (the first stored, if repeated).
  const turns = steps.filter((step, i) => i === 0 || steps[i - 1]!.stepIndex !== step.stepIndex);
  const { advantages, spans, source, aligned } = turnAdvantages(turns, sample);
  const byEvent = new Map(turns.map((turn, i) => [turn.eventId, { advantage: advantages[i] ?? null, sampleSpan: spans[i] ?? null }]));
  return {
    runId,
    episodeId: q.episodeId,
    trajectory: trajectoryRows[0] === undefined ? null : trajectoryView(trajectoryRows[0]),
    steps: steps.map((step) => ({ ...step, ...(byEvent.get(step.eventId) ?? { advantage: null, sampleSpan: null }) })),
    stepsTruncated: stepRows.length > MAX_EPISODE_STEPS,
    sample,
    sampleIds: sampleRows.map((row) => row.sample_id),
    tokensStored: sample?.tokens != null,
    advantageSource: source,
    aligned,
  };
}

// Pure mapping from events (with where they came from in Kafka) to ClickHouse rows, one object per row keyed
// by column name, exactly the columns of infra/clickhouse/migrations/0001_events.sql, 0002_sink_tables.sql
// and 0003_evaluations.sql (JSONEachRow rejects unknown keys, and a missing key would silently take the
// column default).
//
// Conventions (see the migrations): times are Int64 ms; booleans UInt8 0/1; an Avro map becomes parallel
// <name>_keys / <name>_values arrays (keys sorted, so equal maps give equal rows); a nullable array becomes
// has_<name> + the array ([] when null). Non-finite floats (NaN, ±Infinity: a diverging learner reports
// them) are written as the strings "nan", "inf", "-inf", which ClickHouse's JSON input reads into Float
// columns (JSON itself has no literal for them). Binary fields (dead letters' key and payload) stay Buffers;
// the sink's serializer writes their bytes unchanged (ClickHouse strings are byte strings).
import type {
  CollapseAlertEvent,
  DeadLetterEvent,
  EvaluationEvent,
  EventName,
  EventTypes,
  LearnerStepEvent,
  PolicyVersionEvent,
  RolloutStatsEvent,
  StepEvent,
  TrainingSampleEvent,
  TrajectoryEvent,
} from '../../schemas/index.js';

/** Where an event was read from. */
export interface KafkaSource {
  readonly topic: string;
  readonly partition: number;
  /** Decimal string, as kafkajs gives it (exact beyond 2^53 in the envelope; rows hold it as a number). */
  readonly offset: string;
}

export type TableName =
  | 'steps'
  | 'trajectories'
  | 'trajectory_metrics'
  | 'samples'
  | 'sample_tokens'
  | 'learner_steps'
  | 'learner_step_details'
  | 'policy_versions'
  | 'policy_version_metrics'
  | 'collapse_alerts'
  | 'collapse_alert_evidence'
  | 'rollout_stats'
  | 'evaluations'
  | 'dead_letters';

export const tableNames: readonly TableName[] = [
  'steps',
  'trajectories',
  'trajectory_metrics',
  'samples',
  'sample_tokens',
  'learner_steps',
  'learner_step_details',
  'policy_versions',
  'policy_version_metrics',
  'collapse_alerts',
  'collapse_alert_evidence',
  'rollout_stats',
  'evaluations',
  'dead_letters',
];

/**
 * The ReplacingMergeTree sorting key of each table (the ORDER BY of its migration): rows with equal keys are
 * one event stored more than once. Exact queries use FINAL or GROUP BY these columns.
 */
export const tableKeys: { readonly [T in TableName]: readonly string[] } = {
  steps: ['run_id', 'episode_id', 'step_index', 'event_id'],
  trajectories: ['run_id', 'group_id', 'episode_id'],
  trajectory_metrics: ['run_id', 'group_id', 'episode_id'],
  samples: ['run_id', 'sample_id'],
  sample_tokens: ['run_id', 'sample_id'],
  learner_steps: ['run_id', 'step'],
  learner_step_details: ['run_id', 'step'],
  policy_versions: ['run_id', 'version'],
  policy_version_metrics: ['run_id', 'version'],
  collapse_alerts: ['run_id', 'alert_id'],
  collapse_alert_evidence: ['run_id', 'alert_id'],
  rollout_stats: ['run_id', 'batch_id', 'scope', 'group_id'],
  evaluations: ['run_id', 'policy_version'],
  dead_letters: ['kafka_topic', 'kafka_partition', 'kafka_offset'],
};

/** A column value: what JSON.stringify writes, plus Buffers (raw bytes into a String column). */
export type Cell = string | number | null | Buffer | readonly (string | number)[];
export type Row = Record<string, Cell>;

export interface TableRow {
  readonly table: TableName;
  readonly row: Row;
}

export interface RowOptions {
  /** Also write each sample's token arrays to sample_tokens (default false: samples keeps the counts only). */
  readonly includeSampleTokens?: boolean;
}

/** A finite number as is; NaN and infinities as the strings ClickHouse reads into Float columns. */
export function float(x: number): number | string {
  if (Number.isFinite(x)) return x;
  return Number.isNaN(x) ? 'nan' : x > 0 ? 'inf' : '-inf';
}

export function floats(xs: readonly number[]): readonly (number | string)[] {
  for (const x of xs) if (!Number.isFinite(x)) return xs.map(float);
  return xs;
}

const flag = (b: boolean): number => (b ? 1 : 0);

/** An Avro map as parallel key/value arrays, sorted by key. */
function numberMap(map: Record<string, number>, name: string): Row {
  const keys = Object.keys(map).sort();
  return { [`${name}_keys`]: keys, [`${name}_values`]: floats(keys.map((k) => map[k]!)) };
}

function kafka(source: KafkaSource): Row {
  return { kafka_topic: source.topic, kafka_partition: source.partition, kafka_offset: Number(source.offset) };
}

/**
 * A steps row as ClickHouse's JSON gives it back (replay rebuilds events from it, the dashboard shows it).
 * Floats written as "nan"/"inf" come back as null.
 */
export interface StoredStepRow {
  event_id: string;
  run_id: string;
  env_name: string;
  env_version: string;
  group_id: string;
  episode_id: string;
  step_index: number;
  observation: string;
  has_observation_token_ids: number;
  observation_token_ids: number[];
  action: string;
  action_token_ids: number[];
  action_log_probs: (number | null)[];
  policy_version: number;
  reward: number | null;
  terminated: number;
  truncated: number;
  action_valid: number;
  state_key: string | null;
  metrics_keys: string[];
  metrics_values: (number | null)[];
  info_keys: string[];
  info_values: string[];
  event_time_ms: number;
  kafka_topic: string;
  kafka_partition: number;
  kafka_offset: number;
}

export function stepRows(e: StepEvent, source: KafkaSource): TableRow[] {
  // The busiest table: its row is one object literal (the same columns as numberMap/stringMap/kafka would
  // spread in), which V8 builds and reads faster than an object assembled from spreads.
  const metricsKeys = Object.keys(e.metrics).sort();
  const infoKeys = Object.keys(e.info).sort();
  return [
    {
      table: 'steps',
      row: {
        event_id: e.eventId,
        run_id: e.runId,
        env_name: e.envName,
        env_version: e.envVersion,
        group_id: e.groupId,
        episode_id: e.episodeId,
        step_index: e.stepIndex,
        observation: e.observation,
        has_observation_token_ids: flag(e.observationTokenIds !== null),
        observation_token_ids: e.observationTokenIds ?? [],
        action: e.action,
        action_token_ids: e.actionTokenIds,
        action_log_probs: floats(e.actionLogProbs),
        policy_version: e.policyVersion,
        reward: float(e.reward),
        terminated: flag(e.terminated),
        truncated: flag(e.truncated),
        action_valid: flag(e.actionValid),
        state_key: e.stateKey,
        metrics_keys: metricsKeys,
        metrics_values: floats(metricsKeys.map((k) => e.metrics[k]!)),
        info_keys: infoKeys,
        info_values: infoKeys.map((k) => e.info[k]!),
        event_time_ms: e.eventTimeMs,
        kafka_topic: source.topic,
        kafka_partition: source.partition,
        kafka_offset: Number(source.offset),
      },
    },
  ];
}

const OUTCOMES = new Set(['terminated', 'truncated', 'incomplete']);

export function trajectoryRows(e: TrajectoryEvent, source: KafkaSource): TableRow[] {
  // outcome is an Enum8 column; the Avro field is a string so that new outcomes do not break old readers.
  // An outcome this table does not know yet is stored as 'incomplete' (its real value stays in Kafka).
  const outcome = OUTCOMES.has(e.outcome) ? e.outcome : 'incomplete';
  return [
    {
      table: 'trajectories',
      row: {
        run_id: e.runId,
        env_name: e.envName,
        env_version: e.envVersion,
        group_id: e.groupId,
        episode_id: e.episodeId,
        outcome,
        step_count: e.stepCount,
        total_reward: float(e.totalReward),
        success: flag(e.success),
        invalid_actions: e.invalidActions,
        gap_count: e.gapCount,
        min_policy_version: e.minPolicyVersion,
        max_policy_version: e.maxPolicyVersion,
        first_event_time_ms: e.firstEventTimeMs,
        last_event_time_ms: e.lastEventTimeMs,
        ...kafka(source),
      },
    },
    {
      table: 'trajectory_metrics',
      row: {
        run_id: e.runId,
        group_id: e.groupId,
        episode_id: e.episodeId,
        ...numberMap(e.metrics, 'metrics'),
        last_event_time_ms: e.lastEventTimeMs,
        ...kafka(source),
      },
    },
  ];
}

export function sampleRows(e: TrainingSampleEvent, source: KafkaSource, options: RowOptions = {}): TableRow[] {
  let lossTokens = 0;
  for (const m of e.lossMask) if (m === 1) lossTokens++;
  const rows: TableRow[] = [
    {
      table: 'samples',
      row: {
        sample_id: e.sampleId,
        run_id: e.runId,
        group_id: e.groupId,
        episode_id: e.episodeId,
        policy_version: e.policyVersion,
        reward: float(e.reward),
        estimator: e.estimator,
        group_size: e.groupSize,
        group_reward_mean: float(e.groupRewardMean),
        group_reward_std: float(e.groupRewardStd),
        token_count: e.tokenIds.length,
        loss_token_count: lossTokens,
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
  ];
  if (options.includeSampleTokens) {
    rows.push({
      table: 'sample_tokens',
      row: {
        run_id: e.runId,
        sample_id: e.sampleId,
        token_ids: e.tokenIds,
        loss_mask: e.lossMask,
        advantages: floats(e.advantages),
        behaviour_log_probs: floats(e.behaviourLogProbs),
        has_step_advantages: flag(e.stepAdvantages !== null),
        step_advantages: floats(e.stepAdvantages ?? []),
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    });
  }
  return rows;
}

export function learnerStepRows(e: LearnerStepEvent, source: KafkaSource): TableRow[] {
  return [
    {
      table: 'learner_steps',
      row: {
        run_id: e.runId,
        step: e.step,
        policy_version: e.policyVersion,
        total_loss: float(e.totalLoss),
        policy_loss: float(e.policyLoss),
        kl_loss: float(e.klLoss),
        entropy_loss: float(e.entropyLoss),
        entropy: float(e.entropy),
        kl: float(e.kl),
        clip_fraction: float(e.clipFraction),
        grad_norm_pre_clip: float(e.gradNormPreClip),
        learning_rate: float(e.learningRate),
        tokens: e.tokens,
        samples: e.samples,
        staleness_mean: float(e.stalenessMean),
        staleness_max: float(e.stalenessMax),
        duration_ms: float(e.durationMs),
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
    {
      table: 'learner_step_details',
      row: {
        run_id: e.runId,
        step: e.step,
        clip_fraction_low: e.clipFractionLow === null ? null : float(e.clipFractionLow),
        backend: e.backend,
        ...numberMap(e.metrics, 'metrics'),
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
  ];
}

export function policyVersionRows(e: PolicyVersionEvent, source: KafkaSource): TableRow[] {
  return [
    {
      table: 'policy_versions',
      row: {
        run_id: e.runId,
        version: e.version,
        weights_uri: e.weightsUri,
        checksum: e.checksum,
        parent_version: e.parentVersion,
        learner_step: e.learnerStep,
        created_at_ms: e.createdAtMs,
        ...kafka(source),
      },
    },
    {
      table: 'policy_version_metrics',
      row: { run_id: e.runId, version: e.version, ...numberMap(e.metrics, 'metrics'), created_at_ms: e.createdAtMs, ...kafka(source) },
    },
  ];
}

export function collapseAlertRows(e: CollapseAlertEvent, source: KafkaSource): TableRow[] {
  return [
    {
      table: 'collapse_alerts',
      row: {
        alert_id: e.alertId,
        run_id: e.runId,
        kind: e.kind,
        severity: e.severity,
        learner_step: e.learnerStep,
        policy_version: e.policyVersion,
        value: float(e.value),
        threshold: float(e.threshold),
        message: e.message,
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
    {
      table: 'collapse_alert_evidence',
      row: { run_id: e.runId, alert_id: e.alertId, ...numberMap(e.evidence, 'evidence'), event_time_ms: e.eventTimeMs, ...kafka(source) },
    },
  ];
}

export function rolloutStatsRows(e: RolloutStatsEvent, source: KafkaSource): TableRow[] {
  return [
    {
      table: 'rollout_stats',
      row: {
        run_id: e.runId,
        scope: e.scope,
        batch_id: e.batchId,
        // In the sorting key, which cannot be Nullable on 18.16: '' for scope 'batch'.
        group_id: e.groupId ?? '',
        groups: e.groups,
        trajectories: e.trajectories,
        reward_mean: float(e.rewardMean),
        reward_std: float(e.rewardStd),
        mean_in_group_reward_std: float(e.meanInGroupRewardStd),
        success_rate: float(e.successRate),
        ...numberMap(e.passAtK, 'pass_at_k'),
        ...numberMap(e.passHatK, 'pass_hat_k'),
        mean_length: float(e.meanLength),
        invalid_action_rate: float(e.invalidActionRate),
        incomplete: e.incomplete,
        dropped_groups: e.droppedGroups,
        ...numberMap(e.droppedByReason, 'dropped_by_reason'),
        // Absent from a v1 event read without the codec's defaults.
        ...numberMap(e.closedBy ?? {}, 'closed_by'),
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
  ];
}

export function evaluationRows(e: EvaluationEvent, source: KafkaSource): TableRow[] {
  return [
    {
      table: 'evaluations',
      row: {
        run_id: e.runId,
        policy_version: e.policyVersion,
        trained_iteration: e.trainedIteration,
        env_steps: e.envSteps,
        env_name: e.envName,
        env_options: e.envOptions,
        tasks: e.tasks,
        greedy_success: float(e.greedySuccess),
        mean_reward: float(e.meanReward),
        mean_steps: float(e.meanSteps),
        random_success: float(e.randomSuccess),
        duration_ms: float(e.durationMs),
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
  ];
}

export function deadLetterRows(e: DeadLetterEvent, source: KafkaSource): TableRow[] {
  return [
    {
      table: 'dead_letters',
      row: {
        reason: e.reason,
        detail: e.detail,
        source_topic: e.sourceTopic,
        source_partition: e.sourcePartition,
        source_offset: e.sourceOffset,
        key: e.key,
        payload: e.payload,
        event_time_ms: e.eventTimeMs,
        ...kafka(source),
      },
    },
  ];
}

/** The rows one event becomes (one or two tables). */
export function eventRows<N extends EventName>(event: N, value: EventTypes[N], source: KafkaSource, options: RowOptions = {}): TableRow[] {
  switch (event) {
    case 'step':
      return stepRows(value as StepEvent, source);
    case 'trajectory':
      return trajectoryRows(value as TrajectoryEvent, source);
    case 'sample':
      return sampleRows(value as TrainingSampleEvent, source, options);
    case 'learner_step':
      return learnerStepRows(value as LearnerStepEvent, source);
    case 'policy_version':
      return policyVersionRows(value as PolicyVersionEvent, source);
    case 'collapse_alert':
      return collapseAlertRows(value as CollapseAlertEvent, source);
    case 'rollout_stats':
      return rolloutStatsRows(value as RolloutStatsEvent, source);
    case 'evaluation':
      return evaluationRows(value as EvaluationEvent, source);
    case 'dead_letter':
      return deadLetterRows(value as DeadLetterEvent, source);
    default:
      throw new Error(`no table for event '${String(event)}'`);
  }
}

/** The topic (name under the prefix) each event is read from. */
export const sinkTopics: { readonly [N in EventName]: string } = {
  step: 'env.steps',
  trajectory: 'trajectories',
  sample: 'samples',
  learner_step: 'learner.steps',
  policy_version: 'policy.versions',
  collapse_alert: 'alerts',
  rollout_stats: 'rollout.stats',
  evaluation: 'evaluations',
  dead_letter: 'deadletter',
};

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** A JSON string literal of raw bytes: only '"', '\' and control bytes are escaped; other bytes pass unchanged. */
function jsonBytes(bytes: Buffer): Buffer {
  const out: number[] = [QUOTE];
  for (const b of bytes) {
    if (b === QUOTE || b === BACKSLASH) out.push(BACKSLASH, b);
    else if (b < 0x20) out.push(...Buffer.from(`\\u00${b.toString(16).padStart(2, '0')}`, 'latin1'));
    else out.push(b);
  }
  out.push(QUOTE);
  return Buffer.from(out);
}

/**
 * One JSONEachRow line (without the newline). Rows without Buffers are plain JSON.stringify; a Buffer is
 * written as a JSON string of its raw bytes, which ClickHouse stores byte for byte (JSON.stringify of a
 * latin1 string would turn bytes ≥ 0x80 into two UTF-8 bytes).
 */
export function jsonEachRowLine(row: Row): string | Buffer {
  let binary = false;
  for (const key in row)
    if (Buffer.isBuffer(row[key])) {
      binary = true;
      break;
    }
  if (!binary) return JSON.stringify(row);
  const parts: Buffer[] = [Buffer.from('{')];
  let first = true;
  for (const key in row) {
    const value = row[key];
    parts.push(Buffer.from(`${first ? '' : ','}${JSON.stringify(key)}:`));
    parts.push(Buffer.isBuffer(value) ? jsonBytes(value) : Buffer.from(JSON.stringify(value)));
    first = false;
  }
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
}

/** A JSONEachRow request body: a string when no row has binary cells, else bytes. */
export function jsonEachRowBody(rows: readonly Row[]): string | Buffer {
  const lines = rows.map(jsonEachRowLine);
  if (lines.every((line) => typeof line === 'string')) return lines.join('\n');
  return Buffer.concat(lines.flatMap((line, i) => (i === 0 ? [Buffer.from(line)] : [Buffer.from('\n'), Buffer.from(line)])));
}

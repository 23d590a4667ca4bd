// Which stored trajectories a replay trains on, and reading them back (`trajflow replay`).
//
// A selection names one run and narrows it by event time, Kafka position, policy version, reward and
// success. Two sources hold trajectories:
//   - Kafka: <prefix>.trajectories holds every TrajectoryEvent in full (kept forever). The selection is a
//     scan of the topic (createReplay) bounded by offsets and, from below, by broker time, then filtered
//     here in JS.
//   - ClickHouse: the sink's `trajectories` table holds the totals of each episode and where it was read
//     from in Kafka (kafka_topic/partition/offset), but not its steps (0002 says so: every step is in
//     `steps`). The selection is a SQL query on that table; the full events are then fetched from Kafka at
//     exactly those offsets. When Kafka no longer has one (retention, a recreated topic) it is rebuilt from
//     the `steps` table, which has every field of a TrajectoryStep (and the StepEvent fields the assembler
//     reads: terminated, truncated, metrics, info), with the assembler's own trajectoryFromSteps; a rebuild
//     that does not reproduce the stored totals (steps that arrived after the episode closed, say) is
//     refused, never guessed.
//
// Decisions:
//   - Time is the trajectory's event time (lastEventTimeMs, ms since the epoch), in [fromMs, toMs), in
//     both sources. Kafka's timestamps are broker times, later than event times by however long the
//     processors took, so they only bound the scan from below (less a clock-skew allowance); the end of a
//     time range is checked on every event.
//   - Policy versions: every step of a selected trajectory was sampled within [minPolicyVersion,
//     maxPolicyVersion] (trajectory.minPolicyVersion ≥ min and maxPolicyVersion ≤ max).
//   - minReward is on the stored total (the environment's return), before today's reward settings.
//   - Offsets are of <prefix>.trajectories, [fromOffset, toOffset) on every partition, or on `partition` only.
//   - Incomplete trajectories (outcome 'incomplete') are left out unless includeIncomplete, as the live
//     processors' group assembly does.
//   - limit caps the selected trajectories, in read order (Kafka) or by event time (ClickHouse).
//   - A trajectory stored twice (same run and episode) is selected once, the first copy.
//   - SQL is built only from checked values through sqlInt/sqlString (ClickHouse 18.16 has no bound parameters).
import type { StoredStepRow } from '../../storage/sink/rows.js';
import type { TrajectoryRow as StoredTrajectoryRow } from '../../storage/query/trajectories.js';
import { lastValueFrom } from 'rxjs';
import { filter, take, toArray } from 'rxjs/operators';
import type { Admin } from 'kafkajs';
import { topicName, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { sqlInt, sqlString } from '../../storage/query/sql.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { trajectoryFromSteps } from '../../processors/assembly/open-episode.js';
import type { StepEvent, TrajectoryEvent } from '../../schemas/index.js';
import { classifyDecodeError, createReplay, eventDecoder, positionsOf, type Backbone, type Envelope } from '../../streams/index.js';

export const REPLAY_SOURCES = ['kafka', 'clickhouse'] as const;
export type ReplaySource = (typeof REPLAY_SOURCES)[number];
export const FETCH_MODES = ['auto', 'kafka', 'steps'] as const;
/** ClickHouse source: where the full events come from. auto: Kafka, the steps table for what Kafka lost. */
export type FetchMode = (typeof FETCH_MODES)[number];

export interface ReplaySelection {
  readonly runId: string;
  readonly source: ReplaySource;
  /** Trajectory event time (lastEventTimeMs) in [fromMs, toMs). */
  readonly fromMs?: number;
  readonly toMs?: number;
  /** Only this partition of <prefix>.trajectories. */
  readonly partition?: number;
  /** Kafka offsets of <prefix>.trajectories in [fromOffset, toOffset). */
  readonly fromOffset?: number;
  readonly toOffset?: number;
  readonly minPolicyVersion?: number;
  readonly maxPolicyVersion?: number;
  /** Stored total reward ≥ this. */
  readonly minReward?: number;
  readonly success?: boolean;
  /** Keep trajectories whose outcome is 'incomplete'. Default false. */
  readonly includeIncomplete?: boolean;
  /** At most this many trajectories. */
  readonly limit?: number;
  /** ClickHouse source only. Default 'auto'. */
  readonly fetch?: FetchMode;
}

export type ReplaySelectionInput = { readonly [K in keyof ReplaySelection]?: unknown };

const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;
/** Broker times may run behind event times by this much (other machines' clocks) when bounding a Kafka scan by time. */
export const CLOCK_SKEW_MS = 10 * 60 * 1000;

const SELECTION_FIELDS: readonly string[] = [
  'runId',
  'source',
  'fromMs',
  'toMs',
  'partition',
  'fromOffset',
  'toOffset',
  'minPolicyVersion',
  'maxPolicyVersion',
  'minReward',
  'success',
  'includeIncomplete',
  'limit',
  'fetch',
];

/** Checks a selection (from flags, JSON or an HTTP body); ConfigError naming the field otherwise. Unknown fields are refused. */
export function buildSelection(input: ReplaySelectionInput): ReplaySelection {
  for (const key of Object.keys(input)) {
    if (!SELECTION_FIELDS.includes(key)) throw new ConfigError(`replay selection: unknown field '${key}'; known fields: ${SELECTION_FIELDS.join(', ')}`);
  }
  const { runId, source = 'kafka' } = input;
  if (typeof runId !== 'string' || !RUN_ID.test(runId))
    throw new ConfigError(`replay selection: runId=${JSON.stringify(runId)} must be 1-100 letters, digits, '.', '_' or '-' (set --run-id)`);
  if (typeof source !== 'string' || !(REPLAY_SOURCES as readonly string[]).includes(source))
    throw new ConfigError(`replay selection: source=${JSON.stringify(source)} must be one of ${REPLAY_SOURCES.join(', ')}`);
  const int = (field: keyof ReplaySelection, min: number) => intField(input, field, min);
  const bool = (field: keyof ReplaySelection) => boolField(input, field);
  const selection = {
    runId,
    source: source as ReplaySource,
    fromMs: int('fromMs', 0),
    toMs: int('toMs', 0),
    partition: int('partition', 0),
    fromOffset: int('fromOffset', 0),
    toOffset: int('toOffset', 0),
    minPolicyVersion: int('minPolicyVersion', 0),
    maxPolicyVersion: int('maxPolicyVersion', 0),
    minReward: input.minReward,
    success: bool('success'),
    includeIncomplete: bool('includeIncomplete'),
    limit: int('limit', 1),
    fetch: input.fetch,
  };
  checkRewardAndFetch(selection);
  ordered(selection, 'fromMs', 'toMs', true);
  ordered(selection, 'fromOffset', 'toOffset', true);
  ordered(selection, 'minPolicyVersion', 'maxPolicyVersion', false);
  return Object.freeze(Object.fromEntries(Object.entries(selection).filter(([, v]) => v !== undefined))) as unknown as ReplaySelection;
}

/** An integer field of at least `min`, or undefined when absent. */
function intField(input: ReplaySelectionInput, field: keyof ReplaySelection, min: number): number | undefined {
  const value = input[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min)
    throw new ConfigError(`replay selection: ${field} must be an integer >= ${min}, got ${JSON.stringify(value)}`);
  return value;
}

/** A boolean field, or undefined when absent. */
function boolField(input: ReplaySelectionInput, field: keyof ReplaySelection): boolean | undefined {
  const value = input[field];
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw new ConfigError(`replay selection: ${field} must be true or false, got ${JSON.stringify(value)}`);
  return value;
}

/** minReward finite, and fetch a known mode of the ClickHouse source. */
function checkRewardAndFetch(selection: { readonly source: ReplaySource; readonly minReward: unknown; readonly fetch: unknown }): void {
  if (selection.minReward !== undefined && (typeof selection.minReward !== 'number' || !Number.isFinite(selection.minReward))) {
    throw new ConfigError(`replay selection: minReward must be a finite number, got ${JSON.stringify(selection.minReward)}`);
  }
  if (selection.fetch !== undefined) {
    if (typeof selection.fetch !== 'string' || !(FETCH_MODES as readonly string[]).includes(selection.fetch))
      throw new ConfigError(`replay selection: fetch=${JSON.stringify(selection.fetch)} must be one of ${FETCH_MODES.join(', ')}`);
    if (selection.source !== 'clickhouse') throw new ConfigError(`replay selection: fetch applies to source clickhouse only (source is ${selection.source})`);
  }
}

/** A range's two ends, when both are given, in order (`strict`: low below high, else at most high). */
function ordered(selection: Readonly<Record<string, unknown>>, low: keyof ReplaySelection, high: keyof ReplaySelection, strict: boolean): void {
  const a = selection[low] as number | undefined;
  const b = selection[high] as number | undefined;
  if (a !== undefined && b !== undefined && (strict ? a >= b : a > b))
    throw new ConfigError(`replay selection: ${low} (${a}) must be ${strict ? 'below' : 'at most'} ${high} (${b})`);
}

/** The selection's conditions on the event itself (everything but the Kafka position). */
export function matchesSelection(t: TrajectoryEvent, s: ReplaySelection): boolean {
  return (
    t.runId === s.runId &&
    (s.includeIncomplete === true || t.outcome !== 'incomplete') &&
    (s.fromMs === undefined || t.lastEventTimeMs >= s.fromMs) &&
    (s.toMs === undefined || t.lastEventTimeMs < s.toMs) &&
    (s.minPolicyVersion === undefined || t.minPolicyVersion >= s.minPolicyVersion) &&
    (s.maxPolicyVersion === undefined || t.maxPolicyVersion <= s.maxPolicyVersion) &&
    (s.minReward === undefined || t.totalReward >= s.minReward) &&
    (s.success === undefined || t.success === s.success)
  );
}

/** A selected trajectory and where it came from. */
export interface SelectedTrajectory {
  readonly trajectory: TrajectoryEvent;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** 'kafka': the stored event; 'steps': rebuilt from ClickHouse's steps table. */
  readonly from: 'kafka' | 'steps';
}

/** A ClickHouse row that could not be turned into its trajectory. */
export interface UnavailableTrajectory {
  readonly episodeId: string;
  readonly reason: 'not-in-kafka' | 'no-steps' | 'rebuild-mismatch';
  readonly detail: string;
}

export interface SelectionResult {
  readonly selection: ReplaySelection;
  readonly trajectories: SelectedTrajectory[];
  /** Events read from Kafka (scanned), or rows returned by ClickHouse. */
  readonly read: number;
  /** Copies of an already selected episode that were left out. */
  readonly duplicates: number;
  /** Kafka payloads that could not be decoded (they were dead-lettered when first consumed). */
  readonly undecodable: number;
  readonly unavailable: UnavailableTrajectory[];
}

export interface SelectOptions {
  /** ClickHouse to query (default: the backbone config's). */
  readonly clickhouse?: { queryJson<T = Record<string, unknown>>(sql: string): Promise<T[]> };
}

export async function selectTrajectories(backbone: Backbone, input: ReplaySelection | ReplaySelectionInput, options: SelectOptions = {}): Promise<SelectionResult> {
  const selection = buildSelection(input as ReplaySelectionInput);
  return selection.source === 'kafka' ? selectFromKafka(backbone, selection) : selectFromClickHouse(backbone, selection, options);
}

// ---------------------------------------------------------------- Kafka

async function selectFromKafka(backbone: Backbone, selection: ReplaySelection): Promise<SelectionResult> {
  const topic = topicName(backbone.config, 'trajectories');
  const range = await scanRange(backbone, topic, selection);
  const replay = await createReplay(backbone.kafka, {
    topic,
    decode: eventDecoder(backbone.codec, 'trajectory'),
    classify: classifyDecodeError,
    from: { offsets: Object.fromEntries(range.start) },
    to: { offsets: Object.fromEntries(range.end) },
  });
  let read = 0;
  let duplicates = 0;
  const seen = new Set<string>();
  const selected$ = replay.events$.pipe(
    filter((envelope: Envelope<TrajectoryEvent>) => {
      read++;
      if (!matchesSelection(envelope.value, selection)) return false;
      if (seen.has(envelope.value.episodeId)) {
        duplicates++;
        return false;
      }
      seen.add(envelope.value.episodeId);
      return true;
    }),
    take(selection.limit ?? Number.POSITIVE_INFINITY),
    toArray(),
  );
  try {
    const envelopes = await lastValueFrom(selected$);
    return {
      selection,
      trajectories: envelopes.map((e) => ({ trajectory: e.value, topic: e.topic, partition: e.partition, offset: e.offset, from: 'kafka' as const })),
      read,
      duplicates,
      undecodable: replay.stats.skipped,
      unavailable: [],
    };
  } finally {
    await replay.close({ drain: false });
  }
}

/** Per partition, the [start, end) offsets to scan: the offset range, the partition, and the time's lower bound. */
async function scanRange(backbone: Backbone, topic: string, s: ReplaySelection): Promise<{ start: Map<number, bigint>; end: Map<number, bigint> }> {
  const admin: Admin = backbone.kafka.admin();
  await admin.connect();
  try {
    const low = await positionsOf(admin, topic, 'earliest');
    const high = await positionsOf(admin, topic, 'latest');
    const byTime = s.fromMs === undefined ? undefined : await positionsOf(admin, topic, { timestamp: Math.max(0, s.fromMs - CLOCK_SKEW_MS) });
    if (s.partition !== undefined && !high.has(s.partition)) {
      throw new ConfigError(`replay selection: ${topic} has no partition ${s.partition} (partitions ${[...high.keys()].sort((a, b) => a - b).join(', ')})`);
    }
    const start = new Map<number, bigint>();
    const end = new Map<number, bigint>();
    for (const [partition, h] of high) {
      const l = low.get(partition)!;
      if (s.partition !== undefined && partition !== s.partition) {
        start.set(partition, l);
        end.set(partition, l);
        continue;
      }
      let from = l;
      if (s.fromOffset !== undefined && BigInt(s.fromOffset) > from) from = BigInt(s.fromOffset);
      const t = byTime?.get(partition);
      if (t !== undefined && t > from) from = t;
      let to = h;
      if (s.toOffset !== undefined && BigInt(s.toOffset) < to) to = BigInt(s.toOffset);
      if (from > to) from = to;
      start.set(partition, from);
      end.set(partition, to);
    }
    return { start, end };
  } finally {
    await admin.disconnect();
  }
}

// ---------------------------------------------------------------- ClickHouse

/** One row of the trajectories table as queried (64-bit integers as JSON numbers), with its Kafka position. */
export interface TrajectoryRow extends Omit<StoredTrajectoryRow, 'metrics_keys' | 'metrics_values'> {
  kafka_topic: string;
  kafka_partition: number;
  kafka_offset: number;
}

const TRAJECTORY_COLUMNS = [
  'run_id',
  'env_name',
  'env_version',
  'group_id',
  'episode_id',
  'outcome',
  'step_count',
  'total_reward',
  'success',
  'invalid_actions',
  'gap_count',
  'min_policy_version',
  'max_policy_version',
  'first_event_time_ms',
  'last_event_time_ms',
  'kafka_topic',
  'kafka_partition',
  'kafka_offset',
];

/** The SELECT on `trajectories` for a selection; every value in it went through sqlInt or sqlString. */
export function trajectorySelectSql(s: ReplaySelection, trajectoriesTopic: string): string {
  const where = [`run_id = ${sqlString(s.runId)}`, `kafka_topic = ${sqlString(trajectoriesTopic)}`];
  if (s.includeIncomplete !== true) where.push(`outcome != 'incomplete'`);
  if (s.fromMs !== undefined) where.push(`last_event_time_ms >= ${sqlInt(s.fromMs)}`);
  if (s.toMs !== undefined) where.push(`last_event_time_ms < ${sqlInt(s.toMs)}`);
  if (s.partition !== undefined) where.push(`kafka_partition = ${sqlInt(s.partition)}`);
  if (s.fromOffset !== undefined) where.push(`kafka_offset >= ${sqlInt(s.fromOffset)}`);
  if (s.toOffset !== undefined) where.push(`kafka_offset < ${sqlInt(s.toOffset)}`);
  if (s.minPolicyVersion !== undefined) where.push(`min_policy_version >= ${sqlInt(s.minPolicyVersion)}`);
  if (s.maxPolicyVersion !== undefined) where.push(`max_policy_version <= ${sqlInt(s.maxPolicyVersion)}`);
  if (s.minReward !== undefined) where.push(`total_reward >= ${sqlFloat(s.minReward)}`);
  if (s.success !== undefined) where.push(`success = ${s.success ? 1 : 0}`);
  // FINAL: the sink may have stored an event twice before a merge (ReplacingMergeTree).
  return (
    `SELECT ${TRAJECTORY_COLUMNS.join(', ')} FROM trajectories FINAL WHERE ${where.join(' AND ')} ` +
    `ORDER BY last_event_time_ms, group_id, episode_id${s.limit === undefined ? '' : ` LIMIT ${sqlInt(s.limit)}`}`
  );
}

/** A finite number as an SQL literal (exact: JS prints the shortest round-tripping decimal). */
function sqlFloat(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`sqlFloat needs a finite number, got ${value}`);
  const text = String(value);
  if (!/^-?\d+(\.\d+)?(e[+-]?\d+)?$/.test(text)) throw new RangeError(`unexpected number text ${text}`);
  return text.includes('e') ? `toFloat64('${text}')` : text;
}

const SETTINGS = '\nSETTINGS max_execution_time = 120';

async function selectFromClickHouse(backbone: Backbone, selection: ReplaySelection, options: SelectOptions): Promise<SelectionResult> {
  const clickhouse = options.clickhouse ?? clickHouseClient(backbone.config);
  const topic = topicName(backbone.config, 'trajectories');
  const rows = await clickhouse.queryJson<TrajectoryRow>(trajectorySelectSql(selection, topic) + SETTINGS);
  const fetch = selection.fetch ?? 'auto';
  const unavailable: UnavailableTrajectory[] = [];
  const found = new Map<string, SelectedTrajectory>();
  let undecodable = 0;
  if (fetch !== 'steps') {
    const fromKafka = await fetchAtOffsets(backbone, rows);
    undecodable = fromKafka.undecodable;
    for (const item of fromKafka.found) found.set(item.trajectory.episodeId, item);
  }
  const missing = rows.filter((r) => !found.has(r.episode_id));
  if (fetch === 'kafka') {
    for (const row of missing)
      unavailable.push({
        episodeId: row.episode_id,
        reason: 'not-in-kafka',
        detail: `${row.kafka_topic}/${row.kafka_partition}@${row.kafka_offset} is not the episode's trajectory (deleted by retention, or the topic was recreated)`,
      });
  } else if (missing.length > 0) {
    const rebuilt = await rebuildFromSteps(clickhouse, backbone.config, missing);
    unavailable.push(...rebuilt.unavailable);
    for (const item of rebuilt.found) found.set(item.trajectory.episodeId, item);
  }
  // In the query's order (event time).
  const trajectories = rows.map((r) => found.get(r.episode_id)).filter((t): t is SelectedTrajectory => t !== undefined);
  return { selection, trajectories, read: rows.length, duplicates: 0, undecodable, unavailable };
}

/** The TrajectoryEvents at the rows' Kafka positions (checked to be the rows' episodes). */
async function fetchAtOffsets(backbone: Backbone, rows: readonly TrajectoryRow[]): Promise<{ found: SelectedTrajectory[]; undecodable: number }> {
  const found: SelectedTrajectory[] = [];
  let undecodable = 0;
  const byTopic = new Map<string, TrajectoryRow[]>();
  for (const row of rows) byTopic.set(row.kafka_topic, [...(byTopic.get(row.kafka_topic) ?? []), row]);
  for (const [topic, topicRows] of byTopic) {
    const wanted = new Map(topicRows.map((r) => [`${r.kafka_partition}@${r.kafka_offset}`, r]));
    const start: Record<number, number> = {};
    const end: Record<number, number> = {};
    for (const r of topicRows) {
      start[r.kafka_partition] = Math.min(start[r.kafka_partition] ?? Number.MAX_SAFE_INTEGER, r.kafka_offset);
      end[r.kafka_partition] = Math.max(end[r.kafka_partition] ?? 0, r.kafka_offset + 1);
    }
    const replay = await createReplay(backbone.kafka, {
      topic,
      decode: eventDecoder(backbone.codec, 'trajectory'),
      classify: classifyDecodeError,
      from: { offsets: start },
      to: { offsets: end },
    });
    try {
      const envelopes = await lastValueFrom(
        replay.events$.pipe(
          filter((e: Envelope<TrajectoryEvent>) => {
            const row = wanted.get(`${e.partition}@${e.offset}`);
            return row !== undefined && row.run_id === e.value.runId && row.episode_id === e.value.episodeId;
          }),
          take(wanted.size),
          toArray(),
        ),
      );
      for (const e of envelopes) found.push({ trajectory: e.value, topic: e.topic, partition: e.partition, offset: e.offset, from: 'kafka' });
      undecodable += replay.stats.skipped;
    } finally {
      await replay.close({ drain: false });
    }
  }
  return { found, undecodable };
}

/** One row of the steps table as queried (STEP_COLUMNS). */
export type StepRow = Omit<StoredStepRow, 'kafka_topic'>;

const STEP_COLUMNS = [
  'event_id',
  'run_id',
  'env_name',
  'env_version',
  'group_id',
  'episode_id',
  'step_index',
  'observation',
  'has_observation_token_ids',
  'observation_token_ids',
  'action',
  'action_token_ids',
  'action_log_probs',
  'policy_version',
  'reward',
  'terminated',
  'truncated',
  'action_valid',
  'state_key',
  'metrics_keys',
  'metrics_values',
  'info_keys',
  'info_values',
  'event_time_ms',
  'kafka_partition',
  'kafka_offset',
];

/** ClickHouse writes NaN and infinities as JSON null; the columns cannot be NULL otherwise. */
const numeric = (value: number | null): number => (value === null ? Number.NaN : value);

/** The StepEvent a steps row was stored from (all of its fields are columns). */
export function stepEventOfRow(r: StepRow): StepEvent {
  return {
    eventId: r.event_id,
    runId: r.run_id,
    envName: r.env_name,
    envVersion: r.env_version,
    groupId: r.group_id,
    episodeId: r.episode_id,
    stepIndex: r.step_index,
    observation: r.observation,
    observationTokenIds: r.has_observation_token_ids === 1 ? r.observation_token_ids : null,
    action: r.action,
    actionTokenIds: r.action_token_ids,
    // Float32 in ClickHouse as in Avro: fround gives back the exact float the event carried.
    actionLogProbs: r.action_log_probs.map((x) => Math.fround(numeric(x))),
    policyVersion: r.policy_version,
    reward: numeric(r.reward),
    terminated: r.terminated === 1,
    truncated: r.truncated === 1,
    actionValid: r.action_valid === 1,
    stateKey: r.state_key,
    metrics: Object.fromEntries(r.metrics_keys.map((k, i) => [k, numeric(r.metrics_values[i] ?? null)])),
    info: Object.fromEntries(r.info_keys.map((k, i) => [k, r.info_values[i] ?? ''])),
    eventTimeMs: r.event_time_ms,
  };
}

const EPISODES_PER_QUERY = 200;

async function rebuildFromSteps(
  clickhouse: NonNullable<SelectOptions['clickhouse']>,
  config: TrajflowConfig,
  rows: readonly TrajectoryRow[],
): Promise<{ found: SelectedTrajectory[]; unavailable: UnavailableTrajectory[] }> {
  const found: SelectedTrajectory[] = [];
  const unavailable: UnavailableTrajectory[] = [];
  const stepsTopic = topicName(config, 'env.steps');
  for (let i = 0; i < rows.length; i += EPISODES_PER_QUERY) {
    const chunk = rows.slice(i, i + EPISODES_PER_QUERY);
    const runId = chunk[0]!.run_id;
    const ids = chunk.map((r) => sqlString(r.episode_id)).join(', ');
    const stepRows = await clickhouse.queryJson<StepRow>(
      `SELECT ${STEP_COLUMNS.join(', ')} FROM steps FINAL WHERE run_id = ${sqlString(runId)} AND kafka_topic = ${sqlString(stepsTopic)} AND episode_id IN (${ids}) ` +
        `ORDER BY episode_id, kafka_partition, kafka_offset${SETTINGS}`,
    );
    const byEpisode = new Map<string, StepRow[]>();
    for (const s of stepRows) byEpisode.set(s.episode_id, [...(byEpisode.get(s.episode_id) ?? []), s]);
    const metrics = await trajectoryMetrics(clickhouse, runId, chunk);
    for (const row of chunk) {
      const result = rebuildTrajectory(row, byEpisode.get(row.episode_id) ?? [], metrics.get(row.episode_id));
      if ('reason' in result) unavailable.push(result);
      else found.push({ trajectory: result, topic: row.kafka_topic, partition: row.kafka_partition, offset: String(row.kafka_offset), from: 'steps' });
    }
  }
  return { found, unavailable };
}

async function trajectoryMetrics(
  clickhouse: NonNullable<SelectOptions['clickhouse']>,
  runId: string,
  rows: readonly TrajectoryRow[],
): Promise<Map<string, Record<string, number>>> {
  const ids = rows.map((r) => sqlString(r.episode_id)).join(', ');
  const topics = [...new Set(rows.map((r) => sqlString(r.kafka_topic)))].join(', ');
  const found = await clickhouse.queryJson<{ episode_id: string; metrics_keys: string[]; metrics_values: (number | null)[] }>(
    `SELECT episode_id, metrics_keys, metrics_values FROM trajectory_metrics FINAL WHERE run_id = ${sqlString(runId)} AND kafka_topic IN (${topics}) AND episode_id IN (${ids})${SETTINGS}`,
  );
  return new Map(found.map((m) => [m.episode_id, Object.fromEntries(m.metrics_keys.map((k, i) => [k, numeric(m.metrics_values[i] ?? null)]))]));
}

/**
 * The trajectory of a `trajectories` row from its episode's step rows (in Kafka order), the way the
 * processors assembled it: the first copy of each step index wins, then trajectoryFromSteps. The result
 * must reproduce the row's totals; otherwise (steps that came after the episode was closed, steps the sink
 * has not stored yet) the episode is reported instead.
 */
export function rebuildTrajectory(row: TrajectoryRow, steps: readonly StepRow[], storedMetrics: Record<string, number> | undefined): TrajectoryEvent | UnavailableTrajectory {
  if (steps.length === 0) return { episodeId: row.episode_id, reason: 'no-steps', detail: `no rows in steps for episode ${row.episode_id}` };
  const first = new Map<number, StepEvent>();
  let duplicates = 0;
  for (const s of steps) {
    if (first.has(s.step_index)) duplicates++;
    else first.set(s.step_index, stepEventOfRow(s));
  }
  const { trajectory } = trajectoryFromSteps([...first.values()], { duplicates });
  const differences: string[] = [];
  const same = (name: string, stored: unknown, rebuilt: unknown) => {
    if (stored !== rebuilt) differences.push(`${name} stored ${String(stored)}, rebuilt ${String(rebuilt)}`);
  };
  same('outcome', row.outcome, trajectory.outcome);
  same('stepCount', row.step_count, trajectory.stepCount);
  same('success', row.success === 1, trajectory.success);
  same('gapCount', row.gap_count, trajectory.gapCount);
  same('invalidActions', row.invalid_actions, trajectory.invalidActions);
  same('minPolicyVersion', row.min_policy_version, trajectory.minPolicyVersion);
  same('maxPolicyVersion', row.max_policy_version, trajectory.maxPolicyVersion);
  same('lastEventTimeMs', row.last_event_time_ms, trajectory.lastEventTimeMs);
  const storedReward = numeric(row.total_reward);
  if (!(Object.is(storedReward, trajectory.totalReward) || Math.abs(storedReward - trajectory.totalReward) <= 1e-9 * Math.max(1, Math.abs(storedReward)))) {
    differences.push(`totalReward stored ${storedReward}, rebuilt ${trajectory.totalReward}`);
  }
  if (differences.length > 0) return { episodeId: row.episode_id, reason: 'rebuild-mismatch', detail: differences.join('; ') };
  return { ...trajectory, totalReward: storedReward, metrics: storedMetrics ?? trajectory.metrics };
}

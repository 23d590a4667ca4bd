// The sink's config: its options resolved, defaults filled in, bounds checked, and the topic each stored
// event is read from. Pure: the sink (sink.ts) starts from this config and only does the I/O.
import { topicName, type ClickHouseConfig, type TrajflowConfig } from '../../core/config.js';
import { eventNames, type EventName } from '../../schemas/index.js';
import { sinkTopics, type TableName } from './rows.js';

export interface SinkOptions {
  /** Consumer group (default `<topic prefix>.sink`, so sinks of different prefixes never share a group). */
  readonly groupId?: string;
  /** Events to store (default: every event). */
  readonly events?: readonly EventName[];
  /**
   * Rows per insert at most (default 20,000). ClickHouse's own work per row falls with larger inserts: each
   * insert writes a part that background merges rewrite, and fewer, larger parts mean fewer merge levels
   * (docs/results/sink.md).
   */
  readonly batchRows?: number;
  /**
   * A table's buffered rows are inserted at the latest this long after the first of them arrived (default
   * 1,000: long enough that a busy sink fills whole batches, whose rows cost ClickHouse less CPU than those of
   * inserts cut early; docs/results/sink.md).
   */
  readonly flushIntervalMs?: number;
  /** Inserts into one table at a time at most (default 2: one being stored while the next is sent). */
  readonly insertsInFlight?: number;
  /**
   * Events held (delivered, not yet stored) at most; past that consumption pauses (default 3 × batchRows:
   * a batch being stored, the next one sent, one filling).
   */
  readonly maxInFlight?: number;
  /**
   * Payload bytes held at most (default 256 MiB): what bounds memory when the events are large — a
   * trajectory carries all its steps, so 60,000 of them would not fit where 60,000 steps do.
   */
  readonly maxInFlightBytes?: number;
  /**
   * Transcode steps on a worker thread (default false): the main thread then only reads Kafka, batches,
   * inserts and acks while the worker walks the steps' Avro bytes into rows. It frees the main thread but
   * costs more CPU per row (the copies to and from the worker); where the sink, ClickHouse and the broker
   * already use every core it stores no more rows per second (docs/results/sink.md). For machines with
   * cores to spare.
   */
  readonly transcodeWorker?: boolean;
  /** Write the token arrays of samples to sample_tokens (default false: counts only). */
  readonly includeSampleTokens?: boolean;
  /** Backoff between failed inserts: from initial, doubling, capped at max (defaults 100 and 5,000 ms). */
  readonly retryInitialMs?: number;
  readonly retryMaxMs?: number;
  /** One insert request's timeout (default 60 s). */
  readonly insertTimeoutMs?: number;
  /** How long a draining close waits for held events to be stored (default 15 s). */
  readonly drainTimeoutMs?: number;
  /** The consumer's group session timeout (default 30 s; a killed sink's partitions wait this long for a new member). */
  readonly sessionTimeoutMs?: number;
  /** ClickHouse endpoint and database (default: backbone.config.clickhouse). */
  readonly clickhouse?: { readonly url: string; readonly database: string };
  /** Called after every confirmed insert. */
  readonly onInsert?: (table: TableName, rows: number, ms: number) => void;
  /** Called on every failed insert attempt (it is retried). */
  readonly onInsertError?: (table: TableName, error: Error, attempt: number) => void;
}

/** The sink's defaults (SinkOptions says why each), shared with the flags of `trajflow sink`. */
export const SINK_DEFAULTS = { batchRows: 20_000, flushIntervalMs: 1000, insertsInFlight: 2, maxInFlightBytes: 256 * 2 ** 20 } as const;

/** Events held by default: a batch being stored, the next one sent, one filling. */
export const defaultMaxInFlight = (batchRows: number): number => 3 * batchRows;

/** SinkOptions with every default filled in (the callbacks stay on the options). */
export interface SinkConfig {
  readonly groupId: string;
  readonly events: readonly EventName[];
  /** The event each consumed topic holds: a payload is decoded with its topic's decoder, so one of another kind is a dead letter. */
  readonly eventByTopic: ReadonlyMap<string, EventName>;
  readonly batchRows: number;
  readonly flushIntervalMs: number;
  readonly insertsInFlight: number;
  readonly maxInFlight: number;
  readonly maxInFlightBytes: number;
  readonly includeSampleTokens: boolean;
  readonly transcodeWorker: boolean;
  readonly retryInitialMs: number;
  readonly retryMaxMs: number;
  readonly insertTimeoutMs: number;
  readonly drainTimeoutMs: number;
  /** undefined: the consumer's own default. */
  readonly sessionTimeoutMs: number | undefined;
  readonly clickhouse: SinkClickHouse;
}

/** What the sink takes from the project's config: the topic prefix and where ClickHouse is. */
export type SinkProjectConfig = Pick<TrajflowConfig, 'topicPrefix'> & { readonly clickhouse: SinkClickHouse };

/** Where the sink writes, and as whom (unset credentials: the 'default' user without a password). */
type SinkClickHouse = Pick<ClickHouseConfig, 'url' | 'database'> & Partial<Pick<ClickHouseConfig, 'credentials'>>;

/** Resolves the options against the config; RangeError on a batch size, flush interval or insert concurrency out of bounds. */
export function buildSinkConfig(config: SinkProjectConfig, options: SinkOptions = {}): SinkConfig {
  const batchRows = options.batchRows ?? SINK_DEFAULTS.batchRows;
  const flushIntervalMs = options.flushIntervalMs ?? SINK_DEFAULTS.flushIntervalMs;
  const insertsInFlight = options.insertsInFlight ?? SINK_DEFAULTS.insertsInFlight;
  if (!(batchRows >= 1)) throw new RangeError(`batchRows must be ≥ 1, got ${batchRows}`);
  if (!(flushIntervalMs > 0)) throw new RangeError(`flushIntervalMs must be > 0, got ${flushIntervalMs}`);
  if (!(insertsInFlight >= 1)) throw new RangeError(`insertsInFlight must be ≥ 1, got ${insertsInFlight}`);
  const events = options.events ?? eventNames;
  return {
    groupId: options.groupId ?? `${config.topicPrefix}.sink`,
    events,
    eventByTopic: new Map(events.map((event) => [topicName(config, sinkTopics[event]), event])),
    batchRows,
    flushIntervalMs,
    insertsInFlight,
    maxInFlight: options.maxInFlight ?? defaultMaxInFlight(batchRows),
    maxInFlightBytes: options.maxInFlightBytes ?? SINK_DEFAULTS.maxInFlightBytes,
    includeSampleTokens: options.includeSampleTokens ?? false,
    transcodeWorker: options.transcodeWorker ?? false,
    retryInitialMs: options.retryInitialMs ?? 100,
    retryMaxMs: options.retryMaxMs ?? 5000,
    insertTimeoutMs: options.insertTimeoutMs ?? 60_000,
    drainTimeoutMs: options.drainTimeoutMs ?? 15_000,
    sessionTimeoutMs: options.sessionTimeoutMs,
    clickhouse: options.clickhouse ?? config.clickhouse,
  };
}

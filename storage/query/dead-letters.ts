// Dead letters as the ClickHouse sink stored them (table `dead_letters`, migration 0001): what was
// rejected, why, and from where — consumers' rejections and the HTTP API's alike. Three steps, each
// testable alone: parse the query parameters (strict, bounded), build the SQL from the parsed values
// only, and shape the rows for JSON (binary key and payload as base64, the payload cut to a preview).
import { sqlInt, sqlString } from './sql.js';
import { enumParam, intParam, patternParam, readQuery, type RawQuery } from './params.js';
import { HttpProblem, problemTypes } from '../../core/problem.js';
import { read, type AnalyticsStore } from './store.js';

export type { AnalyticsStore } from './store.js';

export const DEAD_LETTERS_TABLE = 'dead_letters';
export const MAX_LIMIT = 1000;
export const DEFAULT_LIMIT = 100;
/** Default window: the last day. */
export const DEFAULT_WINDOW_MS = 24 * 60 * 60 * 1000;
/** Widest window one request may scan. */
export const MAX_WINDOW_MS = 90 * 24 * 60 * 60 * 1000;
/** untilMs defaults to a little after now, so rows stamped by a clock slightly ahead still show. */
export const CLOCK_SKEW_MS = 60_000;
/** Bytes of each payload returned (the full length is in payloadBytes). */
export const PAYLOAD_PREVIEW_BYTES = 4096;

const MAX_TIME_MS = 8_640_000_000_000_000; // the largest Date; far beyond any event time

export interface DeadLetterQuery {
  readonly limit: number;
  /** Inclusive lower bound on event_time_ms (when the record was dead-lettered). */
  readonly sinceMs: number;
  /** Exclusive upper bound on event_time_ms. */
  readonly untilMs: number;
  readonly order: 'asc' | 'desc';
  /** Only this reason code (bad-marker, invalid-value …). */
  readonly reason?: string;
}

export const deadLetterParams = ['limit', 'sinceMs', 'untilMs', 'order', 'reason'] as const;

/** Parses ?limit=&sinceMs=&untilMs=&order=&reason=; throws HttpProblem (400) naming the bad parameter. */
export function parseDeadLetterQuery(query: RawQuery, nowMs: number): DeadLetterQuery {
  const values = readQuery(query, deadLetterParams);
  const limit = intParam(values, 'limit', { min: 1, max: MAX_LIMIT }, DEFAULT_LIMIT);
  const untilMs = intParam(values, 'untilMs', { min: 1, max: MAX_TIME_MS }, nowMs + CLOCK_SKEW_MS);
  const sinceMs = intParam(values, 'sinceMs', { min: 0, max: MAX_TIME_MS }, Math.max(0, untilMs - DEFAULT_WINDOW_MS));
  if (sinceMs >= untilMs) throw new HttpProblem(problemTypes.invalidQuery, `sinceMs (${sinceMs}) must be before untilMs (${untilMs})`, { field: 'sinceMs' });
  if (untilMs - sinceMs > MAX_WINDOW_MS) {
    throw new HttpProblem(problemTypes.invalidQuery, `the window from sinceMs to untilMs is over ${MAX_WINDOW_MS / 86_400_000} days: narrow it`, { field: 'sinceMs' });
  }
  const order = enumParam(values, 'order', ['desc', 'asc'], 'desc');
  const reason = patternParam(values, 'reason', /^[a-z0-9][a-z0-9-]{0,63}$/, 'a reason code (lowercase letters, digits and -)');
  return { limit, sinceMs, untilMs, order, ...(reason === undefined ? {} : { reason }) };
}

/** The SELECT for a parsed query; every value in it went through sqlInt or sqlString. */
export function deadLettersSql(q: DeadLetterQuery): string {
  const direction = q.order === 'asc' ? 'ASC' : 'DESC';
  const where = [`event_time_ms >= ${sqlInt(q.sinceMs)}`, `event_time_ms < ${sqlInt(q.untilMs)}`];
  if (q.reason !== undefined) where.push(`reason = ${sqlString(q.reason)}`);
  // FINAL: the sink may have inserted a redelivered dead letter twice; FINAL shows it once.
  return `SELECT reason, detail, source_topic, source_partition, source_offset,
       isNull(key) AS key_is_null, hex(ifNull(key, '')) AS key_hex,
       length(payload) AS payload_bytes, hex(substring(payload, 1, ${sqlInt(PAYLOAD_PREVIEW_BYTES)})) AS payload_head_hex,
       event_time_ms, kafka_topic, kafka_partition, kafka_offset
FROM ${DEAD_LETTERS_TABLE} FINAL
WHERE ${where.join(' AND ')}
ORDER BY event_time_ms ${direction}, kafka_topic ${direction}, kafka_partition ${direction}, kafka_offset ${direction}
LIMIT ${sqlInt(q.limit)}`;
}

export interface DeadLetterRow {
  reason: string;
  detail: string;
  source_topic: string;
  source_partition: number;
  source_offset: number;
  key_is_null: number;
  key_hex: string;
  payload_bytes: number;
  payload_head_hex: string;
  event_time_ms: number;
  kafka_topic: string;
  kafka_partition: number;
  kafka_offset: number;
}

export interface DeadLetterView {
  readonly reason: string;
  readonly detail: string;
  readonly sourceTopic: string;
  readonly sourcePartition: number;
  readonly sourceOffset: number;
  /** The source record's key, base64; null when it had none. */
  readonly keyBase64: string | null;
  readonly payloadBytes: number;
  /** The first PAYLOAD_PREVIEW_BYTES bytes of the payload, base64. */
  readonly payloadBase64: string;
  readonly payloadTruncated: boolean;
  /** When the record was dead-lettered, ms since the epoch. */
  readonly eventTimeMs: number;
  /** Where the dead letter itself is in Kafka. */
  readonly deadLetterTopic: string;
  readonly deadLetterPartition: number;
  readonly deadLetterOffset: number;
}

export function deadLetterView(row: DeadLetterRow): DeadLetterView {
  const payloadBytes = Number(row.payload_bytes);
  return {
    reason: row.reason,
    detail: row.detail,
    sourceTopic: row.source_topic,
    sourcePartition: Number(row.source_partition),
    sourceOffset: Number(row.source_offset),
    keyBase64: Number(row.key_is_null) === 1 ? null : Buffer.from(row.key_hex, 'hex').toString('base64'),
    payloadBytes,
    payloadBase64: Buffer.from(row.payload_head_hex, 'hex').toString('base64'),
    payloadTruncated: payloadBytes > PAYLOAD_PREVIEW_BYTES,
    eventTimeMs: Number(row.event_time_ms),
    deadLetterTopic: row.kafka_topic,
    deadLetterPartition: Number(row.kafka_partition),
    deadLetterOffset: Number(row.kafka_offset),
  };
}

export async function queryDeadLetters(store: AnalyticsStore, q: DeadLetterQuery): Promise<DeadLetterView[]> {
  const rows = await read<DeadLetterRow>(store, deadLettersSql(q));
  return rows.map(deadLetterView);
}

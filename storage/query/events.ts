// The query side of GET /v1/events (server-sent events): what each event type reads, and the cursor that
// decides which rows are new.
//
// Why poll ClickHouse rather than consume Kafka: the stream then shows exactly what the REST endpoints
// show (same tables, same views, already deduplicated by the sink's keys), costs one small indexed query per
// type and second per open stream instead of a Kafka consumer group per browser tab (a join and rebalance
// each, and Avro decoding of every event of every run to keep one run's), and works for runs whose events
// were written straight to ClickHouse. The price is latency: the sink's flush interval plus the poll.
//
// The cursor: rows are read by event time from `from` on, oldest first, a page at a time. ClickHouse has no
// insertion-order column, and the sink may insert a row whose event time is a little older than rows
// already seen (batches from several partitions), so `from` trails the newest event time seen by a
// lookback, and the keys already sent within it are remembered: a row is new when its key was not sent. A
// row that reaches ClickHouse more than the lookback later than newer rows of the same type is missed;
// delivery is at least once after a reconnect (clients dedupe by batchId / step / alertId / policyVersion).
import { alertView, alertsSelect, type AlertRow } from './alerts.js';
import { evaluationView, evaluationsSelect, type EvaluationRow } from './evaluations.js';
import { learnerMetricsSelect, learnerMetricsView, type LearnerMetricsRow } from './learner-metrics.js';
import { MAX_TIME_MS, intParam, listParam, patternParam, readQuery, ID_DESCRIPTION, ID_PATTERN, type RawQuery } from './params.js';
import { ROLLOUT_STATS_COLUMNS, rolloutStatsView, type RolloutStatsRow } from './rollout-stats.js';
import { sqlInt, sqlString } from './sql.js';
import { HttpProblem, problemTypes } from '../../core/problem.js';

export const EVENT_TYPES = ['rollout-stats', 'learner-step', 'alert', 'evaluation'] as const;
export type EventType = (typeof EVENT_TYPES)[number];

/** Rows read per type and poll. */
export const EVENT_PAGE = 500;
/** How far `from` trails the newest event time seen. */
export const DEFAULT_LOOKBACK_MS = 120_000;

export interface EventsQuery {
  readonly runId: string;
  readonly types: readonly EventType[];
  /** Send rows from this event time on; absent = only rows that arrive after the stream opened. */
  readonly sinceMs?: number;
}

export const eventsParams = ['runId', 'types', 'sinceMs'] as const;

/**
 * Parses ?runId=&types=&sinceMs=; `lastEventId` (the Last-Event-ID header an EventSource sends when it
 * reconnects: the event time of the last event it got) resumes a lookback before it.
 */
export function parseEventsQuery(query: RawQuery, lastEventId: string | undefined, lookbackMs = DEFAULT_LOOKBACK_MS): EventsQuery {
  const values = readQuery(query, eventsParams);
  const runId = patternParam(values, 'runId', ID_PATTERN, ID_DESCRIPTION);
  if (runId === undefined) throw new HttpProblem(problemTypes.invalidQuery, 'runId: required; the run whose events to stream', { field: 'runId' });
  const types = listParam(values, 'types', EVENT_TYPES, EVENT_TYPES);
  let sinceMs = values.has('sinceMs') ? intParam(values, 'sinceMs', { min: 0, max: MAX_TIME_MS }, 0) : undefined;
  if (lastEventId !== undefined && /^\d{1,16}$/.test(lastEventId)) sinceMs = Math.max(0, Number(lastEventId) - lookbackMs);
  return { runId, types, ...(sinceMs === undefined ? {} : { sinceMs }) };
}

/** The rows of one type with event time ≥ fromMs, oldest first, one page. */
export function eventSql(type: EventType, runId: string, fromMs: number, page = EVENT_PAGE): string {
  const window = { runId, sinceMs: fromMs, untilMs: MAX_TIME_MS };
  const tail = `ORDER BY event_time_ms ASC, key ASC\nLIMIT ${sqlInt(page)}`;
  switch (type) {
    case 'rollout-stats':
      return `SELECT ${ROLLOUT_STATS_COLUMNS}, batch_id AS key
FROM rollout_stats FINAL
WHERE run_id = ${sqlString(runId)} AND scope = 'batch' AND event_time_ms >= ${sqlInt(fromMs)}
${tail}`;
    case 'learner-step':
      return `SELECT *, toString(step) AS key FROM (
${learnerMetricsSelect(window)}
)
${tail}`;
    case 'alert':
      return `SELECT *, alert_id AS key FROM (
${alertsSelect(window)}
)
${tail}`;
    case 'evaluation':
      return `SELECT *, toString(policy_version) AS key FROM (
${evaluationsSelect(window)}
)
${tail}`;
  }
}

export type EventRow = { key: string; event_time_ms: number } & Record<string, unknown>;

/** The JSON an event carries: the same view as the REST endpoint of its type. */
export function eventView(type: EventType, row: EventRow): object {
  switch (type) {
    case 'rollout-stats':
      return rolloutStatsView(row as unknown as RolloutStatsRow);
    case 'learner-step':
      return learnerMetricsView(row as unknown as LearnerMetricsRow);
    case 'alert':
      return alertView(row as unknown as AlertRow);
    case 'evaluation':
      return evaluationView(row as unknown as EvaluationRow);
  }
}

/** Which rows of one type are new (see the top of the file). */
export class StreamCursor {
  /** Inclusive lower bound of the next read. */
  from: number;
  private high = -Infinity;
  private readonly sent = new Map<string, number>();
  /** The last read was a full page: read again without waiting. */
  behind = false;

  constructor(
    fromMs: number,
    private readonly lookbackMs = DEFAULT_LOOKBACK_MS,
    private readonly page = EVENT_PAGE,
  ) {
    this.from = fromMs;
  }

  /** Takes one read's rows (oldest first); returns the positions of the new ones and moves the cursor. */
  take(rows: ReadonlyArray<{ readonly key: string; readonly timeMs: number }>): number[] {
    const fresh: number[] = [];
    rows.forEach((row, i) => {
      if (!this.sent.has(row.key)) {
        this.sent.set(row.key, row.timeMs);
        fresh.push(i);
      }
      this.high = Math.max(this.high, row.timeMs);
    });
    this.behind = rows.length >= this.page;
    // A full page: more rows may wait after it, so read on from its last time (its keys stay remembered).
    this.from = this.behind ? Math.max(this.from, rows[rows.length - 1]!.timeMs) : Math.max(this.from, this.high - this.lookbackMs);
    for (const [key, time] of this.sent) if (time < this.from) this.sent.delete(key);
    return fresh;
  }

  /** Keys remembered (for tests: bounded by the lookback). */
  get remembered(): number {
    return this.sent.size;
  }
}

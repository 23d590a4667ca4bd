// GET /v1/events?runId=&types=&sinceMs=: server-sent events of one run — `rollout-stats` (batch rows),
// `learner-step`, `alert` and `evaluation` — as the sink stores them, found by polling ClickHouse
// (query/events.ts says why and how new rows are recognised). Each event carries the same JSON as the REST
// endpoint of its type; its id is its event time, so an EventSource that reconnects (Last-Event-ID) resumes
// a lookback before it.
//
// The stream opens with `retry:` and a `ready` event once the cursors are set (rows that arrive after
// `ready` are sent), then sends events as they appear, a `: heartbeat` comment every heartbeatMs so proxies
// and clients see a live connection, and a `problem` event when ClickHouse fails (polling goes on, slower).
// When the client goes away its timers stop and its slot is freed; the server closes every stream when it
// shuts down. Open streams are limited in all and per client (remote address): past either, a 503. Parameters are checked, and ClickHouse asked once, before the 200: errors are problem JSON.
import express, { type Request, type RequestHandler, type Response, type Router } from 'express';
import { ClickHouseError } from '../infra/clickhouse/http.js';
import { clickHouseProblem } from './dead-letters-route.js';
import { methodNotAllowed, type Logger } from './error-handler.js';
import { problemTypes, problemTypeUri } from '../core/problem.js';
import { StreamSlots } from './event-slots.js';
import { DEFAULT_LOOKBACK_MS, EVENT_PAGE, StreamCursor, eventSql, eventView, parseEventsQuery, type EventRow, type EventType, type EventsQuery } from '../storage/query/events.js';
import type { RawQuery } from '../storage/query/params.js';
import { read, type AnalyticsStore } from '../storage/query/store.js';

export interface EventStreamOptions {
  /** How often each stream asks ClickHouse for new rows (default 1000 ms). */
  readonly pollMs?: number;
  /** How often an idle stream sends a heartbeat comment (default 15 s). */
  readonly heartbeatMs?: number;
  /** Most streams open at once (default 32); one more is a 503. */
  readonly maxStreams?: number;
  /** Most streams one client (remote address) has open at once (default 8); one more is a 503. */
  readonly maxStreamsPerClient?: number;
  /** How far the cursor trails the newest row (default 120 s). */
  readonly lookbackMs?: number;
}

export interface EventsRouteDeps {
  readonly analytics: AnalyticsStore;
  readonly readAuth: RequestHandler;
  readonly now: () => number;
  readonly log: Logger;
  readonly options?: EventStreamOptions;
}

export interface EventsRouter {
  readonly router: Router;
  /** Streams open now. */
  open(): number;
  /** Ends every stream (server shutdown). */
  closeAll(): void;
}

export const DEFAULT_MAX_STREAMS = 32;
export const DEFAULT_MAX_STREAMS_PER_CLIENT = 8;

/** Who a stream counts against: the remote address, an IPv4-mapped IPv6 one as plain IPv4. */
function clientOf(req: Request): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  return address.startsWith('::ffff:') ? address.slice(7) : address;
}

/** Delay before retrying after ClickHouse failed. */
const FAILURE_DELAY_MS = 5000;

class EventStream {
  private readonly cursors = new Map<EventType, StreamCursor>();
  private closed = false;
  private failing = false;
  private pollTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly res: Response,
    private readonly store: AnalyticsStore,
    private readonly query: EventsQuery,
    private readonly config: Required<EventStreamOptions>,
    private readonly now: () => number,
    private readonly log: Logger,
    private readonly onClose: () => void,
  ) {}

  private async rows(type: EventType): Promise<EventRow[]> {
    return read<EventRow>(this.store, eventSql(type, this.query.runId, this.cursors.get(type)!.from, EVENT_PAGE));
  }

  /** Sets the cursors; without sinceMs, marks what is already there as sent. Throws what ClickHouse throws. */
  async prime(): Promise<void> {
    const from = this.query.sinceMs ?? Math.max(0, this.now() - this.config.lookbackMs);
    for (const type of this.query.types) this.cursors.set(type, new StreamCursor(from, this.config.lookbackMs, EVENT_PAGE));
    if (this.query.sinceMs !== undefined) return;
    await Promise.all(
      this.query.types.map(async (type) => {
        const cursor = this.cursors.get(type)!;
        do {
          const rows = await this.rows(type);
          cursor.take(rows.map((row) => ({ key: String(row.key), timeMs: Number(row.event_time_ms) })));
        } while (cursor.behind && !this.closed);
      }),
    );
  }

  start(): void {
    this.res.on('close', () => this.close());
    this.res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
    });
    this.write(`retry: 2000\n\nevent: ready\ndata: ${JSON.stringify({ runId: this.query.runId, types: this.query.types, sinceMs: this.query.sinceMs ?? null })}\n\n`);
    this.heartbeatTimer = setInterval(() => this.write(`: heartbeat ${this.now()}\n\n`), this.config.heartbeatMs);
    this.heartbeatTimer.unref();
    this.schedule(this.query.sinceMs === undefined ? this.config.pollMs : 0);
  }

  private write(text: string): void {
    if (!this.closed && !this.res.writableEnded) this.res.write(text);
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    // A client that does not read: wait until it has taken what was written before reading more.
    if (this.res.writableNeedDrain) {
      this.res.once('drain', () => this.schedule(delayMs));
      return;
    }
    this.pollTimer = setTimeout(() => void this.poll(), delayMs);
    this.pollTimer.unref();
  }

  private async poll(): Promise<void> {
    let behind = false;
    try {
      const results = await Promise.all(this.query.types.map(async (type) => ({ type, rows: await this.rows(type) })));
      if (this.closed) return;
      const fresh: Array<{ type: EventType; row: EventRow; timeMs: number }> = [];
      for (const { type, rows } of results) {
        const cursor = this.cursors.get(type)!;
        const keyed = rows.map((row) => ({ key: String(row.key), timeMs: Number(row.event_time_ms) }));
        for (const i of cursor.take(keyed)) fresh.push({ type, row: rows[i]!, timeMs: keyed[i]!.timeMs });
        behind ||= cursor.behind;
      }
      fresh.sort((a, b) => a.timeMs - b.timeMs);
      for (const { type, row, timeMs } of fresh) this.write(`id: ${timeMs}\nevent: ${type}\ndata: ${JSON.stringify(eventView(type, row))}\n\n`);
      this.failing = false;
    } catch (error) {
      if (this.closed) return;
      if (!this.failing) {
        this.log(`GET /v1/events (run ${this.query.runId}): ClickHouse failed; retrying every ${FAILURE_DELAY_MS} ms`, error);
        const detail = error instanceof ClickHouseError && error.status === null ? 'ClickHouse is not reachable; retrying' : 'ClickHouse could not answer; retrying';
        this.write(
          `event: problem\ndata: ${JSON.stringify({ type: problemTypeUri(problemTypes.clickhouseUnavailable), title: problemTypes.clickhouseUnavailable.title, status: 503, detail })}\n\n`,
        );
      }
      this.failing = true;
      this.schedule(FAILURE_DELAY_MS);
      return;
    }
    this.schedule(behind ? 0 : this.config.pollMs);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.pollTimer);
    clearInterval(this.heartbeatTimer);
    if (!this.res.writableEnded) this.res.end();
    this.onClose();
  }
}

/** The options with their defaults filled in. */
export function eventStreamConfig(options: EventStreamOptions = {}): Required<EventStreamOptions> {
  return {
    pollMs: options.pollMs ?? 1000,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxStreams: options.maxStreams ?? DEFAULT_MAX_STREAMS,
    maxStreamsPerClient: options.maxStreamsPerClient ?? DEFAULT_MAX_STREAMS_PER_CLIENT,
    lookbackMs: options.lookbackMs ?? DEFAULT_LOOKBACK_MS,
  };
}

/** GET /v1/events: checks the query and the limits, holds a slot, primes the cursors, then streams. */
function openStream(deps: EventsRouteDeps, config: Required<EventStreamOptions>, slots: StreamSlots<EventStream>): RequestHandler {
  return async (req, res) => {
    const query = parseEventsQuery(req.query as RawQuery, req.get('last-event-id'), config.lookbackMs);
    // Streams hold a slot for as long as they are open: without a per-client limit one client could take
    // every slot and shut everyone else out. A client is its remote address (behind a proxy: the proxy's).
    const client = clientOf(req);
    const refusal = slots.refusal(client, config);
    if (refusal) throw refusal;
    const stream: EventStream = new EventStream(res, deps.analytics, query, config, deps.now, deps.log, () => slots.release(stream));
    // Hold the slot while priming, so concurrent opens cannot pass the limits.
    slots.take(stream, client);
    try {
      await stream.prime();
    } catch (error) {
      slots.release(stream);
      if (error instanceof ClickHouseError) throw clickHouseProblem(error, deps.log, 'GET /v1/events');
      throw error;
    }
    if (res.destroyed || req.socket.destroyed || !slots.has(stream)) {
      // The client left (or the server closed) while the cursors were being set.
      stream.close();
      return;
    }
    stream.start();
  };
}

export function eventsRouter(deps: EventsRouteDeps): EventsRouter {
  const config = eventStreamConfig(deps.options);
  const slots = new StreamSlots<EventStream>();
  const router = express.Router();
  router.get('/v1/events', deps.readAuth, openStream(deps, config, slots));
  router.all('/v1/events', methodNotAllowed(['GET']));
  return {
    router,
    open: () => slots.size,
    closeAll() {
      for (const stream of slots.keys()) stream.close();
      slots.clear();
    },
  };
}

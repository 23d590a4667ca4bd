// The ClickHouse sink: every event topic → rows (rows.ts) → batched inserts (inserter.ts: RowBinary, or
// JSONEachRow for a column type it does not know), one table at a time. Steps, nearly all the rows, skip the
// row objects: on arrival their Avro bytes are checked and transcoded into RowBinary rows (step-transcoder.ts),
// the same bytes the decoding path writes; an insert copies those rows.
//
// Delivery: at least once, then deduplicated by ClickHouse.
//   * One TopicConsumer over every event topic (sinkTopics in rows.ts), consumer group `<prefix>.sink`. An
//     envelope is acked only when every row it became has been confirmed inserted by ClickHouse (an HTTP 200
//     for the INSERT), so committed offsets never pass an event ClickHouse does not hold (the consumer commits
//     up to the first unacked offset of a partition, so batches that finish out of order never open a gap).
//   * A crash (or a close without drain) re-delivers what was not committed; those rows are inserted again.
//     Every table is a ReplacingMergeTree whose sorting key is the event's identity (tableKeys in rows.ts),
//     and a redelivered event gives byte-identical rows (same Kafka topic/partition/offset too), so the
//     copies collapse on merges. Until a merge has happened, exact counts need `FINAL` (or `GROUP BY` the
//     key): `SELECT count() FROM steps FINAL`. Aggregates that tolerate rare duplicates may skip it.
//   * ClickHouse down (or an insert failing for any reason): the batch is retried with exponential backoff
//     and nothing is acked; the consumer's maxInFlight bound then stops fetching, so the sink holds at most
//     maxInFlight events and loses none; it catches up when ClickHouse answers again.
//
// Batching (batcher.ts): per table, rows are buffered until `batchRows` rows or `flushIntervalMs` after the
// first of them arrived; each table has at most `insertsInFlight` inserts at a time, and consumption goes on
// meanwhile (bounded by maxInFlight), so the next batch is decoded while the previous one is inserted.
import type { Subscription } from 'rxjs';
import { topicName } from '../../core/config.js';
import { ClickHouseError } from '../../infra/clickhouse/http.js';
import { DecodeError, eventNames, type EventName } from '../../schemas/index.js';
import { eventDecoder, TopicConsumer, type Backbone, type Envelope } from '../../streams/index.js';
import { Batcher } from './batcher.js';
import { Inserter, type InsertBody, type SinkRow } from './inserter.js';
import { eventRows, sinkTopics, type TableName } from './rows.js';
import { StepChunks, TranscodedStep } from './step-transcoder.js';
import { TranscodePool, type StepEnvelope } from './transcode-pool.js';

export interface SinkOptions {
  /** Consumer group (default `<topic prefix>.sink`, so sinks of different prefixes never share a group). */
  readonly groupId?: string;
  /** Events to store (default: every event). */
  readonly events?: readonly EventName[];
  /**
   * Rows per insert at most (default 20,000). ClickHouse's own work per row falls with larger inserts: each
   * insert writes a part that background merges rewrite, and fewer, larger parts mean fewer merge levels.
   * Measured on the steps table (2-core VM, 400,000 rows, merges included): ≈ 9–12 µs of ClickHouse CPU per
   * row at 20,000 against ≈ 18–22 µs at 5,000.
   */
  readonly batchRows?: number;
  /**
   * A table's buffered rows are inserted at the latest this long after the first of them arrived (default
   * 1,000: at 500 a sink storing 20–30k rows/s cut its inserts at ≈ 10,000 rows, and ClickHouse then spent
   * twice the CPU per row — measured 14.6 µs against 7.4 µs for the same rows in 20,000-row inserts).
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
   * inserts and acks while the worker walks the steps' Avro bytes into rows. It frees the main thread (its
   * event-loop utilisation fell from 0.95 to 0.86–0.90) but costs ≈ 3–5 µs more CPU per row (the copies to
   * and from the worker); on the 2-core VM, where the sink, ClickHouse and the broker already use both
   * cores, it stored no more rows per second (README Benchmarks). For machines with cores to spare.
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

export interface SinkStats {
  /** Events received (including ones dead-lettered). */
  events: number;
  /** Events fully stored and acked. */
  stored: number;
  /** Payloads that could not be decoded, sent to the dead-letter topic. */
  deadLettered: number;
  inserts: number;
  failedInserts: number;
  rows: { [T in TableName]?: number };
  lastError: string | null;
}

export interface SinkHandle {
  readonly stats: SinkStats;
  readonly consumer: TopicConsumer<Buffer | null>;
  /** Resolves when the sink has stopped (after close), rejects if it failed. */
  readonly done: Promise<void>;
  /**
   * drain (default true): stop fetching, wait (up to drainTimeoutMs) for held events to be stored and acked,
   * commit, leave the group. drain false: commit what is stored and stop at once (the rest comes again).
   */
  close(options?: { drain?: boolean }): Promise<void>;
}

/** An event that became several rows: acked when the last of them is stored. */
interface Pending {
  remaining: number;
  readonly envelope: Envelope<Buffer | null>;
}

/** A row to store (its table is the batcher's lane); `shared` when its event became several rows. */
interface RowItem {
  readonly row: SinkRow;
  readonly envelope: Envelope<Buffer | null>;
  readonly shared: Pending | null;
}

/** A transcoded step (nearly every row) is its own item: one event, one row, acked through its source. */
type Item = RowItem | TranscodedStep<Envelope<Buffer | null>>;

/** The sink's defaults (SinkOptions says why each), shared with the flags of `trajflow sink`. */
export const SINK_DEFAULTS = { batchRows: 20_000, flushIntervalMs: 1000, insertsInFlight: 2, maxInFlightBytes: 256 * 2 ** 20 } as const;

/** Events held by default: a batch being stored, the next one sent, one filling. */
export const defaultMaxInFlight = (batchRows: number): number => 3 * batchRows;

export async function startSink(backbone: Backbone, options: SinkOptions = {}): Promise<SinkHandle> {
  const {
    groupId = `${backbone.config.topicPrefix}.sink`,
    events = eventNames,
    batchRows = SINK_DEFAULTS.batchRows,
    flushIntervalMs = SINK_DEFAULTS.flushIntervalMs,
    insertsInFlight = SINK_DEFAULTS.insertsInFlight,
    maxInFlight = defaultMaxInFlight(batchRows),
    maxInFlightBytes = SINK_DEFAULTS.maxInFlightBytes,
    includeSampleTokens = false,
    transcodeWorker = false,
    retryInitialMs = 100,
    retryMaxMs = 5000,
    insertTimeoutMs = 60_000,
    drainTimeoutMs = 15_000,
    clickhouse = backbone.config.clickhouse,
  } = options;
  if (!(batchRows >= 1)) throw new RangeError(`batchRows must be ≥ 1, got ${batchRows}`);
  if (!(flushIntervalMs > 0)) throw new RangeError(`flushIntervalMs must be > 0, got ${flushIntervalMs}`);
  if (!(insertsInFlight >= 1)) throw new RangeError(`insertsInFlight must be ≥ 1, got ${insertsInFlight}`);

  const eventByTopic = new Map<string, EventName>(events.map((event) => [topicName(backbone.config, sinkTopics[event]), event]));
  const decoders = new Map(events.map((event) => [event, eventDecoder(backbone.codec, event)]));
  const stats: SinkStats = { events: 0, stored: 0, deadLettered: 0, inserts: 0, failedInserts: 0, rows: {}, lastError: null };

  // Raw payloads: decoding happens here, with the decoder of the topic's event, so a payload of the wrong
  // kind is caught too ('wrong-event') and dead-lettered like undecodable bytes.
  const consumer = new TopicConsumer<Buffer | null>(backbone.kafka, {
    topics: [...eventByTopic.keys()],
    groupId,
    decode: (payload) => payload,
    classify: () => undefined,
    deadLetters: backbone.deadLetters,
    maxInFlight,
    maxInFlightBytes,
    drainTimeoutMs,
    ...(options.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: options.sessionTimeoutMs }),
  });

  let stopping = false;
  const stopController = new AbortController();
  const inserter = new Inserter(clickhouse.url, clickhouse.database, insertTimeoutMs, stopController.signal, eventDecoder(backbone.codec, 'step'));
  // Steps of the current schema that pass every check are written into RowBinary from their Avro bytes
  // as they arrive, once the steps table's column types are known (step-transcoder.ts); anything else is
  // decoded here, and an undecodable step dead-lettered.
  const stepChunks = new StepChunks(backbone.codec.registry.current('step').header, backbone.codec.maxEventBytes);
  if (events.includes('step')) void inserter.prepare('steps');

  const ackRows = (items: readonly Item[]) => {
    for (const item of items) {
      if (item instanceof TranscodedStep) {
        item.source.ack();
        stats.stored++;
      } else if (item.shared === null || --item.shared.remaining === 0) {
        item.envelope.ack();
        stats.stored++;
      }
    }
  };

  const insertWithRetry = async (table: TableName, items: Item[]): Promise<void> => {
    const rows = items.map((item) => (item instanceof TranscodedStep ? item : item.row));
    let body: InsertBody | null = null;
    let delay = retryInitialMs;
    for (let attempt = 1; ; attempt++) {
      if (stopping) return; // not acked: it comes again after the restart
      const started = Date.now();
      try {
        // Encoding asks ClickHouse for the column types (once per table): it fails like an insert when
        // ClickHouse is down; anything else thrown there is a bug and stops the sink.
        body ??= await inserter.encode(table, rows);
        await inserter.insert(table, body);
      } catch (error) {
        if (!(error instanceof ClickHouseError)) throw error;
        body = null; // encoded again (with the column types asked again) at the next attempt
        if (stopping) return;
        stats.failedInserts++;
        stats.lastError = (error as Error).message;
        options.onInsertError?.(table, error as Error, attempt);
        await sleep(delay, stopController.signal);
        delay = Math.min(retryMaxMs, delay * 2);
        continue;
      }
      stats.inserts++;
      stats.rows[table] = (stats.rows[table] ?? 0) + items.length;
      options.onInsert?.(table, items.length, Date.now() - started);
      ackRows(items);
      return;
    }
  };

  /** Hands the event's rows to the batcher, or returns the dead-lettering of an event that cannot be decoded. */
  const intake = (envelope: Envelope<Buffer | null>): Promise<void> | undefined => {
    stats.events++;
    const event = eventByTopic.get(envelope.topic);
    if (event === undefined) throw new Error(`sink: message from unexpected topic ${envelope.topic}`);
    if (event === 'step' && envelope.value !== null && inserter.transcodesSteps) {
      if (pool?.submit(envelope as StepEnvelope)) return;
      const row = stepChunks.transcode(envelope.value, envelope);
      if (row) return void batcher.add('steps', row);
    }
    return decodeRows(event, envelope);
  };

  /** The decoding path: the event decoded and mapped to its rows, or dead-lettered. */
  const decodeRows = (event: EventName, envelope: Envelope<Buffer | null>): Promise<void> | undefined => {
    let rows;
    try {
      const value = decoders.get(event)!(envelope.value);
      rows = eventRows(event, value, envelope, { includeSampleTokens });
    } catch (error) {
      if (!(error instanceof DecodeError)) throw error;
      stats.deadLettered++;
      return backbone.deadLetters
        .route({
          reason: error.reason,
          detail: error.message,
          sourceTopic: envelope.topic,
          sourcePartition: envelope.partition,
          sourceOffset: envelope.offset,
          key: envelope.key,
          payload: envelope.value,
        })
        .then(() => envelope.ack());
    }
    const shared: Pending | null = rows.length === 1 ? null : { remaining: rows.length, envelope };
    for (const { table, row } of rows) batcher.add(table, { row, envelope, shared });
    return undefined;
  };

  let resolveDone!: () => void;
  let rejectDone!: (error: unknown) => void;
  const done = new Promise<void>((resolve, reject) => {
    resolveDone = resolve;
    rejectDone = reject;
  });
  done.catch(() => undefined); // a caller that never awaits done still sees failures via close()

  const batcher = new Batcher<TableName, Item>({
    maxRows: batchRows,
    maxDelayMs: flushIntervalMs,
    concurrency: insertsInFlight,
    flush: insertWithRetry,
    onError: (error) => rejectDone(error),
  });

  // Steps declined by the worker take the decoding path here, like any other event.
  const pool = transcodeWorker
    ? new TranscodePool(
        { header: backbone.codec.registry.current('step').header, maxEventBytes: backbone.codec.maxEventBytes },
        {
          row: (row) => batcher.add('steps', row),
          declined: (envelope) => {
            try {
              track(decodeRows('step', envelope));
            } catch (error) {
              fail(error);
            }
          },
          error: (error) => fail(error),
        },
      )
    : null;

  // A plain subscriber, not an operator chain: it runs for every event (an inner subscription per event
  // cost ≈ 2 % of the sink). Dead-letterings in progress are awaited before the sink completes.
  const deadLettering = new Set<Promise<void>>();
  const fail = (error: unknown) => {
    void batcher.end();
    rejectDone(error);
  };
  /** Keeps a dead-lettering in progress until it is done (the sink completes after it). */
  const track = (routed: Promise<void> | undefined) => {
    if (routed === undefined) return;
    const tracked: Promise<void> = routed.then(() => void deadLettering.delete(tracked), fail);
    deadLettering.add(tracked);
  };
  const subscription: Subscription = consumer.events$.subscribe({
    next: (envelope) => {
      let routed: Promise<void> | undefined;
      try {
        routed = intake(envelope);
      } catch (error) {
        // A bug (not bad input): the sink stops, as an operator's error would have stopped the stream.
        subscription.unsubscribe();
        return fail(error);
      }
      track(routed);
    },
    // Steps still on the worker come back (and may be dead-lettered) before the batcher's last cut.
    complete: () =>
      void (pool?.idle() ?? Promise.resolve())
        .then(() => Promise.all(deadLettering))
        .then(() => batcher.end())
        .then(() => resolveDone()),
    error: fail,
  });

  let closing: Promise<void> | null = null;
  const close = (closeOptions: { drain?: boolean } = {}): Promise<void> => {
    closing ??= (async () => {
      await consumer.close({ drain: closeOptions.drain ?? true });
      // The consumer has committed what was stored; anything still buffered or retrying comes again.
      stopping = true;
      stopController.abort();
      subscription.unsubscribe();
      await batcher.end();
      await pool?.close();
      inserter.close();
      resolveDone();
      await done.catch(() => undefined);
    })();
    return closing;
  };

  return { stats, consumer, done, close };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done);
  });
}

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
//
// This file is the shell: the consumer, the inserts, the worker, the timers. What to do comes from pure
// parts beside it: config.ts (options, defaults, which topic holds which event), decode-path.ts (an
// event's rows, or its dead letter), stored-events.ts (which events an insert completed, i.e. may be
// acknowledged), insert-retry.ts (what follows a failed insert), sink-stats.ts (the counters).
import type { Subscription } from 'rxjs';
import type { EventName, EventTypes } from '../../schemas/index.js';
import { eventDecoder, TopicConsumer, type Backbone, type Envelope } from '../../streams/index.js';
import { Batcher } from './batcher.js';
import { decodeEvent } from './decode-path.js';
import { Inserter, type InsertBody } from './inserter.js';
import { afterFailedInsert, firstInsertAttempt } from './insert-retry.js';
import type { RowOptions, TableName } from './rows.js';
import { buildSinkConfig, type SinkOptions, type SinkConfig } from './config.js';
import { countFailedInsert, countInsert, newSinkStats, type SinkStats } from './sink-stats.js';
import { StepChunks } from './step-transcoder.js';
import { eventsStored, pendingEvent, rowsOf, type SinkItem } from './stored-events.js';
import { TranscodePool, type StepEnvelope, type TranscodePoolHandlers } from './transcode-pool.js';

export { defaultMaxInFlight, SINK_DEFAULTS, type SinkOptions } from './config.js';
export type { SinkStats } from './sink-stats.js';

type EventEnvelope = Envelope<Buffer | null>;

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

export async function startSink(backbone: Backbone, options: SinkOptions = {}): Promise<SinkHandle> {
  const sink = new Sink(backbone, buildSinkConfig(backbone.config, options), options);
  return { stats: sink.stats, consumer: sink.consumer, done: sink.done, close: (closeOptions) => sink.close(closeOptions) };
}

/** One running sink: its consumer, inserter, batcher and transcoding worker, and how they hand events on. */
class Sink {
  readonly stats: SinkStats = newSinkStats();
  readonly consumer: TopicConsumer<Buffer | null>;
  readonly done: Promise<void>;
  private resolveDone!: () => void;
  private rejectDone!: (error: unknown) => void;
  private readonly decoders: ReadonlyMap<EventName, (payload: Buffer | null) => EventTypes[EventName]>;
  private readonly rowOptions: RowOptions;
  private stopping = false;
  private readonly stopController = new AbortController();
  private readonly inserter: Inserter;
  private readonly stepChunks: StepChunks;
  private readonly batcher: Batcher<TableName, SinkItem>;
  private readonly pool: TranscodePool | null;
  /** Dead-letterings in progress: the sink completes after them. */
  private readonly deadLettering = new Set<Promise<void>>();
  private readonly subscription: Subscription;
  private closing: Promise<void> | null = null;

  constructor(
    private readonly backbone: Backbone,
    private readonly config: SinkConfig,
    private readonly options: SinkOptions,
  ) {
    const { codec } = backbone;
    this.done = new Promise<void>((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined); // a caller that never awaits done still sees failures via close()
    this.decoders = new Map(config.events.map((event) => [event, eventDecoder(codec, event)]));
    this.rowOptions = { includeSampleTokens: config.includeSampleTokens };
    this.consumer = sinkConsumer(backbone, config);
    const { url, database, credentials } = config.clickhouse;
    this.inserter = new Inserter(url, database, config.insertTimeoutMs, this.stopController.signal, eventDecoder(codec, 'step'), credentials);
    // Steps of the current schema that pass every check are written into RowBinary from their Avro bytes
    // as they arrive, once the steps table's column types are known (step-transcoder.ts); anything else is
    // decoded here, and an undecodable step dead-lettered.
    const step = { header: codec.registry.current('step').header, maxEventBytes: codec.maxEventBytes };
    this.stepChunks = new StepChunks(step.header, step.maxEventBytes);
    if (config.events.includes('step')) void this.inserter.prepare('steps');
    this.batcher = new Batcher<TableName, SinkItem>({
      maxRows: config.batchRows,
      maxDelayMs: config.flushIntervalMs,
      concurrency: config.insertsInFlight,
      flush: (table, items) => this.store(table, items),
      onError: (error) => this.rejectDone(error),
    });
    // Steps declined by the worker take the decoding path here, like any other event.
    const handlers: TranscodePoolHandlers = {
      row: (row) => this.batcher.add('steps', row),
      declined: (envelope) => this.declined(envelope),
      error: (error) => this.fail(error),
    };
    this.pool = config.transcodeWorker ? new TranscodePool(step, handlers) : null;
    this.subscription = this.consume();
  }

  // A plain subscriber, not an operator chain: it runs for every event (an inner subscription per event
  // cost ≈ 2 % of the sink). Dead-letterings in progress are awaited before the sink completes.
  private consume(): Subscription {
    const subscription: Subscription = this.consumer.events$.subscribe({
      next: (envelope) => {
        let routed: Promise<void> | undefined;
        try {
          routed = this.intake(envelope);
        } catch (error) {
          // A bug (not bad input): the sink stops, as an operator's error would have stopped the stream.
          subscription.unsubscribe();
          return this.fail(error);
        }
        this.track(routed);
      },
      complete: () => void this.completed(),
      error: (error) => this.fail(error),
    });
    return subscription;
  }

  /** Hands the event's rows to the batcher, or returns the dead-lettering of an event that cannot be decoded. */
  private intake(envelope: EventEnvelope): Promise<void> | undefined {
    this.stats.events++;
    const event = this.config.eventByTopic.get(envelope.topic);
    if (event === undefined) throw new Error(`sink: message from unexpected topic ${envelope.topic}`);
    if (event === 'step' && envelope.value !== null && this.inserter.transcodesSteps) {
      if (this.pool?.submit(envelope as StepEnvelope)) return;
      const row = this.stepChunks.transcode(envelope.value, envelope);
      if (row) return void this.batcher.add('steps', row);
    }
    return this.decodePath(event, envelope);
  }

  /** The decoding path: the event's rows to the batcher, or its dead letter routed (and then the event acknowledged). */
  private decodePath(event: EventName, envelope: EventEnvelope): Promise<void> | undefined {
    const decoded = decodeEvent(event, this.decoders.get(event)!, envelope, this.rowOptions);
    if (Array.isArray(decoded)) {
      const shared = pendingEvent(decoded.length, envelope);
      for (const { table, row } of decoded) this.batcher.add(table, { row, envelope, shared });
      return undefined;
    }
    this.stats.deadLettered++;
    return this.backbone.deadLetters.route(decoded.deadLetter).then(() => envelope.ack());
  }

  private declined(envelope: StepEnvelope): void {
    try {
      this.track(this.decodePath('step', envelope));
    } catch (error) {
      this.fail(error);
    }
  }

  /** Inserts one batch, retrying while ClickHouse fails; acknowledges the events it completed. */
  private async store(table: TableName, items: SinkItem[]): Promise<void> {
    const rows = rowsOf(items);
    let body: InsertBody | null = null;
    for (let attempt = firstInsertAttempt(this.config.retryInitialMs); ; ) {
      if (this.stopping) return; // not acked: it comes again after the restart
      const started = Date.now();
      try {
        // Encoding asks ClickHouse for the column types (once per table): it fails like an insert when
        // ClickHouse is down; anything else thrown there is a bug and stops the sink.
        body ??= await this.inserter.encode(table, rows);
        await this.inserter.insert(table, body);
      } catch (error) {
        const next = afterFailedInsert(attempt, error, this.stopping, this.config.retryMaxMs);
        if (next.action === 'throw') throw error;
        body = null; // encoded again (with the column types asked again) at the next attempt
        if (next.action === 'give-up') return;
        countFailedInsert(this.stats, error as Error);
        this.options.onInsertError?.(table, error as Error, attempt.attempt);
        await sleep(next.waitMs, this.stopController.signal);
        attempt = next.next;
        continue;
      }
      countInsert(this.stats, table, items.length);
      this.options.onInsert?.(table, items.length, Date.now() - started);
      this.stats.stored += eventsStored(items, acknowledge);
      return;
    }
  }

  private fail(error: unknown): void {
    void this.batcher.end();
    this.rejectDone(error);
  }

  /** Keeps a dead-lettering in progress until it is done (the sink completes after it). */
  private track(routed: Promise<void> | undefined): void {
    if (routed === undefined) return;
    const tracked: Promise<void> = routed.then(
      () => void this.deadLettering.delete(tracked),
      (error) => this.fail(error),
    );
    this.deadLettering.add(tracked);
  }

  /** The consumer completed: steps still on the worker come back (and may be dead-lettered) before the batcher's last cut. */
  private async completed(): Promise<void> {
    await this.pool?.idle();
    await Promise.all(this.deadLettering);
    await this.batcher.end();
    this.resolveDone();
  }

  close(options: { drain?: boolean } = {}): Promise<void> {
    this.closing ??= this.shutdown(options.drain ?? true);
    return this.closing;
  }

  private async shutdown(drain: boolean): Promise<void> {
    await this.consumer.close({ drain });
    // The consumer has committed what was stored; anything still buffered or retrying comes again.
    this.stopping = true;
    this.stopController.abort();
    this.subscription.unsubscribe();
    await this.batcher.end();
    await this.pool?.close();
    this.inserter.close();
    this.resolveDone();
    await this.done.catch(() => undefined);
  }
}

/**
 * One consumer over every stored event's topic, consumer group `config.groupId`. Raw payloads: decoding
 * happens in the sink, with the decoder of the topic's event, so a payload of the wrong kind is caught too
 * ('wrong-event') and dead-lettered like undecodable bytes.
 */
function sinkConsumer(backbone: Backbone, config: SinkConfig): TopicConsumer<Buffer | null> {
  return new TopicConsumer<Buffer | null>(backbone.kafka, {
    topics: [...config.eventByTopic.keys()],
    groupId: config.groupId,
    decode: (payload) => payload,
    classify: () => undefined,
    deadLetters: backbone.deadLetters,
    maxInFlight: config.maxInFlight,
    maxInFlightBytes: config.maxInFlightBytes,
    drainTimeoutMs: config.drainTimeoutMs,
    ...(config.sessionTimeoutMs === undefined ? {} : { sessionTimeoutMs: config.sessionTimeoutMs }),
  });
}

const acknowledge = (envelope: EventEnvelope): void => envelope.ack();

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

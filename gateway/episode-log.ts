// The gateway's episodes rebuilt from the log: a consumer of the steps topic (an ephemeral group that commits
// nothing) reads every gateway step from `lookbackMs` ago on into the book, and keeps following the topic. A
// call waits, before its turn index is handed out, until every partition has been read up to its high
// watermark as it was when the call arrived: the turns an earlier life of the gateway or another instance
// published are then in the book. Watermark requests (one ListOffsets, high-watermarks.ts) are shared by the
// calls waiting at the same time (shared-fetch.ts).
import type { Admin, Kafka } from 'kafkajs';
import type { Subscription } from 'rxjs';
import type { EventCodec, StepEvent } from '../schemas/index.js';
import { positionsOf, TopicConsumer, wireStepDecoder } from '../streams/index.js';
import type { EpisodeBook } from './episodes.js';
import { clusterClientOf, HighWatermarks } from './high-watermarks.js';
import { ReadBarrier, type Offsets } from './read-barrier.js';
import { SharedFetch } from './shared-fetch.js';
import { ENV_VERSION } from './record.js';
import type { CaughtUp, EpisodeSync } from './recorder.js';

export interface EpisodeLogOptions {
  /** The steps topic (topicName(config, 'env.steps')). */
  readonly topic: string;
  /** How far back the log is read at start: steps older than this open no episode. */
  readonly lookbackMs: number;
  /** How long a call waits for the log to be read up to its arrival. */
  readonly catchUpTimeoutMs: number;
  /** How long the start waits for the log to be read up to the start (joining a group included). */
  readonly startTimeoutMs?: number;
  readonly now?: () => number;
}

export interface EpisodeLog extends EpisodeSync {
  /** Gateway steps read into the book so far. */
  readonly stepsRead: number;
  close(): Promise<void>;
}

/** Reads the log into `book` up to now, then follows it; resolves once the book holds every step acknowledged before the start. */
export async function startEpisodeLog(kafka: Kafka, codec: EventCodec, book: EpisodeBook, options: EpisodeLogOptions): Promise<EpisodeLog> {
  const admin = kafka.admin();
  await admin.connect();
  const now = options.now ?? Date.now;
  try {
    const start = await positionsOf(admin, options.topic, { timestamp: now() - options.lookbackMs });
    const log = new LogReader(kafka, codec, admin, book, options, start);
    await log.catchUpWithin(options.startTimeoutMs ?? 120_000).catch(async (error: unknown) => {
      await log.close();
      throw error;
    });
    return log;
  } catch (error) {
    await admin.disconnect().catch(() => undefined);
    throw error;
  }
}

/** A step's bytes as a gateway step, or null (another producer's step, or bytes that do not decode). */
function gatewayStepDecoder(codec: EventCodec): (payload: Buffer | null) => StepEvent | null {
  const decode = wireStepDecoder(codec);
  return (payload) => {
    try {
      const step = decode(payload);
      return step.envVersion === ENV_VERSION ? step : null;
    } catch {
      return null;
    }
  };
}

/** Watermark requests in flight at once: a call arriving during one sends the next at once instead of after it. */
const WATERMARK_REQUESTS_IN_FLIGHT = 4;

class LogReader implements EpisodeLog {
  stepsRead = 0;
  private readonly barrier: ReadBarrier;
  private readonly consumer: TopicConsumer<StepEvent | null>;
  private readonly subscription: Subscription;
  private readonly highWatermarks: HighWatermarks;
  /** High watermarks fetched after the caller arrived: a request in flight started too early, so a caller sends or joins the next. */
  private readonly watermarks: SharedFetch<Offsets>;

  constructor(
    kafka: Kafka,
    codec: EventCodec,
    private readonly admin: Admin,
    book: EpisodeBook,
    private readonly options: EpisodeLogOptions,
    start: Offsets,
  ) {
    this.barrier = new ReadBarrier(start);
    this.highWatermarks = new HighWatermarks(options.topic, admin, clusterClientOf(kafka));
    this.watermarks = new SharedFetch(() => this.highWatermarks.fetch(), WATERMARK_REQUESTS_IN_FLIGHT);
    this.consumer = new TopicConsumer<StepEvent | null>(kafka, {
      topics: [options.topic],
      decode: gatewayStepDecoder(codec),
      classify: () => undefined,
      deadLetters: 'skip',
      autoAck: true,
      maxInFlight: 10_000,
      fromBeginning: true,
      startOffsets: new Map([...start].map(([partition, offset]) => [`${options.topic}/${partition}`, offset])),
    });
    this.subscription = this.consumer.events$.subscribe({
      next: (envelope) => {
        if (envelope.value !== null) {
          book.observe(envelope.value);
          this.stepsRead++;
        }
        this.barrier.read(envelope.partition, BigInt(envelope.offset));
      },
      error: (error: unknown) => this.barrier.fail(error instanceof Error ? error : new Error(String(error))),
      complete: () => this.barrier.fail(new Error('the steps topic is no longer read')),
    });
  }

  catchUp(): Promise<CaughtUp> {
    return this.catchUpWithin(this.options.catchUpTimeoutMs);
  }

  async catchUpWithin(timeoutMs: number): Promise<CaughtUp> {
    const asked = performance.now();
    const targets = await this.watermarks.get();
    const watermarksMs = performance.now() - asked;
    await this.barrier.wait(targets, timeoutMs);
    return { watermarksMs };
  }

  async close(): Promise<void> {
    this.subscription.unsubscribe();
    await this.consumer.close({ drain: false }).catch(() => undefined);
    await this.highWatermarks.close();
    await this.admin.disconnect().catch(() => undefined);
  }
}

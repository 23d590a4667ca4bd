// A typed producer: encodes events with the Avro codec and writes them with kafkajs' idempotent
// producer (acks=all). Sends are batched: events queue up while one request is in flight and go out
// together in the next one. Exactly one request is in flight at a time, which keeps the idempotent
// producer's per-partition sequence numbers in order across retries (kafkajs does not guard this).
import type { Kafka, Producer } from 'kafkajs';
import { rememberingPartitioner } from './partitioner.js';
import type { EventCodec, EventName, EventTypes } from '../schemas/index.js';
import { TrajflowError } from '../core/errors.js';

export interface EventProducerOptions {
  /** Wait this long after the first queued event before sending, so a burst shares one request. */
  readonly lingerMs?: number;
  /** Most messages in one produce request. */
  readonly maxBatchMessages?: number;
  /** Most bytes in one produce request (sum of values). */
  readonly maxBatchBytes?: number;
  /** `send` waits (backpressure) while this many messages are queued. */
  readonly maxQueuedMessages?: number;
  readonly clientId?: string;
}

export interface RawMessage {
  readonly key: string | Buffer | null;
  /** null is a tombstone (deletes the key on a compacted topic). */
  readonly value: Buffer | null;
  readonly headers?: Record<string, string>;
}

interface Queued {
  readonly topic: string;
  readonly message: RawMessage;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

export class ProducerClosedError extends TrajflowError {
  constructor() {
    super('PRODUCER_CLOSED', 'the producer was disconnected; create a new one to send more events');
  }
}

export class EventProducer {
  private readonly producer: Producer;
  private readonly lingerMs: number;
  private readonly maxBatchMessages: number;
  private readonly maxBatchBytes: number;
  private readonly maxQueuedMessages: number;
  private queue: Queued[] = [];
  private flushing: Promise<void> | null = null;
  private spaceWaiters: Array<() => void> = [];
  private closed = false;
  private connected: Promise<void> | null = null;

  constructor(
    kafka: Kafka,
    private readonly codec: EventCodec,
    options: EventProducerOptions = {},
  ) {
    const { lingerMs = 2, maxBatchMessages = 5000, maxBatchBytes = 4 * 1024 * 1024, maxQueuedMessages = 20000 } = options;
    if (lingerMs < 0) throw new RangeError(`lingerMs must be ≥ 0, got ${lingerMs}`);
    if (maxBatchMessages < 1) throw new RangeError(`maxBatchMessages must be ≥ 1, got ${maxBatchMessages}`);
    if (maxQueuedMessages < maxBatchMessages) {
      throw new RangeError(`maxQueuedMessages (${maxQueuedMessages}) must be ≥ maxBatchMessages (${maxBatchMessages}) or batches never fill`);
    }
    this.lingerMs = lingerMs;
    this.maxBatchMessages = maxBatchMessages;
    this.maxBatchBytes = maxBatchBytes;
    this.maxQueuedMessages = maxQueuedMessages;
    this.producer = kafka.producer({
      idempotent: true,
      maxInFlightRequests: 1,
      // Murmur2 like the Java client, so a group id lands on the same partition whoever writes it.
      createPartitioner: rememberingPartitioner,
      retry: { retries: Number.MAX_SAFE_INTEGER, initialRetryTime: 200, maxRetryTime: 3000 },
    });
  }

  connect(): Promise<void> {
    this.connected ??= this.producer.connect();
    return this.connected;
  }

  /**
   * Encodes and queues one event. Throws at once (synchronously, before anything is queued) when the
   * value does not fit the schema; the promise resolves when the broker has acknowledged the write
   * (acks=all), and rejects if it could not be written.
   */
  send<N extends EventName>(topic: string, event: N, value: EventTypes[N], key: string | Buffer | null): Promise<void> {
    const bytes = this.codec.encode(event, value);
    return this.sendRaw(topic, { key, value: bytes });
  }

  /** Queues already-encoded bytes (used by the dead-letter route and the benchmark's baseline). */
  async sendRaw(topic: string, message: RawMessage): Promise<void> {
    if (this.closed) throw new ProducerClosedError();
    while (this.queue.length >= this.maxQueuedMessages) {
      await new Promise<void>((resolve) => this.spaceWaiters.push(resolve));
      if (this.closed) throw new ProducerClosedError();
    }
    const written = new Promise<void>((resolve, reject) => {
      this.queue.push({ topic, message, resolve, reject });
    });
    this.scheduleFlush();
    return written;
  }

  /** Resolves when everything queued so far has been acknowledged (or failed). */
  async flush(): Promise<void> {
    while (this.flushing || this.queue.length > 0) {
      if (!this.flushing) this.scheduleFlush(0);
      await this.flushing;
    }
  }

  /** Flushes what is queued, then disconnects (the Closeable of shutdownOnSignals). */
  close(): Promise<void> {
    return this.disconnect();
  }

  async disconnect(): Promise<void> {
    if (this.closed) return;
    await this.flush();
    this.closed = true;
    this.wakeSpaceWaiters();
    if (this.connected) await this.producer.disconnect();
  }

  private scheduleFlush(linger = this.lingerMs): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      try {
        await this.connect();
      } catch (error) {
        // Not connected: fail what is queued now rather than retrying in a loop; later sends try again.
        this.connected = null;
        for (const item of this.queue.splice(0)) item.reject(error);
        this.wakeSpaceWaiters();
        return;
      }
      if (linger > 0 && this.queue.length < this.maxBatchMessages) {
        await new Promise((resolve) => setTimeout(resolve, linger));
      }
      while (this.queue.length > 0) await this.sendOneBatch();
    })().finally(() => {
      this.flushing = null;
      if (this.queue.length > 0 && !this.closed) this.scheduleFlush();
    });
    // Failures are delivered to each send's promise; the loop itself must never reject unhandled.
    this.flushing.catch(() => undefined);
  }

  private async sendOneBatch(): Promise<void> {
    const batch = this.takeBatch();
    this.wakeSpaceWaiters();
    const byTopic = new Map<string, Queued[]>();
    for (const item of batch) {
      const list = byTopic.get(item.topic);
      if (list) list.push(item);
      else byTopic.set(item.topic, [item]);
    }
    try {
      await this.producer.sendBatch({
        acks: -1,
        topicMessages: [...byTopic].map(([topic, items]) => ({ topic, messages: items.map((q) => q.message) })),
      });
      for (const item of batch) item.resolve();
    } catch (error) {
      for (const item of batch) item.reject(error);
    }
  }

  private takeBatch(): Queued[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < this.maxBatchMessages) {
      bytes += this.queue[n]!.message.value?.length ?? 0;
      if (n > 0 && bytes > this.maxBatchBytes) break;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private wakeSpaceWaiters(): void {
    const waiters = this.spaceWaiters;
    this.spaceWaiters = [];
    for (const wake of waiters) wake();
  }
}

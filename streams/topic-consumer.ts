// Kafka topics as RxJS Observables, with backpressure and at-least-once commits after downstream
// processing.
//
// Each delivered message is an Envelope whose `ack()` says "downstream is done with this one". Offsets
// are committed (every `commitIntervalMs`, and on close) only up to the first un-acknowledged message
// of each partition (OffsetTracker), so a crash re-delivers everything not yet fully processed.
// Backpressure: at most `maxInFlight` un-acknowledged messages; beyond that the fetch loop waits
// (sending heartbeats) instead of buffering. Bytes that cannot be decoded go to the dead-letter sink
// and are then committed like processed messages.
import { Observable, type Subscriber } from 'rxjs';
import type { Batch, Consumer, EachBatchPayload, Kafka, KafkaMessage } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { OffsetTracker, type CommitPosition, type PartitionKey } from './offset-tracker.js';
import { InFlightGate } from './in-flight-gate.js';
import { consumerConfig } from './consumer-config.js';
import { positionIn, reachesEnd, ReadRanges, SliceClock } from './read-ranges.js';
import type { DeadLetterInput, DeadLetterSink, HeldDeadLetterSink } from './dead-letter.js';

export interface Envelope<T> {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as a decimal string (offsets are 64-bit). */
  readonly offset: string;
  readonly key: Buffer | null;
  /** Broker (log append or create) time in ms. */
  readonly timestamp: number;
  readonly value: T;
  /** The consumer-group generation it was delivered in; a rebalance starts a new one and re-delivers what was not committed. */
  readonly generation: number;
  /** Marks this message processed; its offset becomes committable once all earlier ones are too. */
  ack(): void;
}

/** Why a payload was rejected; returned by `classify` for errors that are the input's fault. */
export interface Rejection {
  readonly reason: string;
  readonly detail: string;
}

export interface TopicConsumerOptions<T> {
  readonly topics: readonly string[];
  /** Consumer group; without one an ephemeral group is used and nothing is committed (replay). */
  readonly groupId?: string;
  /** Turns a payload into a value; throws on bad input. */
  readonly decode: (payload: Buffer | null) => T;
  /** Maps a decode error to a rejection; errors it returns undefined for are bugs and stop the stream. */
  readonly classify: (error: unknown) => Rejection | undefined;
  /**
   * Where rejected payloads go. A DeadLetterSink is awaited, then the message counts as processed; a
   * HeldDeadLetterSink gets the message's acknowledgement to call when it writes the letter (in a transaction
   * with the offsets, commits: 'external'). 'skip' only counts them (replay: they were routed when first consumed).
   */
  readonly deadLetters: DeadLetterSink | HeldDeadLetterSink | 'skip';
  readonly maxInFlight?: number;
  /** Payload bytes of delivered, unacknowledged messages at most (default: no bound besides maxInFlight). */
  readonly maxInFlightBytes?: number;
  /**
   * A fetched batch is handed downstream synchronously; after this many ms of it the consumer lets the event
   * loop run (timers, replies to requests in flight such as a transaction's) before going on (default 5).
   */
  readonly yieldAfterMs?: number;
  /** Acknowledge each message as soon as it is emitted (no backpressure past RxJS; replay's default). */
  readonly autoAck?: boolean;
  readonly commitIntervalMs?: number;
  /**
   * 'auto' (default): the consumer commits acknowledged positions itself. 'external': it never commits;
   * the owner takes positions with takeCommittable() and commits them, e.g. inside a Kafka transaction
   * together with the outputs they produced (exactly-once processors).
   */
  readonly commits?: 'auto' | 'external';
  /** Awaited after each (re)join, before any message of the new assignment is delivered (e.g. to reload state); gets the partitions assigned, by topic. */
  readonly onAssignment?: (assignment: Readonly<Record<string, readonly number[]>>) => Promise<void>;
  /** With no committed offset, start at the beginning (default) or the end of the topic. */
  readonly fromBeginning?: boolean;
  /** First offset to deliver per topic and partition ("topic/partition" → offset); earlier ones are skipped. */
  readonly startOffsets?: ReadonlyMap<string, bigint>;
  /** Stop (complete) once every listed partition reached its end offset (exclusive). */
  readonly endOffsets?: ReadonlyMap<string, bigint>;
  /** How long close() waits for in-flight messages to be acknowledged before committing and leaving. */
  readonly drainTimeoutMs?: number;
  readonly sessionTimeoutMs?: number;
}

export interface ConsumerStats {
  delivered: number;
  acked: number;
  deadLettered: number;
  skipped: number;
  commits: number;
  rebalances: number;
  /** Partitions assigned to this member at the last (re)join. */
  assignedPartitions: number;
  /** Fresh kafkajs consumers started after kafkajs gave up (see canReconnect). */
  reconnects: number;
}

/** How long after the first of a streak of kafkajs failures a group consumer keeps reconnecting (the clients' ~100 s retry budget, and some). */
const RECONNECT_BUDGET_MS = 120_000;
/** kafkajs errors that mean "the broker (or the group coordinator) is away", not "this cannot work". */
const OUTAGE_ERRORS = new Set(['KafkaJSGroupCoordinatorNotFound', 'KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound']);
const OUTAGE_MESSAGE = /group coordinator|connection|ECONNREFUSED|not the leader|leader not available|NOT_COORDINATOR/i;

/**
 * True for a failure kafkajs gave up on that a broker outage explains (no coordinator, refused or closed
 * connections, timeouts, leadership moving): every error in the cause chain is kafkajs' own, and one of
 * them names an outage. Errors thrown by our code (a decode bug) are not.
 */
export function isKafkaOutage(error: unknown): boolean {
  let cause: unknown = error;
  let outage = false;
  while (cause instanceof Error) {
    if (!cause.name.startsWith('KafkaJS')) return false;
    outage ||= OUTAGE_ERRORS.has(cause.name) || OUTAGE_MESSAGE.test(cause.message);
    cause = (cause as { cause?: unknown }).cause;
  }
  return outage;
}

export class TopicConsumer<T> {
  readonly stats: ConsumerStats = { delivered: 0, acked: 0, deadLettered: 0, skipped: 0, commits: 0, rebalances: 0, assignedPartitions: 0, reconnects: 0 };
  readonly events$: Observable<Envelope<T>>;
  private readonly tracker = new OffsetTracker();
  private readonly gate: InFlightGate;
  /** Payload bytes of the messages in flight in the current generation (held dead letters included). */
  private bytesInFlight = 0;
  private consumer: Consumer | null = null;
  private closing = false;
  private closed: Promise<void> | null = null;
  private subscriber: Subscriber<Envelope<T>> | null = null;
  private commitTimer: NodeJS.Timeout | null = null;
  private committing: Promise<void> = Promise.resolve();
  private readonly ranges: ReadRanges;
  private assignmentReady: Promise<void> = Promise.resolve();
  /** Resolves when close() begins: a batch waiting on the assignment's setup stops waiting (kafkajs' stop waits for it). */
  private readonly closingStarted: Promise<void>;
  private markClosing: () => void = () => undefined;
  private starting: Promise<void> = Promise.resolve();
  private reconnectStreakStart: number | null = null;
  private lastReconnectAt = 0;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: TopicConsumerOptions<T>,
  ) {
    const { maxInFlight = 5000, commitIntervalMs = 1000 } = options;
    this.closingStarted = new Promise((resolve) => (this.markClosing = resolve));
    this.ranges = new ReadRanges(options.startOffsets, options.endOffsets);
    if (options.topics.length === 0) throw new RangeError('TopicConsumer needs at least one topic');
    if (!(commitIntervalMs > 0)) throw new RangeError(`commitIntervalMs must be > 0, got ${commitIntervalMs}`);
    this.gate = new InFlightGate(
      maxInFlight,
      () => this.tracker.inFlight,
      options.maxInFlightBytes ?? Infinity,
      () => this.bytesInFlight,
    );
    this.events$ = new Observable<Envelope<T>>((subscriber) => {
      if (this.subscriber) {
        subscriber.error(new Error('a TopicConsumer has one subscriber; share() the Observable to fan out'));
        return;
      }
      this.subscriber = subscriber;
      this.starting = this.start(subscriber);
      this.starting.catch((error) => subscriber.error(error));
      // Unsubscribing stops the consumer, committing what was acknowledged.
      return () => void this.close({ drain: false });
    });
  }

  /**
   * Graceful shutdown: stop fetching, wait (up to drainTimeoutMs) for in-flight messages to be
   * acknowledged, commit, leave the group, complete the Observable.
   */
  close(options: { drain?: boolean } = {}): Promise<void> {
    this.closed ??= this.shutdown(options.drain ?? true);
    return this.closed;
  }

  private async start(subscriber: Subscriber<Envelope<T>>): Promise<void> {
    const { groupId, topics, fromBeginning = true, sessionTimeoutMs = 30000, commitIntervalMs = 1000 } = this.options;
    // A range with nothing in it (a fresh state topic's marks) is read without a consumer: joining a group
    // needs the group coordinator, which a freshly started cluster may still be loading — and a first join
    // that kafkajs restarts delivers no batch for an empty partition, so nothing would ever complete it.
    if (this.ranges.empty) {
      void this.close();
      return;
    }
    const consumer = this.kafka.consumer(consumerConfig(groupId ?? `trajflow-replay-${randomUUID()}`, sessionTimeoutMs));
    this.consumer = consumer;
    this.listen(consumer, subscriber);
    await consumer.connect();
    if (this.closing) return;
    await consumer.subscribe({ topics: [...topics], fromBeginning });
    if (this.commitsItself && !this.commitTimer) {
      this.commitTimer = setInterval(() => void this.commit(), commitIntervalMs);
    }
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.onBatch(payload, subscriber),
    });
    // A reconnected consumer resumes from the committed offsets, not from the first start's positions.
    if (this.stats.reconnects > 0) return;
    this.seekStartOffsets(consumer);
    this.completeIfFinished();
  }

  /** The consumer's events: a (re)join, a batch of control records at a range's end, a crash. */
  private listen(consumer: Consumer, subscriber: Subscriber<Envelope<T>>): void {
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.joined(payload.memberAssignment));
    if (this.options.endOffsets) {
      // Batches of only control records (transaction markers) never reach eachBatch; kafkajs still reports
      // them here, so a replay whose range ends in a marker completes.
      consumer.on(consumer.events.END_BATCH_PROCESS, ({ payload }) => {
        const key = `${payload.topic}/${payload.partition}`;
        if (reachesEnd(this.ranges.of(key), BigInt(payload.lastOffset))) {
          this.ranges.finish(key);
          this.completeIfFinished();
        }
      });
    }
    consumer.on(consumer.events.CRASH, (event) => {
      if (event.payload.restart || this.closing || consumer !== this.consumer) return;
      if (this.canReconnect(event.payload.error)) this.reconnect(subscriber, consumer);
      else subscriber.error(event.payload.error);
    });
  }

  /** A (re)join: kafkajs starts the new assignment from committed offsets, so in-flight messages come again. */
  private joined(assignment: Record<string, number[]>): void {
    this.stats.assignedPartitions = Object.values(assignment).reduce((n, partitions) => n + partitions.length, 0);
    this.tracker.newGeneration();
    this.bytesInFlight = 0;
    this.stats.rebalances++;
    this.gate.changed();
    if (this.options.onAssignment) this.assignmentReady = this.options.onAssignment(assignment);
  }

  /** Moves each partition to its start offset (the first start only). */
  private seekStartOffsets(consumer: Consumer): void {
    for (const [key, offset] of this.options.startOffsets ?? []) {
      const [topic, partition] = splitKey(key);
      try {
        consumer.seek({ topic, partition, offset: offset.toString() });
      } catch (error) {
        // kafkajs stopped the consumer already: its first join failed (a broker restart, a coordinator still
        // loading) and it restarts by itself, or its CRASH event reports the cause, or close() came first.
        // Nothing to seek: a restarted consumer starts at the beginning and onBatch skips what precedes the
        // start offsets.
        if (error instanceof Error && /consumer#run must be called first/.test(error.message)) return;
        throw error;
      }
    }
  }

  /** The consumer commits acknowledged positions itself (a group of its own, commits not left to the owner). */
  private get commitsItself(): boolean {
    return this.options.groupId !== undefined && this.options.commits !== 'external';
  }

  private async onBatch(payload: EachBatchPayload, subscriber: Subscriber<Envelope<T>>): Promise<void> {
    const { batch, resolveOffset, heartbeat, isRunning, isStale } = payload;
    const stopped = () => this.closing || !isRunning() || isStale();
    await Promise.race([this.assignmentReady, this.closingStarted]);
    // kafkajs resumes fetching after the last resolved offset; resolving once, after the loop, for the last
    // message handled, is the same (and parses one offset instead of one per message).
    const pass: BatchPass = { resolved: null, slices: new SliceClock(this.options.yieldAfterMs ?? 5), heartbeat, stopped };
    try {
      if (!stopped()) await this.readBatch(batch, subscriber, pass);
    } finally {
      // Also when the loop throws: kafkajs retries a failed batch from after the last resolved offset.
      if (pass.resolved !== null) resolveOffset(pass.resolved);
    }
    await heartbeat();
    this.completeIfFinished();
  }

  /**
   * Hands a batch's messages downstream, synchronously but for the yields, the gate and a routed dead letter.
   * kafkajs' isRunning/isStale (isStale builds a key string per call) change only while this loop awaits:
   * stopped() is asked before the first message and after every await. Per message only `closing`, which a
   * subscriber may set synchronously (an unsubscribe from inside next()).
   */
  private async readBatch(batch: Batch, subscriber: Subscriber<Envelope<T>>, pass: BatchPass): Promise<void> {
    const source: PartitionKey = { topic: batch.topic, partition: batch.partition };
    const key = `${batch.topic}/${batch.partition}`;
    const range = this.ranges.of(key);
    for (const message of batch.messages) {
      if (this.closing) break;
      if (pass.slices.due()) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        pass.slices.restart();
        if (pass.stopped()) break;
      }
      const offset = BigInt(message.offset);
      const position = positionIn(range, offset);
      if (position === 'past-end') {
        this.ranges.finish(key);
        break;
      }
      if (position === 'before-start') {
        pass.resolved = message.offset;
        continue;
      }
      // Fast path without awaits: most messages find the gate open and decode cleanly.
      if (!this.gate.open) {
        await this.gate.whenOpen({ tick: pass.heartbeat, cancelled: pass.stopped });
        if (pass.stopped()) break;
      }
      const generation = this.tracker.generation;
      let value: T;
      try {
        value = this.options.decode(message.value);
      } catch (error) {
        const routed = this.deadLetter(this.rejection(error, message, source), message, source, offset, generation);
        if (routed) await routed;
        pass.resolved = message.offset;
        if (reachesEnd(range, offset)) this.ranges.finish(key);
        // The route above awaited: the one place besides the yield and the gate where stopped() may change.
        if (pass.stopped()) break;
        continue;
      }
      this.deliver(subscriber, source, message, offset, value, generation);
      pass.resolved = message.offset;
      if (reachesEnd(range, offset)) this.ranges.finish(key);
    }
  }

  private deliver(subscriber: Subscriber<Envelope<T>>, source: PartitionKey, message: KafkaMessage, offset: bigint, value: T, generation: number): void {
    this.tracker.delivered(source, offset);
    this.stats.delivered++;
    const envelope = this.envelope(source, message, offset, value, generation);
    subscriber.next(envelope);
    if (this.options.autoAck) envelope.ack();
  }

  /** Sends a rejected message's letter to the dead-letter sink; a promise when the sink routes it (awaited before going on). */
  private deadLetter(letter: DeadLetterInput, message: KafkaMessage, source: PartitionKey, offset: bigint, generation: number): Promise<void> | undefined {
    const sink = this.options.deadLetters;
    this.tracker.delivered(source, offset);
    if (sink === 'skip') {
      this.stats.skipped++;
      this.tracker.acked(source, offset, generation);
      return undefined;
    }
    if ('hold' in sink) {
      // Acknowledged by its owner, when the letter is written with the offsets.
      this.stats.deadLettered++;
      const bytes = message.value?.length ?? 0;
      this.bytesInFlight += bytes;
      sink.hold(letter, { topic: source.topic, partition: source.partition, offset: message.offset, generation, ack: () => this.ackHeld(source, offset, generation, bytes) });
      return undefined;
    }
    return this.route(sink, letter, source, offset, generation);
  }

  /** A letter written by the sink: its message counts as processed. */
  private async route(sink: DeadLetterSink, letter: DeadLetterInput, source: PartitionKey, offset: bigint, generation: number): Promise<void> {
    await sink.route(letter);
    this.stats.deadLettered++;
    this.tracker.acked(source, offset, generation);
  }

  /** The dead letter of a payload that failed to decode, or rethrows a bug (an error classify does not know). */
  private rejection(error: unknown, message: KafkaMessage, source: PartitionKey): DeadLetterInput {
    const rejection = this.options.classify(error);
    if (!rejection) throw error;
    return { ...rejection, sourceTopic: source.topic, sourcePartition: source.partition, sourceOffset: message.offset, key: message.key, payload: message.value };
  }

  /** A held dead letter was written: its message's offset may be committed (once per message and generation). */
  private ackHeld(source: PartitionKey, offset: bigint, generation: number, bytes: number): void {
    if (this.tracker.acked(source, offset, generation)) {
      this.bytesInFlight -= bytes;
      this.gate.changed();
    }
  }

  private envelope(source: PartitionKey, message: KafkaMessage, offset: bigint, value: T, generation: number): Envelope<T> {
    const bytes = message.value?.length ?? 0;
    this.bytesInFlight += bytes;
    return new Delivery(this, source, message, offset, value, generation, bytes);
  }

  /** A delivered message was acknowledged (by its Delivery or a receipt; the tracker counts a repeat once): its offset may be committed. */
  acked(source: PartitionKey, offset: bigint, generation: number, bytes: number): void {
    if (this.tracker.acked(source, offset, generation)) {
      this.stats.acked++;
      this.bytesInFlight -= bytes;
      this.gate.changed();
    }
  }

  /** Payload bytes delivered and not yet acknowledged in the current generation. */
  get inFlightBytes(): number {
    return this.bytesInFlight;
  }

  /** The current consumer-group generation (bumped by every rebalance). */
  get generation(): number {
    return this.tracker.generation;
  }

  /** The kafkajs consumer group generation's acknowledged positions not yet taken (commits: 'external'). */
  takeCommittable(): CommitPosition[] {
    return this.tracker.takeCommittable();
  }

  /** Gives positions back after the owner failed to commit them. */
  commitFailed(positions: readonly CommitPosition[]): void {
    this.tracker.commitFailed(positions);
  }

  /** Commits serially: each commit waits for the previous one. */
  private commit(): Promise<void> {
    this.committing = this.committing.then(async () => {
      const consumer = this.consumer;
      if (!consumer || !this.commitsItself) return;
      const positions = this.tracker.takeCommittable();
      if (positions.length === 0) return;
      try {
        await consumer.commitOffsets(positions.map((p) => ({ topic: p.topic, partition: p.partition, offset: p.offset.toString() })));
        this.stats.commits++;
      } catch {
        // A rebalance or a broker restart; the positions are retried at the next commit.
        this.tracker.commitFailed(positions);
      }
    });
    return this.committing;
  }

  /**
   * kafkajs gives up on some failures for good (restart: false): notably "Failed to find group coordinator"
   * when every broker refused the connection at that moment of a broker restart, which ended the learner's
   * stream though the broker was back seconds later. A consumer group member can start over from its
   * committed offsets — a rejoin, like a rebalance: what was not acknowledged is delivered again — so
   * kafkajs' own errors are met with a fresh consumer, for up to RECONNECT_BUDGET_MS after the first failure
   * of a streak. Errors thrown by our code (a decode bug) and consumers without a group (replay) still end the stream.
   */
  private canReconnect(error: Error): boolean {
    if (this.options.groupId === undefined) return false;
    // Anything else kafkajs gives up on (a missing topic, an authorisation failure) is reported at once.
    if (!isKafkaOutage(error)) return false;
    const now = Date.now();
    if (this.reconnectStreakStart === null || now - this.lastReconnectAt > RECONNECT_BUDGET_MS) this.reconnectStreakStart = now;
    return now - this.reconnectStreakStart <= RECONNECT_BUDGET_MS;
  }

  private reconnect(subscriber: Subscriber<Envelope<T>>, crashed: Consumer): void {
    this.stats.reconnects++;
    this.lastReconnectAt = Date.now();
    const delay = Math.min(5000, 500 * 2 ** Math.min(4, this.stats.reconnects - 1));
    console.error(`trajflow consumer ${this.options.groupId}: kafkajs gave up (the broker away?); reconnecting in ${delay} ms from the committed offsets`);
    void crashed.disconnect().catch(() => undefined);
    setTimeout(() => {
      if (this.closing) return;
      this.starting = this.start(subscriber);
      this.starting.catch((error) => subscriber.error(error));
    }, delay);
  }

  private completeIfFinished(): void {
    if (this.closing || !this.ranges.allRead) return;
    void this.close();
  }

  private async shutdown(drain: boolean): Promise<void> {
    this.closing = true;
    this.markClosing();
    this.gate.changed();
    const deadline = Date.now() + (this.options.drainTimeoutMs ?? 10000);
    while (drain && this.tracker.inFlight > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    if (this.commitTimer) clearInterval(this.commitTimer);
    // Leaving before the first join completes makes kafkajs rejoin forever: finish starting, and give the
    // join a bounded moment, before stopping.
    await this.starting.catch(() => undefined);
    const joinDeadline = Date.now() + 15000;
    while (this.consumer && this.stats.rebalances === 0 && Date.now() < joinDeadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const consumer = this.consumer;
    if (consumer) {
      await this.commit();
      await consumer.stop().catch(() => undefined);
      await consumer.disconnect().catch(() => undefined);
    }
    this.subscriber?.complete();
  }
}

/** One pass over a fetched batch: the last offset handled (resolved once, at the end), and when to stop or yield. */
interface BatchPass {
  resolved: string | null;
  readonly slices: SliceClock;
  readonly heartbeat: () => Promise<void>;
  readonly stopped: () => boolean;
}

/** What acknowledging a message needs, without its value. */
export type Receipt = Pick<Envelope<unknown>, 'topic' | 'partition' | 'offset' | 'ack'>;

/**
 * A receipt for `envelope`: acknowledges it like envelope.ack(), but does not hold its decoded value, so
 * whoever must ack later (the processors' emitter, after a transaction) does not keep the value alive.
 */
export function receiptOf(envelope: Receipt): Receipt {
  if (envelope instanceof Delivery) return envelope.receipt();
  if (!('value' in envelope)) return envelope;
  return { topic: envelope.topic, partition: envelope.partition, offset: envelope.offset, ack: () => envelope.ack() };
}

/**
 * One delivered message. A class rather than an object literal with an `ack` closure: the sink and the
 * processors take one per event, and a closure per message (wrapped in tsx's `__name` helper) was ≈ 4 % of
 * the sink's busy time in a profile.
 */
class Delivery<T> implements Envelope<T> {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly key: Buffer | null;
  readonly timestamp: number;
  private done = false;

  constructor(
    private readonly owner: { acked(source: PartitionKey, offset: bigint, generation: number, bytes: number): void },
    private readonly source: PartitionKey,
    message: KafkaMessage,
    private readonly offsetValue: bigint,
    readonly value: T,
    readonly generation: number,
    private readonly bytes: number,
  ) {
    this.topic = source.topic;
    this.partition = source.partition;
    this.offset = message.offset;
    this.key = message.key;
    this.timestamp = Number(message.timestamp);
  }

  ack(): void {
    if (this.done) return;
    this.done = true;
    this.owner.acked(this.source, this.offsetValue, this.generation, this.bytes);
  }

  /** A receipt holding what ack() needs. Acking through both is harmless: the tracker counts an offset once per generation. */
  receipt(): Receipt {
    return new DeliveryReceipt(this.owner, this.source, this.offset, this.offsetValue, this.generation, this.bytes);
  }
}

/**
 * A Delivery without its value. One object rather than a literal with an `ack` closure (three objects): the
 * processors keep one per step until its transaction commits, so each survives a scavenge or two.
 */
class DeliveryReceipt implements Receipt {
  readonly topic: string;
  readonly partition: number;

  constructor(
    private readonly owner: { acked(source: PartitionKey, offset: bigint, generation: number, bytes: number): void },
    private readonly source: PartitionKey,
    readonly offset: string,
    private readonly offsetValue: bigint,
    private readonly generation: number,
    private readonly bytes: number,
  ) {
    this.topic = source.topic;
    this.partition = source.partition;
  }

  ack(): void {
    this.owner.acked(this.source, this.offsetValue, this.generation, this.bytes);
  }
}

function splitKey(key: string): [string, number] {
  const slash = key.lastIndexOf('/');
  return [key.slice(0, slash), Number(key.slice(slash + 1))];
}

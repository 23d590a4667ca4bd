// The main thread's handle on the transaction worker (transaction-worker.ts): each call posts one request
// and resolves with its reply. The consumer generation the worker checks before a commit is shared memory
// the main thread stores into when a rebalance starts a generation, so the check reads the generation of
// that moment without a round trip to a main thread that may be busy.
import { Worker } from 'node:worker_threads';
import type { KafkaConfig } from '../../core/config.js';
import {
  packMessages,
  transferables,
  type TopicMessages,
  type TransactionOffsets,
  type TransactionPhases,
  type TransactionWorkerData,
  type WorkerReply,
  type WorkerRequest,
  type WriteOutcome,
} from './transaction-protocol.js';

/** How a write ended, with its phases (the hand-over included) when it committed. */
export interface Written {
  readonly outcome: WriteOutcome;
  readonly phases: TransactionPhases | null;
}

export interface TransactionClientOptions {
  readonly kafka: KafkaConfig;
  readonly clientId: string;
  readonly transactionalIdPrefix: string;
  readonly generation: number;
  /** Fault tests: hold every commit until commitHold.release() (TransactionWorkerData.holdCommits). */
  readonly holdCommits?: boolean;
  /** A request the worker has not answered after this long fails the client (default REQUEST_DEADLINE_MS). */
  readonly requestDeadlineMs?: number;
}

/**
 * A write or fence the worker has not answered in 2 minutes never will usefully: the coordinator aborts a
 * transaction 30 s after it began (transactionTimeout), and the worker's producers give up on a broker after
 * ≈ 100 s of retries. Past it the client fails, so the processors restart from the committed offsets
 * (supervise.ts) instead of waiting on a request kafkajs lost — a pipeline that waited there wrote nothing
 * for minutes, silently (docs/concepts/exactly-once.md, "Nothing waits forever").
 */
export const REQUEST_DEADLINE_MS = 120_000;

/** How long close() lets the worker disconnect its producers before it is terminated. */
const CLOSE_WAIT_MS = 10_000;

/** The oldest request the worker has not answered yet. */
export interface PendingRequest {
  readonly kind: WorkerRequest['kind'];
  /** The input partition of a write. */
  readonly partition: number | null;
  readonly ageMs: number;
}

/** Commits held for a fault test: `held` once a transaction waits at its commit; release() lets them all go. */
export interface CommitHold {
  readonly held: boolean;
  release(): void;
}

export class TransactionClient {
  private readonly worker: Worker;
  private readonly generationCell = new Int32Array(new SharedArrayBuffer(4));
  private readonly waiting = new Map<
    number,
    { resolve: (reply: WorkerReply) => void; reject: (error: Error) => void; kind: WorkerRequest['kind']; partition: number | null; since: number }
  >();
  private readonly deadlineMs: number;
  private readonly deadlineCheck: NodeJS.Timeout;
  private nextId = 0;
  private failure: Error | null = null;
  private closing = false;
  /** Set when the commits are held (TransactionClientOptions.holdCommits); `held` is set by the worker's message. */
  private readonly hold: { held: boolean; release(): void } | null;
  /** Partitions the worker holds a producer for: as of the last fence, less those fenced out since. */
  partitions: readonly number[] = [];

  constructor(options: TransactionClientOptions) {
    this.generation = options.generation;
    this.deadlineMs = options.requestDeadlineMs ?? REQUEST_DEADLINE_MS;
    if (!(this.deadlineMs > 0)) throw new RangeError(`requestDeadlineMs must be > 0, got ${this.deadlineMs}`);
    const data: TransactionWorkerData = {
      kafka: options.kafka,
      clientId: options.clientId,
      transactionalIdPrefix: options.transactionalIdPrefix,
      generation: this.generationCell.buffer as SharedArrayBuffer,
      holdCommits: options.holdCommits === true,
    };
    this.hold = options.holdCommits ? { held: false, release: () => void this.request({ kind: 'release-commits', id: this.nextId++ }).catch(() => undefined) } : null;
    this.worker = new Worker(new URL('./transaction-worker-entry.mjs', import.meta.url), { workerData: data });
    this.worker.on('message', (reply: WorkerReply) => this.receive(reply));
    this.worker.on('error', (error) => this.fail(error));
    this.worker.on('exit', (code) => {
      if (!this.closing) this.fail(new Error(`processors: the transaction worker exited with code ${code}`));
    });
    this.deadlineCheck = setInterval(() => this.checkDeadline(), Math.min(1000, this.deadlineMs / 4));
    this.deadlineCheck.unref();
  }

  /** The oldest request still waiting for the worker's answer, or null. */
  oldestRequest(now = performance.now()): PendingRequest | null {
    // Requests are numbered in the order they were posted: the first one waiting is the oldest.
    for (const waiter of this.waiting.values()) return { kind: waiter.kind, partition: waiter.partition, ageMs: now - waiter.since };
    return null;
  }

  private checkDeadline(): void {
    const oldest = this.oldestRequest();
    if (!oldest || oldest.ageMs < this.deadlineMs) return;
    const what = oldest.partition === null ? `a ${oldest.kind}` : `a ${oldest.kind} on partition ${oldest.partition}`;
    this.fail(new Error(`processors: the transaction worker has not finished ${what} in ${Math.round(oldest.ageMs / 1000)} s (a request lost with a broker connection?)`));
  }

  get commitHold(): CommitHold | null {
    return this.hold;
  }

  /** The consumer generation the worker compares each transaction's with before committing it. */
  set generation(generation: number) {
    Atomics.store(this.generationCell, 0, generation);
  }

  /** Takes over the producers of `partitions` (initialising each fences its earlier owners) and drops the rest. */
  async fence(partitions: readonly number[]): Promise<void> {
    await this.request({ kind: 'fence', id: this.nextId++, partitions: [...partitions] });
  }

  /** Runs one transaction on `partition`'s producer: the messages, the offsets, then commit (or abort if `generation` is stale). */
  async write(partition: number, generation: number, topicMessages: readonly TopicMessages[], offsets: TransactionOffsets | null): Promise<Written> {
    const messages = packMessages(topicMessages);
    const posted = performance.now();
    const reply = (await this.request({ kind: 'write', id: this.nextId++, partition, generation, messages, offsets }, transferables(messages))) as Extract<
      WorkerReply,
      { kind: 'written' }
    >;
    const handOffMs = performance.now() - posted - reply.workerMs;
    return { outcome: reply.outcome, phases: reply.phases && { ...reply.phases, handOffMs } };
  }

  /** Disconnects the producers and stops the worker. */
  async close(): Promise<void> {
    // Bounded: a producer's disconnect stuck on a lost connection must not hold the processors' restart.
    if (!this.failure) await withinMs(this.request({ kind: 'close', id: this.nextId++ }), CLOSE_WAIT_MS).catch(() => undefined);
    this.closing = true;
    clearInterval(this.deadlineCheck);
    await this.worker.terminate();
    // A request the terminated worker never answered ends here, not never.
    this.fail(new Error('processors: the transaction client was closed'));
  }

  private request(request: WorkerRequest, transfer: ArrayBuffer[] = []): Promise<WorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      const partition = request.kind === 'write' ? request.partition : null;
      this.waiting.set(request.id, { resolve, reject, kind: request.kind, partition, since: performance.now() });
      this.worker.postMessage(request, transfer);
    });
  }

  private receive(reply: WorkerReply): void {
    if (reply.kind === 'commit-held') {
      if (this.hold) this.hold.held = true;
      return;
    }
    const waiter = this.waiting.get(reply.id);
    if (!waiter) {
      this.fail(new Error(`processors: the transaction worker answered an unknown request ${reply.id}`));
      return;
    }
    this.waiting.delete(reply.id);
    if (reply.kind === 'failed') {
      const error = new Error(reply.message);
      if (reply.stack) error.stack = reply.stack;
      waiter.reject(error);
      return;
    }
    if (reply.kind === 'fenced-in') this.partitions = reply.partitions;
    else if (reply.kind === 'written' && reply.outcome === 'fenced') this.partitions = this.partitions.filter((p) => p !== reply.partition);
    waiter.resolve(reply);
  }

  /** The worker died (or lost a request): every request waiting, and every later one, fails (the processors restart). */
  private fail(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    const waiting = [...this.waiting.values()];
    this.waiting.clear();
    for (const waiter of waiting) waiter.reject(error);
  }
}

/** `promise`, or a rejection after `ms`. */
function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

// The processors' transactional producers, on a worker thread. Building kafkajs' produce requests (record
// batches, CRC-32C, copies) and writing them to the socket were ≈ 30 % of the processors' main thread, the
// thread that bounds their throughput while the machine's second core sat partly idle; here they run beside
// it. The main thread (transaction-client.ts, for transactional-emitter.ts) decides what goes into which
// transaction and when; this thread only runs each one: begin, send, offsets, the generation check, commit.
//
// One producer per input partition, transactional id `<prefix>.<partition>` (see transactional-emitter.ts
// for why fencing per partition is what keeps exactly-once across members).
import { parentPort, workerData } from 'node:worker_threads';
import type { Producer, Transaction } from 'kafkajs';
import { createKafka } from '../../streams/kafka-client.js';
import { retryRetriable } from '../../streams/retry.js';
import { rememberingPartitioner } from '../../streams/partitioner.js';
import { fencePlan } from './fence-plan.js';
import { splitIntoRequests } from './produce-requests.js';
import {
  unpackMessages,
  type TransactionOffsets,
  type TransactionWorkerData,
  type WorkerPhases,
  type WorkerReply,
  type WorkerRequest,
  type WriteOutcome,
} from './transaction-protocol.js';

const data = workerData as TransactionWorkerData;
/** AddOffsetsToTxn retries: pauses of 20, 40, 80 … ms, capped at 1 s, ≈ 10 s in all (outlasting a commit's markers by far). */
const OFFSETS_ATTEMPTS = 16;
const offsetsPauseMs = (attempt: number) => Math.min(1000, 20 * 2 ** (attempt - 1));
const kafka = createKafka({ kafka: data.kafka }, { clientId: data.clientId });
const sharedGeneration = new Int32Array(data.generation);
const producers = new Map<number, Producer>();
let closed = false;
// TransactionWorkerData.holdCommits: commits wait on this until the main thread releases them.
let releaseCommits: () => void = () => undefined;
const commitsReleased = data.holdCommits ? new Promise<void>((resolve) => (releaseCommits = resolve)) : null;
let told = false;

/** The broker refused a stale producer epoch: another member initialised this partition's producer. */
function isFenced(error: unknown): boolean {
  const e = error as { type?: string; message?: string; cause?: unknown } | null;
  if (!e) return false;
  if (e.type === 'INVALID_PRODUCER_EPOCH' || e.type === 'PRODUCER_FENCED') return true;
  if (/fenced|producer epoch/i.test(e.message ?? '')) return true;
  return e.cause !== undefined && e.cause !== e && isFenced(e.cause);
}

/** Writes running on each producer: one that fence() replaced is disconnected once they have ended. */
const writing = new Map<Producer, number>();
const retired = new Set<Producer>();

function retire(producer: Producer): void {
  if ((writing.get(producer) ?? 0) > 0) retired.add(producer);
  else void producer.disconnect().catch(() => undefined);
}

async function initialised(partition: number): Promise<Producer> {
  // Short first retries: a transaction begun right after the previous commit meets CONCURRENT_TRANSACTIONS
  // until the coordinator has written the markers (a few ms); the client-wide 200 ms first backoff made that
  // the processors' latency tail. 30 retries from 20 ms, capped at 5 s, still outlast a ~100 s broker restart.
  const producer = kafka.producer({
    transactionalId: `${data.transactionalIdPrefix}.${partition}`,
    idempotent: true,
    maxInFlightRequests: 1,
    transactionTimeout: 30000,
    createPartitioner: rememberingPartitioner,
    retry: { initialRetryTime: 20, maxRetryTime: 5000, retries: 30 },
  });
  try {
    await producer.connect();
    // kafkajs sends InitProducerId with the first transaction: an empty one does it now.
    const transaction = await producer.transaction();
    await transaction.abort();
  } catch (error) {
    await producer.disconnect().catch(() => undefined);
    throw error;
  }
  return producer;
}

async function fence(partitions: readonly number[]): Promise<void> {
  if (closed) return;
  // Held partitions are initialised again too (fence-plan.ts says why); the old producer stays usable until
  // the new one is ready, and is disconnected once a write still running on it has ended.
  const plan = fencePlan(producers.keys(), partitions);
  for (const partition of plan.release) {
    const producer = producers.get(partition)!;
    producers.delete(partition);
    retire(producer);
  }
  await Promise.all(
    plan.initialise.map(async (partition) => {
      const producer = await initialised(partition);
      // Closed meanwhile: nobody will use (or disconnect) it.
      if (closed) return void (await producer.disconnect().catch(() => undefined));
      const before = producers.get(partition);
      producers.set(partition, producer);
      if (before) retire(before);
    }),
  );
}

type WriteRequest = Extract<WorkerRequest, { kind: 'write' }>;

async function write(request: WriteRequest, receivedAt: number): Promise<WorkerReply> {
  const reply = (outcome: WriteOutcome, phases: WorkerPhases | null = null): WorkerReply => ({
    kind: 'written',
    id: request.id,
    partition: request.partition,
    outcome,
    phases,
    workerMs: performance.now() - receivedAt,
  });
  const producer = producers.get(request.partition);
  if (!producer) return reply('unowned');
  writing.set(producer, (writing.get(producer) ?? 0) + 1);
  try {
    return await writeOn(producer, request, reply);
  } finally {
    const left = writing.get(producer)! - 1;
    if (left > 0) writing.set(producer, left);
    else {
      writing.delete(producer);
      if (retired.delete(producer)) await producer.disconnect().catch(() => undefined);
    }
  }
}

async function writeOn(producer: Producer, request: WriteRequest, reply: (outcome: WriteOutcome, phases?: WorkerPhases | null) => WorkerReply): Promise<WorkerReply> {
  let transaction: Transaction | undefined;
  const beside: OffsetsBeside = { sent: null };
  try {
    const started = performance.now();
    transaction = await producer.transaction();
    const begun = performance.now();
    await sendMessages(transaction, request, beside);
    const sent = performance.now();
    if (beside.sent) await beside.sent;
    else if (request.offsets) await sendOffsets(transaction, request.offsets);
    const offsetsSent = performance.now();
    if (Atomics.load(sharedGeneration, 0) !== request.generation) {
      // A rebalance came while the transaction was being written: its steps may already be read again by
      // the new generation. Abort; they are processed again from the committed offsets.
      await transaction.abort();
      return reply('stale');
    }
    await commitsHeld();
    await transaction.commit();
    return reply('committed', { beginMs: begun - started, sendMs: sent - begun, offsetsMs: offsetsSent - sent, commitMs: performance.now() - offsetsSent });
  } catch (error) {
    // Offsets still on their way are settled before the abort: a TxnOffsetCommit that reached the group
    // coordinator after the abort's markers would wait there for this producer's next commit.
    await beside.sent?.catch(() => undefined);
    await transaction?.abort().catch(() => undefined);
    return failedWrite(error, producer, request, reply);
  }
}

/** The offsets sent beside the last Produce, once it added the output partitions to the transaction. */
interface OffsetsBeside {
  sent: Promise<void> | null;
}

// The offsets go beside the Produce, once the output partitions are in the transaction (the kafkajs patch
// [partitions-added]; docs/design/kafka-client.md says why that is safe). The broker still answers one
// connection's requests in order; what this saves is this thread's turn between them, mostly in the tail.
// Several produce requests when a topic's messages are above what a broker takes in one batch
// (produce-requests.ts); the offsets start with the last, once every partition is in the transaction.
async function sendMessages(transaction: Transaction, request: WriteRequest, beside: OffsetsBeside): Promise<void> {
  const topicMessages = unpackMessages(request.messages);
  const { offsets } = request;
  const requests = splitIntoRequests(topicMessages);
  for (let i = 0; i < requests.length; i++) {
    const onPartitionsAdded = offsets && i === requests.length - 1 ? () => void (beside.sent = sendOffsets(transaction, offsets)).catch(() => undefined) : undefined;
    await transaction.sendBatch({ topicMessages: requests[i]!, onPartitionsAdded } as Parameters<Transaction['sendBatch']>[0]);
  }
}

// kafkajs sends AddOffsetsToTxn once, without its retrier: a transaction of offsets only, begun right after
// the previous commit, usually meets CONCURRENT_TRANSACTIONS while the coordinator still writes that commit's
// markers (docs/design/kafka-client.md), and the pipeline failed over a wait of a few milliseconds.
// The Java client retries it; so do we, with the producers' short first pauses.
function sendOffsets(transaction: Transaction, offsets: TransactionOffsets): Promise<void> {
  return retryRetriable(
    () => transaction.sendOffsets({ consumerGroupId: offsets.consumerGroupId, topics: offsets.topics.map((t) => ({ topic: t.topic, partitions: [...t.partitions] })) }),
    OFFSETS_ATTEMPTS,
    offsetsPauseMs,
  );
}

/** TransactionWorkerData.holdCommits: waits until the main thread releases the commits (telling it once). */
async function commitsHeld(): Promise<void> {
  if (!commitsReleased) return;
  if (!told) parentPort!.postMessage({ kind: 'commit-held', id: -1 } satisfies WorkerReply);
  told = true;
  await commitsReleased;
}

/** The reply to a write that failed and was aborted: fenced or stale, or the error again when it is neither. */
function failedWrite(error: unknown, producer: Producer, request: WriteRequest, reply: (outcome: WriteOutcome) => WorkerReply): WorkerReply {
  if (!isFenced(error)) throw error;
  // This member's own fence replaced the producer meanwhile (an old generation's write): aborted like any stale one.
  if (producers.has(request.partition) && producers.get(request.partition) !== producer) return reply('stale');
  // Another member owns the partition now and fenced this producer: what it held is its to redo.
  producers.delete(request.partition);
  retired.add(producer);
  return reply('fenced');
}

async function close(): Promise<void> {
  closed = true;
  const all = [...producers.values()];
  producers.clear();
  await Promise.all(all.map((p) => p.disconnect().catch(() => undefined)));
}

async function handle(request: WorkerRequest, receivedAt: number): Promise<WorkerReply> {
  switch (request.kind) {
    case 'fence':
      await fence(request.partitions);
      return { kind: 'fenced-in', id: request.id, partitions: [...producers.keys()].sort((a, b) => a - b) };
    case 'write':
      return write(request, receivedAt);
    case 'release-commits':
      releaseCommits();
      return { kind: 'released', id: request.id };
    case 'close':
      await close();
      return { kind: 'closed', id: request.id };
  }
}

parentPort!.on('message', (request: WorkerRequest) => {
  handle(request, performance.now()).then(
    (reply) => parentPort!.postMessage(reply),
    (error: unknown) => {
      const e = error instanceof Error ? error : new Error(String(error));
      parentPort!.postMessage({ kind: 'failed', id: request.id, message: e.message, stack: e.stack } satisfies WorkerReply);
    },
  );
});

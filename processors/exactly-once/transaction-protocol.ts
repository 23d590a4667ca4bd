// What the processors' main thread and their transaction worker (transaction-worker.ts) say to each other.
// A transaction's messages cross as one packed buffer, transferred rather than cloned: a batch of a
// thousand messages would otherwise be a thousand structured-clone copies on the busy main thread.
import type { KafkaConfig } from '../../core/config.js';

/** How long one committed transaction's steps took, ms (see TransactionalEmitter.phaseLog). */
export interface TransactionPhases {
  /** producer.transaction(): a new transaction (the producer id was initialised at fence time). */
  readonly beginMs: number;
  /**
   * sendBatch: AddPartitionsToTxn (retried while the previous transaction's markers are written) and Produce;
   * the offsets are sent beside the Produce (transaction-worker.ts), so their time is partly in here too.
   */
  readonly sendMs: number;
  /** sendOffsets (AddOffsetsToTxn, TxnOffsetCommit): what is left of it once the Produce returned (0 without positions). */
  readonly offsetsMs: number;
  /** commit: EndTxn. */
  readonly commitMs: number;
  /**
   * The hand-over: the main thread's round trip to the transaction worker less the worker's time on it —
   * the request and the reply each waiting for their thread (one busy, or no core free).
   */
  readonly handOffMs: number;
}

/** The phases the worker times (the hand-over is timed by the main thread). */
export type WorkerPhases = Omit<TransactionPhases, 'handOffMs'>;

/** The messages of one topic in a transaction, as kafkajs takes them. */
export interface TopicMessages {
  readonly topic: string;
  readonly messages: readonly { readonly key: string | Buffer | null; readonly value: Buffer | null }[];
}

/** Topic messages packed: `values[ends[i − 1] .. ends[i])` is message i's value, or null where ends[i] is −1. */
export interface PackedMessages {
  readonly topics: readonly string[];
  /** Messages per topic, in the order of `topics`. */
  readonly counts: Int32Array;
  /** Each message's key; strings and null cross as they are, byte keys as Uint8Array. */
  readonly keys: readonly (string | Uint8Array | null)[];
  readonly ends: Int32Array;
  readonly values: Uint8Array;
}

/** Offsets to commit in the transaction, as kafkajs' sendOffsets takes them. */
export interface TransactionOffsets {
  readonly consumerGroupId: string;
  readonly topics: readonly { readonly topic: string; readonly partitions: readonly { readonly partition: number; readonly offset: string }[] }[];
}

export type WorkerRequest =
  | { readonly kind: 'fence'; readonly id: number; readonly partitions: readonly number[] }
  | {
      readonly kind: 'write';
      readonly id: number;
      readonly partition: number;
      /** The consumer generation the batch was formed in; the worker aborts if the shared one differs at commit. */
      readonly generation: number;
      readonly messages: PackedMessages;
      readonly offsets: TransactionOffsets | null;
    }
  | { readonly kind: 'release-commits'; readonly id: number }
  | { readonly kind: 'close'; readonly id: number };

/**
 * How a write ended: committed; aborted because a rebalance came meanwhile (`stale`); not attempted because
 * this member holds no producer for the partition (`unowned`); refused because another member took the
 * partition and fenced this producer (`fenced`).
 */
export type WriteOutcome = 'committed' | 'stale' | 'unowned' | 'fenced';

export type WorkerReply =
  | { readonly kind: 'fenced-in'; readonly id: number; readonly partitions: readonly number[] }
  | {
      readonly kind: 'written';
      readonly id: number;
      readonly partition: number;
      readonly outcome: WriteOutcome;
      readonly phases: WorkerPhases | null;
      /** From the request's arrival in the worker to this reply, ms. */
      readonly workerMs: number;
    }
  | { readonly kind: 'closed'; readonly id: number }
  | { readonly kind: 'released'; readonly id: number }
  /** Unasked (id −1): a transaction reached its commit and waits there (TransactionWorkerData.holdCommits). */
  | { readonly kind: 'commit-held'; readonly id: -1 }
  | { readonly kind: 'failed'; readonly id: number; readonly message: string; readonly stack?: string };

export interface TransactionWorkerData {
  /** The Kafka client's config, as createKafka takes it. */
  readonly kafka: KafkaConfig;
  readonly clientId: string;
  /** Prefix of the per-partition transactional ids (`<prefix>.<partition>`). */
  readonly transactionalIdPrefix: string;
  /** Int32 at 0: the consumer's current generation, stored by the main thread when a rebalance starts one. */
  readonly generation: SharedArrayBuffer;
  /**
   * Fault tests: every transaction waits just before its commit (after the generation check, as a slow
   * EndTxn would) until the main thread releases them; from then on commits go through.
   */
  readonly holdCommits?: boolean;
}

/** Packs topic messages into one buffer (its own ArrayBuffer, so it can be transferred). */
export function packMessages(topicMessages: readonly TopicMessages[]): PackedMessages {
  let count = 0;
  let bytes = 0;
  for (const { messages } of topicMessages) {
    count += messages.length;
    for (const message of messages) bytes += message.value?.length ?? 0;
  }
  const counts = new Int32Array(topicMessages.length);
  const keys: (string | Uint8Array | null)[] = new Array(count);
  const ends = new Int32Array(count);
  const values = new Uint8Array(bytes);
  let i = 0;
  let at = 0;
  topicMessages.forEach(({ messages }, t) => {
    counts[t] = messages.length;
    for (const { key, value } of messages) {
      // A byte key gets its own small buffer: cloning a view of node's shared pool would copy the whole pool.
      keys[i] = key === null || typeof key === 'string' ? key : new Uint8Array(key);
      if (value === null) ends[i] = -1;
      else {
        values.set(value, at);
        at += value.length;
        ends[i] = at;
      }
      i++;
    }
  });
  return { topics: topicMessages.map((t) => t.topic), counts, keys, ends, values };
}

/** The buffers to transfer with a packed batch. */
export function transferables(packed: PackedMessages): ArrayBuffer[] {
  return [packed.values.buffer as ArrayBuffer, packed.counts.buffer as ArrayBuffer, packed.ends.buffer as ArrayBuffer];
}

/** The packed messages as kafkajs' topicMessages again; values are views of the one buffer, not copies. */
/** A message as kafkajs takes it (unpacked in the worker). */
type OutgoingMessage = { key: string | Buffer | null; value: Buffer | null };

export function unpackMessages(packed: PackedMessages): { topic: string; messages: OutgoingMessage[] }[] {
  const values = Buffer.from(packed.values.buffer, packed.values.byteOffset, packed.values.byteLength);
  const out: { topic: string; messages: OutgoingMessage[] }[] = [];
  let i = 0;
  let start = 0;
  packed.topics.forEach((topic, t) => {
    const count = packed.counts[t]!;
    const messages = new Array<OutgoingMessage>(count);
    for (let m = 0; m < count; m++, i++) {
      const key = packed.keys[i]!;
      const end = packed.ends[i]!;
      let value: Buffer | null = null;
      if (end >= 0) {
        value = values.subarray(start, end);
        start = end;
      }
      messages[m] = { key: key instanceof Uint8Array && !Buffer.isBuffer(key) ? Buffer.from(key.buffer, key.byteOffset, key.byteLength) : key, value };
    }
    out.push({ topic, messages });
  });
  return out;
}

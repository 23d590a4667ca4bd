// The weights topic's Kafka I/O around weights-chunks.ts: the learner writes a version's chunks and manifest
// (and retires an old version with tombstones); a reader follows the topic from its beginning, keeps the
// versions of one run, and hands out a version once it is complete and verified.
import type { Kafka } from 'kafkajs';
import type { EventProducer } from '../../streams/event-producer.js';
import { retryRetriable } from '../../streams/retry.js';
import { TopicConsumer } from '../../streams/topic-consumer.js';
import { CheckpointError, readWeightsBlob } from './checkpoint.js';
import {
  chunkCount,
  DEFAULT_CHUNK_BYTES,
  retireRecords,
  versionToRetire,
  WeightsAssembly,
  weightsRecords,
  weightsTopicUri,
  type WeightsManifest,
  type WeightsRecord,
} from './weights-chunks.js';

/**
 * Writes the weights of the checkpoint in `directory` to `topic`, then retires the version `keep` versions
 * back; returns the version's weightsUri. Records go one at a time, so no produce request holds more than
 * one chunk (a cluster's default message.max.bytes limits a whole batch).
 */
export async function publishCheckpointWeights(producer: EventProducer, topic: string, directory: string, options: { keep: number; chunkBytes?: number }): Promise<string> {
  const { keep, chunkBytes = DEFAULT_CHUNK_BYTES } = options;
  const { manifest, bytes } = await readWeightsBlob(directory);
  const { runId, version } = manifest;
  await sendInOrder(producer, topic, weightsRecords(runId, version, bytes, manifest, chunkBytes));
  const old = versionToRetire(version, keep);
  // A run's model never changes shape, so an old version had as many chunks as this one.
  if (old !== null) await sendInOrder(producer, topic, retireRecords(runId, old, chunkCount(bytes.length, chunkBytes)));
  return weightsTopicUri(topic, runId, version);
}

async function sendInOrder(producer: EventProducer, topic: string, records: readonly WeightsRecord[]): Promise<void> {
  for (const { key, value } of records) await producer.sendRaw(topic, { key, value });
}

export interface WeightsReader {
  readonly topic: string;
  /** The version's manifest and bytes, verified (and against `sha256` when given); rejects when it is broken, or absent after the timeout. */
  load(version: number, sha256?: string): Promise<{ manifest: WeightsManifest; bytes: Buffer }>;
  close(): Promise<void>;
}

export interface WeightsReaderOptions {
  /** Longest wait for a version to appear on the topic. Default 60 s. */
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
}

/** Follows `topic` from its beginning for the versions of `runId` (an ephemeral group that commits nothing). */
export function openWeightsReader(kafka: Kafka, topic: string, runId: string, options: WeightsReaderOptions = {}): WeightsReader {
  const { timeoutMs = 60_000, log = (line: string) => console.error(line) } = options;
  const assembly = new WeightsAssembly(runId);
  const handled = new Map<number, bigint>();
  const waiters = new Set<() => void>();
  let closing = false;
  let consumer: TopicConsumer<Buffer | null> | undefined;
  let retry: NodeJS.Timeout | undefined;
  const start = (): void => {
    const current = new TopicConsumer<Buffer | null>(kafka, {
      topics: [topic],
      decode: (payload) => payload,
      classify: () => undefined,
      deadLetters: 'skip',
      autoAck: true,
      fromBeginning: true,
    });
    consumer = current;
    current.events$.subscribe({
      next: (envelope) => {
        if (envelope.key !== null) assembly.apply(envelope.key.toString('utf8'), envelope.value);
        handled.set(envelope.partition, BigInt(envelope.offset));
        for (const wake of waiters) wake();
      },
      // Read again from the beginning: applying the records again gives the same versions.
      error: (error: unknown) => {
        if (closing) return;
        log(`weights: the reader of ${topic} failed (${error instanceof Error ? error.message : String(error)}); reading it again in 2 s`);
        void current.close({ drain: false }).catch(() => undefined);
        retry = setTimeout(() => closing || start(), 2000);
      },
    });
  };
  start();
  const nextChange = (ms: number) =>
    new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      waiters.add(wake);
    });
  /** True once every record on the topic when called has been read. */
  const readToEnd = async (): Promise<() => boolean> => {
    const admin = kafka.admin();
    await admin.connect();
    try {
      const ends = (await retryRetriable(() => admin.fetchTopicOffsets(topic))).map((p) => [p.partition, BigInt(p.high) - 1n] as const);
      return () => ends.every(([partition, last]) => last < 0n || (handled.get(partition) ?? -1n) >= last);
    } finally {
      await admin.disconnect();
    }
  };
  return {
    topic,
    async load(version, sha256) {
      const deadline = Date.now() + timeoutMs;
      let caughtUp: (() => boolean) | undefined;
      for (;;) {
        const state = assembly.state(version, sha256);
        if (state.kind === 'complete') return state;
        if (state.kind === 'broken') {
          // Broken where the reader is now may be mended further on (a version written again after a crash): judge at the end of the log.
          caughtUp ??= await readToEnd();
          if (caughtUp()) throw new CheckpointError(`${topic}: ${state.reason}`);
        }
        if (Date.now() > deadline) {
          throw new CheckpointError(
            `${topic}: ${state.kind === 'broken' ? state.reason : `no weights of run ${runId} v${version}`} after ${timeoutMs / 1000} s. ` +
              'Does the learner write weights to this topic (TRAJFLOW_WEIGHTS=topic), and is the version within the newest it keeps?',
          );
        }
        await nextChange(Math.min(500, Math.max(0, deadline - Date.now()) + 1));
      }
    },
    async close() {
      // A TopicConsumer closed before it joined its group races its start (see envs/actors/policy-versions.ts): wait for the join, boundedly.
      const joinBy = Date.now() + 20_000;
      while (consumer !== undefined && consumer.stats.rebalances === 0 && Date.now() < joinBy) await new Promise((resolve) => setTimeout(resolve, 50));
      closing = true;
      clearTimeout(retry);
      await consumer?.close({ drain: false });
    },
  };
}

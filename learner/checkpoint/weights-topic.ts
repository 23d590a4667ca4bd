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
import { nextLoadStep, readPast } from './weights-load.js';

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
  return new TopicWeightsReader(kafka, topic, runId, options);
}

/** The Kafka I/O around WeightsAssembly (the reassembly) and nextLoadStep (what load() does next). */
class TopicWeightsReader implements WeightsReader {
  private readonly assembly: WeightsAssembly;
  private readonly timeoutMs: number;
  private readonly log: (line: string) => void;
  /** The highest offset read per partition. */
  private readonly handled = new Map<number, bigint>();
  /** load() calls waiting for the next record. */
  private readonly waiters = new Set<() => void>();
  private closing = false;
  private consumer: TopicConsumer<Buffer | null> | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly kafka: Kafka,
    readonly topic: string,
    private readonly runId: string,
    options: WeightsReaderOptions,
  ) {
    const { timeoutMs = 60_000, log = (line: string) => console.error(line) } = options;
    this.timeoutMs = timeoutMs;
    this.log = log;
    this.assembly = new WeightsAssembly(runId);
    this.start();
  }

  private start(): void {
    const current = new TopicConsumer<Buffer | null>(this.kafka, {
      topics: [this.topic],
      decode: (payload) => payload,
      classify: () => undefined,
      deadLetters: 'skip',
      autoAck: true,
      fromBeginning: true,
    });
    this.consumer = current;
    current.events$.subscribe({
      next: (envelope) => {
        if (envelope.key !== null) this.assembly.apply(envelope.key.toString('utf8'), envelope.value);
        this.handled.set(envelope.partition, BigInt(envelope.offset));
        for (const wake of this.waiters) wake();
      },
      // Read again from the beginning: applying the records again gives the same versions.
      error: (error: unknown) => {
        if (this.closing) return;
        this.log(`weights: the reader of ${this.topic} failed (${error instanceof Error ? error.message : String(error)}); reading it again in 2 s`);
        void current.close({ drain: false }).catch(() => undefined);
        this.retry = setTimeout(() => this.closing || this.start(), 2000);
      },
    });
  }

  /** Resolves at the next record read, or after `ms`. */
  private nextChange(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.waiters.add(wake);
    });
  }

  /** True once every record on the topic when called has been read. */
  private async readToEnd(): Promise<() => boolean> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const ends = (await retryRetriable(() => admin.fetchTopicOffsets(this.topic))).map((p) => [p.partition, BigInt(p.high) - 1n] as const);
      return () => readPast(ends, this.handled);
    } finally {
      await admin.disconnect();
    }
  }

  async load(version: number, sha256?: string): Promise<{ manifest: WeightsManifest; bytes: Buffer }> {
    const request = { topic: this.topic, runId: this.runId, version, timeoutMs: this.timeoutMs, deadline: Date.now() + this.timeoutMs };
    let caughtUp: (() => boolean) | undefined;
    for (;;) {
      const state = this.assembly.state(version, sha256);
      // Broken where the reader is now may be mended further on (a version written again after a crash): judge at the end of the log.
      if (state.kind === 'broken') caughtUp ??= await this.readToEnd();
      const step = nextLoadStep(state, state.kind === 'broken' && caughtUp !== undefined && caughtUp(), Date.now(), request);
      if (step.kind === 'done') return { manifest: step.manifest, bytes: step.bytes };
      if (step.kind === 'fail') throw new CheckpointError(step.message);
      await this.nextChange(step.ms);
    }
  }

  async close(): Promise<void> {
    // A TopicConsumer closed before it joined its group races its start (see rollout/follow-policy-versions.ts): wait for the join, boundedly.
    const joinBy = Date.now() + 20_000;
    while (this.consumer !== undefined && this.consumer.stats.rebalances === 0 && Date.now() < joinBy) await new Promise((resolve) => setTimeout(resolve, 50));
    this.closing = true;
    clearTimeout(this.retry);
    await this.consumer?.close({ drain: false });
  }
}

// Writes the processors' outputs exactly once: samples, trajectories, episode marks and the consumed
// offsets go to Kafka in one transaction, so they become visible together or not at all. Readers use
// read_committed (kafkajs' default), so output from a crashed, uncommitted transaction is never seen.
//
// Outputs are queued as units (what one batch or one dropped group produced, with the step envelopes
// it consumed) and written every flushIntervalMs — one transaction per flush, not per group, because a
// transaction costs several round trips. Units of an older consumer-group generation are discarded:
// after a rebalance their steps are delivered again, to whoever owns the partition now.
import type { Kafka, Producer, Transaction } from 'kafkajs';
import { Subject } from 'rxjs';
import type { EventCodec, RolloutStatsEvent, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import type { Envelope, TopicConsumer } from '../../streams/topic-consumer.js';
import type { CommitPosition } from '../../streams/offset-tracker.js';
import { TrajflowError } from '../../core/errors.js';
import type { EpisodeMark, EpisodeMarks } from './episode-marks.js';

export interface OutputUnit {
  readonly generation: number;
  readonly samples: readonly TrainingSampleEvent[];
  readonly trajectories: readonly TrajectoryEvent[];
  readonly rolloutStats?: readonly RolloutStatsEvent[];
  readonly marks: readonly EpisodeMark[];
  /** Step envelopes to acknowledge once the unit is written. */
  readonly sources: readonly Envelope<unknown>[];
}

export interface EmitterTopics {
  readonly samples: string;
  readonly trajectories: string;
  readonly rolloutStats: string;
  readonly state: string;
}

export interface EmitterStats {
  transactions: number;
  samples: number;
  trajectories: number;
  marks: number;
  tombstones: number;
  discardedUnits: number;
}

export class TransactionFailedError extends TrajflowError {
  constructor(cause: unknown) {
    super('TRANSACTION', `a processors transaction failed and was aborted; restart the processors to resume from the committed offsets (${String(cause)})`, {
      cause,
      retriable: true,
    });
  }
}

export class TransactionalEmitter {
  /** The units of each committed transaction, once they are readable (for progress and latency measurements). */
  readonly committed$ = new Subject<readonly OutputUnit[]>();
  readonly stats: EmitterStats = { transactions: 0, samples: 0, trajectories: 0, marks: 0, tombstones: 0, discardedUnits: 0 };
  private readonly producer: Producer;
  private pending: OutputUnit[] = [];
  private tombstones: string[] = [];
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    kafka: Kafka,
    private readonly codec: EventCodec,
    private readonly consumer: TopicConsumer<unknown>,
    private readonly marks: EpisodeMarks,
    private readonly topics: EmitterTopics,
    /** Stable per processor instance: a restarted instance fences its predecessor's open transaction. */
    transactionalId: string,
  ) {
    this.producer = kafka.producer({ transactionalId, idempotent: true, maxInFlightRequests: 1, transactionTimeout: 30000 });
  }

  connect(): Promise<void> {
    return this.producer.connect();
  }

  enqueue(unit: OutputUnit): void {
    this.pending.push(unit);
  }

  /** Writes everything queued in one transaction; serial. Rejects with TransactionFailedError. */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  /**
   * Resolves once the transaction in flight (if any) has committed or aborted. A new consumer generation
   * awaits it before reloading the episode marks: otherwise the marks of a transaction that commits a
   * moment later are missed and the new generation writes those episodes' outputs again.
   */
  settled(): Promise<void> {
    return this.flushing.then(
      () => undefined,
      () => undefined,
    );
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    await this.producer.disconnect();
  }

  private async flushOnce(): Promise<void> {
    const generation = this.consumer.generation;
    const units = this.pending.filter((unit) => unit.generation === generation);
    this.stats.discardedUnits += this.pending.length - units.length;
    this.pending = [];
    if (units.length === 0 && this.tombstones.length === 0) return;

    // Acks first, so the positions taken below cover exactly the steps whose outputs are in this transaction.
    for (const unit of units) for (const source of unit.sources) source.ack();
    const positions = this.consumer.takeCommittable();
    const tombstones = this.tombstones;
    this.tombstones = [];

    let transaction: Transaction | undefined;
    try {
      transaction = await this.producer.transaction();
      const samples = units.flatMap((u) => u.samples);
      const trajectories = units.flatMap((u) => u.trajectories);
      const marks = units.flatMap((u) => u.marks);
      const rolloutStats = units.flatMap((u) => u.rolloutStats ?? []);
      const topicMessages = [
        { topic: this.topics.samples, messages: samples.map((s) => ({ key: s.groupId, value: this.codec.encode('sample', s) })) },
        { topic: this.topics.trajectories, messages: trajectories.map((t) => ({ key: t.groupId, value: this.codec.encode('trajectory', t) })) },
        { topic: this.topics.rolloutStats, messages: rolloutStats.map((r) => ({ key: r.runId, value: this.codec.encode('rollout_stats', r) })) },
        {
          topic: this.topics.state,
          messages: [
            ...marks.map((m) => ({ key: m.key, value: Buffer.from(JSON.stringify(m)) })),
            ...tombstones.map((key) => ({ key, value: null })),
          ],
        },
      ].filter((t) => t.messages.length > 0);
      if (topicMessages.length > 0) await transaction.sendBatch({ topicMessages });
      if (positions.length > 0) {
        await transaction.sendOffsets({ consumerGroupId: this.marks.consumerGroupId, topics: byTopic(positions) });
      }
      if (this.consumer.generation !== generation) {
        // A rebalance came while the transaction was being written: its steps may already be read again by
        // the new generation (here or in another member), and kafkajs' TxnOffsetCommit carries no
        // generation the broker could fence with. Abort; the steps are processed again from the committed
        // offsets.
        await transaction.abort();
        this.stats.discardedUnits += units.length;
        return;
      }
      await transaction.commit();
      this.stats.transactions++;
      this.stats.samples += samples.length;
      this.stats.trajectories += trajectories.length;
      this.stats.marks += marks.length;
      this.stats.tombstones += tombstones.length;
      for (const mark of marks) this.marks.add(mark);
      this.committed$.next(units);
      // Episodes now wholly below the committed offsets can never be read again — by a generation that
      // fetches its offsets after this commit. A rebalance during the commit may have fetched the older
      // offsets already and will re-read these episodes: their marks must stay until a commit of a stable
      // generation passes them again.
      if (this.consumer.generation === generation) this.tombstones.push(...this.marks.release(positions));
    } catch (error) {
      await transaction?.abort().catch(() => undefined);
      throw new TransactionFailedError(error);
    }
  }
}

function byTopic(positions: readonly CommitPosition[]) {
  const topics = new Map<string, { partition: number; offset: string }[]>();
  for (const p of positions) {
    const list = topics.get(p.topic) ?? [];
    list.push({ partition: p.partition, offset: p.offset.toString() });
    topics.set(p.topic, list);
  }
  return [...topics].map(([topic, partitions]) => ({ topic, partitions }));
}

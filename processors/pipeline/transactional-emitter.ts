// Writes the processors' outputs exactly once: samples, trajectories, episode marks and the consumed
// offsets go to Kafka in one transaction, so they become visible together or not at all. Readers use
// read_committed (kafkajs' default), so output from a crashed, uncommitted transaction is never seen.
//
// Outputs are queued as units (what one batch or one dropped group produced, with the step envelopes
// it consumed) and dispatched to per-partition lanes (partition-lanes.ts): each input partition writes
// one transaction at a time, and what is dispatched while it is busy goes into its next one — a
// transaction per partition per write, not per group, because a transaction costs several round trips;
// and no partition waits for another's transaction. Units of an older consumer-group generation are
// discarded: after a rebalance their steps are delivered again, to whoever owns the partition now.
//
// One transactional producer per input partition, its transactional id derived from the consumer group,
// topic and partition — the same in every process. The member a partition moves to initialises that
// producer before it reads anything (fence()): the broker then aborts the old owner's open transaction
// or lets it finish, and refuses it anything later (its epoch is stale). kafkajs 2.2.4's TxnOffsetCommit
// carries no consumer generation (KIP-447), so this per-partition fencing — Kafka Streams' original
// exactly-once design — is what keeps a zombie owner from committing after the new owner has started.
// A unit whose steps span partitions (steps of one group published under different keys) is written in
// the transaction of its lowest partition together with the others' offsets: correct after crashes, but
// only that partition fences. Such a write runs alone (after every lane is idle, before any other), so
// no partition's offsets can be committed out of order by two lanes.
import type { Kafka, Message, Producer, Transaction } from 'kafkajs';
import { Subject } from 'rxjs';
import type { EventCodec, RolloutStatsEvent, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import type { Envelope, TopicConsumer } from '../../streams/topic-consumer.js';
import { deadLetterEvent, type DeadLetterInput } from '../../streams/dead-letter.js';
import type { CommitPosition } from '../../streams/offset-tracker.js';
import { TrajflowError } from '../../core/errors.js';
import { rememberingPartitioner } from '../../streams/partitioner.js';
import type { EpisodeMark, EpisodeMarks } from './episode-marks.js';
import { PartitionLanes } from './partition-lanes.js';

export interface OutputUnit {
  readonly generation: number;
  readonly samples: readonly TrainingSampleEvent[];
  readonly trajectories: readonly TrajectoryEvent[];
  readonly rolloutStats?: readonly RolloutStatsEvent[];
  readonly marks: readonly EpisodeMark[];
  /** Steps that could not be decoded, written to the dead-letter topic in the transaction of their offsets. */
  readonly deadLetters?: readonly DeadLetterInput[];
  /** Step messages to acknowledge once the unit is written (envelopes, or held dead letters' sources). */
  readonly sources: readonly UnitSource[];
}

export type UnitSource = Pick<Envelope<unknown>, 'topic' | 'partition' | 'offset' | 'ack'>;

export interface EmitterTopics {
  /** The input topic whose partitions the transactional producers follow. */
  readonly steps: string;
  readonly samples: string;
  readonly trajectories: string;
  readonly rolloutStats: string;
  readonly state: string;
  readonly deadLetters: string;
}

export interface EmitterStats {
  transactions: number;
  samples: number;
  trajectories: number;
  marks: number;
  deadLetters: number;
  tombstones: number;
  discardedUnits: number;
  /** Transactions refused because another member had taken the partition (its producer fenced this one). */
  fenced: number;
}

export class TransactionFailedError extends TrajflowError {
  constructor(cause: unknown) {
    super('TRANSACTION', `a processors transaction failed and was aborted; restart the processors to resume from the committed offsets (${String(cause)})`, {
      cause,
      retriable: true,
    });
  }
}

/** The broker refused a stale producer epoch: another member initialised this partition's producer. */
function isFenced(error: unknown): boolean {
  const e = error as { type?: string; message?: string; cause?: unknown } | null;
  if (!e) return false;
  if (e.type === 'INVALID_PRODUCER_EPOCH' || e.type === 'PRODUCER_FENCED') return true;
  if (/fenced|producer epoch/i.test(e.message ?? '')) return true;
  return e.cause !== undefined && e.cause !== e && isFenced(e.cause);
}

/** How long one committed transaction's steps took, ms (see TransactionalEmitter.phaseLog). */
export interface TransactionPhases {
  /** producer.transaction(): a new transaction (the producer id was initialised at fence time). */
  readonly beginMs: number;
  /** sendBatch: AddPartitionsToTxn (retried while the previous transaction's markers are written) and Produce. */
  readonly sendMs: number;
  /** sendOffsets: AddOffsetsToTxn and TxnOffsetCommit (0 without positions). */
  readonly offsetsMs: number;
  /** commit: EndTxn. */
  readonly commitMs: number;
}

/** A unit's events as the Kafka messages its transaction sends. */
interface EncodedUnit {
  readonly samples: readonly Message[];
  readonly trajectories: readonly Message[];
  readonly rolloutStats: readonly Message[];
  readonly deadLetters: readonly Message[];
}

interface Batch {
  readonly partition: number;
  readonly generation: number;
  /** Holds a unit whose steps span partitions (their offsets are in it too): written alone. */
  readonly spansPartitions: boolean;
  readonly units: OutputUnit[];
  readonly positions: CommitPosition[];
  readonly tombstones: string[];
}

export class TransactionalEmitter {
  /** The units of each committed transaction, once they are readable (for progress and latency measurements). */
  readonly committed$ = new Subject<readonly OutputUnit[]>();
  readonly stats: EmitterStats = { transactions: 0, samples: 0, trajectories: 0, marks: 0, deadLetters: 0, tombstones: 0, discardedUnits: 0, fenced: 0 };
  private readonly producers = new Map<number, Producer>();
  private pending: OutputUnit[] = [];
  /** Each queued unit's messages, encoded at enqueue. */
  private readonly encoded = new WeakMap<OutputUnit, EncodedUnit>();
  /** Mark keys to delete, by the input partition whose transaction deletes them. */
  private tombstones = new Map<number, string[]>();
  private readonly lanes = new PartitionLanes<Batch>(
    (partition, batches) => this.writeLane(partition, batches),
    (error) => this.onFailure(new TransactionFailedError(error)),
  );
  /** A dispatch asked for while an exclusive (multi-partition) write was pending: run when it ends. */
  private dispatchAfterExclusive = false;
  private fencing: Promise<void> = Promise.resolve();
  private closed = false;
  /**
   * When set, every committed transaction's phases are appended (a measurement window: `bench processors`
   * sets it for its latency figure; unset, nothing is kept). kafkajs sends a transaction's requests one at a
   * time, so these say where a group's latency goes.
   */
  phaseLog: TransactionPhases[] | null = null;
  /** Told of the first failed transaction (the processors restart from the committed offsets). */
  onFailure: (error: TransactionFailedError) => void = () => undefined;

  constructor(
    private readonly kafka: Kafka,
    private readonly codec: EventCodec,
    private readonly consumer: TopicConsumer<unknown>,
    private readonly marks: EpisodeMarks,
    private readonly topics: EmitterTopics,
    /** Prefix of the per-partition transactional ids; the same in every process of the consumer group. */
    private readonly transactionalIdPrefix: string,
  ) {}

  /** The transactional id of an input partition's producer. */
  transactionalIdOf(partition: number): string {
    return `${this.transactionalIdPrefix}.${this.topics.steps}.${partition}`;
  }

  /** Partitions this member holds a (fenced-in) producer for. */
  get partitions(): number[] {
    return [...this.producers.keys()].sort((a, b) => a - b);
  }

  /**
   * Takes over the producers of `partitions` (the new assignment) and lets the others go. Initialising a
   * producer fences every earlier owner of its id and waits until their open transaction is finished, so
   * the marks read afterwards include everything they committed. Call after settled(), before reading.
   */
  fence(partitions: readonly number[]): Promise<void> {
    const run = this.fencing.then(() => this.fenceOnce(partitions));
    this.fencing = run.catch(() => undefined);
    return run;
  }

  private async fenceOnce(partitions: readonly number[]): Promise<void> {
    if (this.closed) return;
    const wanted = new Set(partitions);
    for (const [partition, producer] of [...this.producers]) {
      if (wanted.has(partition)) continue;
      this.producers.delete(partition);
      await producer.disconnect().catch(() => undefined);
    }
    await Promise.all(
      [...wanted]
        .filter((partition) => !this.producers.has(partition))
        .map(async (partition) => {
          // Short first retries: a transaction begun right after the previous commit meets CONCURRENT_TRANSACTIONS
          // until the coordinator has written the markers (a few ms); the client-wide 200 ms first backoff made that
          // the processors' latency tail. 30 retries from 20 ms, capped at 5 s, still outlast a ~100 s broker restart.
          const producer = this.kafka.producer({
            transactionalId: this.transactionalIdOf(partition),
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
          // Closed meanwhile: nobody will use (or disconnect) it.
          if (this.closed) await producer.disconnect().catch(() => undefined);
          else this.producers.set(partition, producer);
        }),
    );
  }

  /**
   * Queues a unit, encoding its events now: a lane busy with a transaction writes it in its next one, and
   * encoding it meanwhile, not after that commit, keeps the encode off its group's path to the broker.
   */
  enqueue(unit: OutputUnit): void {
    try {
      this.encoded.set(unit, this.encode(unit));
    } catch {
      // Left to write(), which encodes it again and fails its transaction as before (TransactionFailedError).
    }
    this.pending.push(unit);
  }

  private encode(unit: OutputUnit): EncodedUnit {
    return {
      samples: unit.samples.map((s) => ({ key: s.groupId, value: this.codec.encode('sample', s) })),
      trajectories: unit.trajectories.map((t) => ({ key: t.groupId, value: this.codec.encode('trajectory', t) })),
      rolloutStats: (unit.rolloutStats ?? []).map((r) => ({ key: r.runId, value: this.codec.encode('rollout_stats', r) })),
      // Keyed like the source message, as the plain dead-letter route does.
      deadLetters: (unit.deadLetters ?? []).map((d) => ({ key: d.key, value: this.codec.encode('dead_letter', deadLetterEvent(d)) })),
    };
  }

  private encodedOf(unit: OutputUnit): EncodedUnit {
    return this.encoded.get(unit) ?? this.encode(unit);
  }

  /** Writes everything queued and waits until every lane is idle. Rejects with TransactionFailedError. */
  async flush(): Promise<void> {
    this.dispatch();
    await this.lanes.idle();
    if (this.lanes.failed !== undefined) throw new TransactionFailedError(this.lanes.failed);
  }

  /**
   * Resolves once the transactions in flight (if any) have committed or aborted. A new consumer generation
   * awaits them before reloading the episode marks: otherwise the marks of a transaction that commits a
   * moment later are missed and the new generation writes those episodes' outputs again.
   */
  settled(): Promise<void> {
    return this.lanes.settled();
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    this.closed = true;
    await this.fencing;
    const producers = [...this.producers.values()];
    this.producers.clear();
    await Promise.all(producers.map((p) => p.disconnect().catch(() => undefined)));
  }

  /**
   * Hands what is queued to the partitions' lanes and returns at once; a lane's failure goes to onFailure.
   * Acks first, so the positions taken below cover exactly the steps whose outputs are in these batches.
   * Positions also move without any unit: a dead-lettered step is acknowledged by the consumer itself. They
   * are committed too (in a transaction with offsets only); left for the next output, a restart before it
   * would read those steps again and dead-letter them twice.
   */
  dispatch(): void {
    if (this.lanes.failed !== undefined || this.closed) return;
    if (this.lanes.exclusive) {
      this.dispatchAfterExclusive = true;
      return;
    }
    const generation = this.consumer.generation;
    const units = this.pending.filter((unit) => unit.generation === generation);
    this.stats.discardedUnits += this.pending.length - units.length;
    this.pending = [];
    for (const unit of units) for (const source of unit.sources) source.ack();
    const batches = this.batches(units, this.consumer.takeCommittable(), generation);
    if (batches.some((batch) => batch.spansPartitions)) {
      void this.lanes
        .runExclusive(async () => {
          const results = await Promise.allSettled(batches.map((batch) => this.write(batch)));
          const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
          if (failure) throw failure.reason;
        })
        .then(() => {
          if (!this.dispatchAfterExclusive) return;
          this.dispatchAfterExclusive = false;
          this.dispatch();
        });
      return;
    }
    for (const batch of batches) this.lanes.submit(batch.partition, batch);
  }

  /** A lane's queued batches, written in one transaction per generation (in practice always one). */
  private async writeLane(partition: number, batches: readonly Batch[]): Promise<void> {
    for (let from = 0; from < batches.length; ) {
      const generation = batches[from]!.generation;
      let to = from;
      while (to < batches.length && batches[to]!.generation === generation) to++;
      await this.write(merged(partition, generation, batches.slice(from, to)));
      from = to;
    }
  }

  /** Units, positions and tombstones grouped by the input partition whose transaction writes them. */
  private batches(units: readonly OutputUnit[], positions: readonly CommitPosition[], generation: number): Batch[] {
    // Partitions a unit spans are written together, in the transaction of the lowest (see the header).
    const home = new Map<number, number>();
    const find = (p: number): number => {
      let root = p;
      while (home.has(root) && home.get(root) !== root) root = home.get(root)!;
      return root;
    };
    const link = (a: number, b: number) => {
      const [ra, rb] = [find(a), find(b)];
      if (ra !== rb) home.set(Math.max(ra, rb), Math.min(ra, rb));
    };
    const partitionsOf = (unit: OutputUnit) => [...new Set(unit.sources.filter((s) => s.topic === this.topics.steps).map((s) => s.partition))];
    for (const unit of units) {
      const parts = partitionsOf(unit);
      for (const p of parts) if (!home.has(p)) home.set(p, p);
      for (const p of parts.slice(1)) link(parts[0]!, p);
    }
    const spanning = new Set([...home.keys()].filter((p) => find(p) !== p).map(find));
    const batches = new Map<number, Batch>();
    const batchOf = (partition: number): Batch => {
      const at = home.has(partition) ? find(partition) : partition;
      let batch = batches.get(at);
      if (!batch) batches.set(at, (batch = { partition: at, generation, spansPartitions: spanning.has(at), units: [], positions: [], tombstones: [] }));
      return batch;
    };
    for (const unit of units) {
      const parts = partitionsOf(unit);
      // A unit with no step of the input topic (none today) goes with the lowest partition held.
      batchOf(parts[0] ?? this.partitions[0] ?? 0).units.push(unit);
    }
    for (const position of positions) batchOf(position.partition).positions.push(position);
    for (const [partition, keys] of this.tombstones) batchOf(partition).tombstones.push(...keys);
    this.tombstones = new Map();
    return [...batches.values()].filter((b) => b.units.length > 0 || b.positions.length > 0 || b.tombstones.length > 0);
  }

  private async write(batch: Batch): Promise<void> {
    // Not while the producers are being handed over (a revoked partition's producer is disconnecting).
    await this.fencing;
    const { generation } = batch;
    const producer = this.producers.get(batch.partition);
    if (!producer) {
      // The partition was taken away: its new owner reads these steps again from the committed offsets.
      this.stats.discardedUnits += batch.units.length;
      return;
    }
    const { units, positions, tombstones } = batch;
    let transaction: Transaction | undefined;
    try {
      const started = performance.now();
      transaction = await producer.transaction();
      const begun = performance.now();
      const encoded = units.map((u) => this.encodedOf(u));
      const samples = encoded.flatMap((e) => e.samples);
      const trajectories = encoded.flatMap((e) => e.trajectories);
      const marks = units.flatMap((u) => u.marks);
      const deadLetters = encoded.flatMap((e) => e.deadLetters);
      const topicMessages = [
        { topic: this.topics.samples, messages: samples },
        { topic: this.topics.trajectories, messages: trajectories },
        { topic: this.topics.rolloutStats, messages: encoded.flatMap((e) => e.rolloutStats) },
        { topic: this.topics.deadLetters, messages: deadLetters },
        {
          topic: this.topics.state,
          messages: [...marks.map((m) => ({ key: m.key, value: Buffer.from(JSON.stringify(m)) })), ...tombstones.map((key) => ({ key, value: null }))],
        },
      ].filter((t) => t.messages.length > 0);
      if (topicMessages.length > 0) await transaction.sendBatch({ topicMessages });
      const sent = performance.now();
      if (positions.length > 0) {
        await transaction.sendOffsets({ consumerGroupId: this.marks.consumerGroupId, topics: byTopic(positions) });
      }
      const offsetsSent = performance.now();
      if (this.consumer.generation !== generation) {
        // A rebalance came while the transaction was being written: its steps may already be read again by
        // the new generation. Abort; they are processed again from the committed offsets.
        await transaction.abort();
        this.stats.discardedUnits += units.length;
        return;
      }
      await transaction.commit();
      this.phaseLog?.push({ beginMs: begun - started, sendMs: sent - begun, offsetsMs: offsetsSent - sent, commitMs: performance.now() - offsetsSent });
      this.stats.transactions++;
      this.stats.samples += samples.length;
      this.stats.trajectories += trajectories.length;
      this.stats.marks += marks.length;
      this.stats.deadLetters += deadLetters.length;
      this.stats.tombstones += tombstones.length;
      for (const mark of marks) this.marks.add(mark);
      this.committed$.next(units);
      // Episodes now wholly below the committed offsets can never be read again — by a generation that
      // fetches its offsets after this commit. A rebalance during the commit may have fetched the older
      // offsets already and will re-read these episodes: their marks must stay until a commit of a stable
      // generation passes them again.
      if (this.consumer.generation === generation) {
        const released = this.marks.release(positions);
        if (released.length > 0) this.tombstones.set(batch.partition, [...(this.tombstones.get(batch.partition) ?? []), ...released]);
      }
    } catch (error) {
      await transaction?.abort().catch(() => undefined);
      if (isFenced(error)) {
        // Another member owns the partition now and fenced this producer: what it held is its to redo.
        this.stats.fenced++;
        this.stats.discardedUnits += units.length;
        if (this.producers.get(batch.partition) === producer) this.producers.delete(batch.partition);
        await producer.disconnect().catch(() => undefined);
        return;
      }
      throw error;
    }
  }
}

/** A lane's batches as one: units and tombstones in order, each topic-partition's latest position. */
function merged(partition: number, generation: number, batches: readonly Batch[]): Batch {
  if (batches.length === 1) return batches[0]!;
  const latest = new Map<string, CommitPosition>();
  for (const batch of batches) {
    for (const position of batch.positions) {
      const key = `${position.topic}/${position.partition}`;
      const before = latest.get(key);
      if (!before || position.offset > before.offset) latest.set(key, position);
    }
  }
  return {
    partition,
    generation,
    spansPartitions: false,
    units: batches.flatMap((b) => b.units),
    positions: [...latest.values()],
    tombstones: batches.flatMap((b) => b.tombstones),
  };
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

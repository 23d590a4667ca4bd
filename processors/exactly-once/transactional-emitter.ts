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
// The producers run on a worker thread (transaction-worker.ts): this class decides what each transaction
// holds and acts on how it ended; the worker builds the requests and talks to the broker, on the other core.
//
// A unit whose steps span partitions (steps of one group published under different keys) is written in
// the transaction of its lowest partition together with the others' offsets: correct after crashes, but
// only that partition fences. Such a write runs alone (after every lane is idle, before any other), so
// no partition's offsets can be committed out of order by two lanes.
import { OutputEncoder } from './output-encoder.js';
import { Subject } from 'rxjs';
import type { EventCodec, RolloutStatsEvent, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { receiptOf, type Receipt, type TopicConsumer } from '../../streams/topic-consumer.js';
import { deadLetterEvent, type DeadLetterInput } from '../../streams/dead-letter.js';
import type { CommitPosition } from '../../streams/offset-tracker.js';
import { TrajflowError } from '../../core/errors.js';
import type { EpisodeMark, EpisodeMarks } from './episode-marks.js';
import { MarkReleases } from './mark-releases.js';
import { PartitionLanes } from './partition-lanes.js';
import { TransactionClient, type CommitHold, type PendingRequest } from './transaction-client.js';
import type { TopicMessages, TransactionOffsets, TransactionPhases } from './transaction-protocol.js';
import type { KafkaConfig } from '../../core/config.js';

type Message = TopicMessages['messages'][number];

export type { TransactionPhases } from './transaction-protocol.js';

export interface OutputUnit {
  readonly generation: number;
  readonly samples: readonly TrainingSampleEvent[];
  readonly trajectories: readonly TrajectoryEvent[];
  readonly rolloutStats?: readonly RolloutStatsEvent[];
  readonly marks: readonly EpisodeMark[];
  /** Steps that could not be decoded, written to the dead-letter topic in the transaction of their offsets. */
  readonly deadLetters?: readonly DeadLetterInput[];
  /**
   * Steps read on a partition other than their group's home: written again to the steps topic, keyed by their
   * group id (so to the home partition), in the transaction of their offsets (processors/pipeline/home-partition.ts).
   */
  readonly reroutes?: readonly { readonly key: string; readonly value: Buffer }[];
  /** Step messages to acknowledge once the unit is written (envelopes, or held dead letters' sources). */
  readonly sources: readonly UnitSource[];
}

/** A step message a unit acknowledges once written: an envelope, or its receipt once queued. */
export type UnitSource = Receipt;

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
  /** Released marks not deleted because a new generation began first (mark-releases.ts). */
  droppedTombstones: number;
  discardedUnits: number;
  /** Transactions refused because another member had taken the partition (its producer fenced this one). */
  fenced: number;
  /** Steps moved to their group's home partition. */
  rerouted: number;
}

export class TransactionFailedError extends TrajflowError {
  constructor(cause: unknown) {
    super('TRANSACTION', `a processors transaction failed and was aborted; restart the processors to resume from the committed offsets (${String(cause)})`, {
      cause,
      retriable: true,
    });
  }
}

/** A unit's events as the Kafka messages its transaction sends. */
interface EncodedUnit {
  readonly samples: readonly Message[];
  readonly trajectories: readonly Message[];
  readonly rolloutStats: readonly Message[];
  readonly deadLetters: readonly Message[];
  readonly reroutes: readonly Message[];
}

/**
 * A unit as it waits for its transaction: its messages encoded, its events let go. Holding a batch's
 * samples, trajectories and decoded steps until the commit (a transaction later) kept them alive through a
 * scavenge or two; copying them was most of the processors' GC. Only a unit whose encoding threw keeps
 * its events, for write() to encode again and fail its transaction as any failed write does.
 */
interface QueuedUnit {
  readonly generation: number;
  readonly encoded: EncodedUnit | null;
  readonly unit: OutputUnit | null;
  readonly marks: readonly EpisodeMark[];
  /** Receipts of the unit's sources: what acknowledging needs, without the decoded steps. */
  readonly sources: readonly UnitSource[];
}

/** What committed$ tells of a unit once its transaction committed. */
export interface CommittedUnit {
  readonly generation: number;
  /** The group id of each sample written (a group's samples may come in several units). */
  readonly sampleGroupIds: readonly string[];
  readonly trajectories: number;
}

interface Batch {
  readonly partition: number;
  readonly generation: number;
  /** Holds a unit whose steps span partitions (their offsets are in it too): written alone. */
  readonly spansPartitions: boolean;
  readonly units: QueuedUnit[];
  readonly positions: CommitPosition[];
  readonly tombstones: string[];
}

/** How long a fenced producer's member waits for the rebalance that explains it before it starts over (watchFenced). */
const FENCED_GRACE_MS = 15_000;

export class TransactionalEmitter {
  /** The units of each committed transaction, once they are readable (for progress and latency measurements). */
  readonly committed$ = new Subject<readonly CommittedUnit[]>();
  readonly stats: EmitterStats = {
    transactions: 0,
    samples: 0,
    trajectories: 0,
    marks: 0,
    deadLetters: 0,
    tombstones: 0,
    droppedTombstones: 0,
    discardedUnits: 0,
    fenced: 0,
    rerouted: 0,
  };
  private readonly transactions: TransactionClient;
  private pending: QueuedUnit[] = [];
  /** Mark keys to delete, by the input partition whose transaction deletes them (dropped at a new generation). */
  private readonly releases = new MarkReleases();
  private readonly lanes = new PartitionLanes<Batch>(
    (partition, batches) => this.writeLane(partition, batches),
    (error) => this.onFailure(new TransactionFailedError(error)),
  );
  /** A dispatch asked for while an exclusive (multi-partition) write was pending: run when it ends. */
  private dispatchAfterExclusive = false;
  private fencing: Promise<void> = Promise.resolve();
  private closed = false;
  /** Armed by a fenced transaction: fails the pipeline unless a new generation comes first (watchFenced). */
  private fencedWatch: NodeJS.Timeout | null = null;
  /**
   * When set, every committed transaction's phases are appended (a measurement window: `bench processors`
   * sets it for its latency figure; unset, nothing is kept). kafkajs sends a transaction's requests one at a
   * time, so these say where a group's latency goes.
   */
  phaseLog: TransactionPhases[] | null = null;
  /** Told of the first failed transaction (the processors restart from the committed offsets). */
  onFailure: (error: TransactionFailedError) => void = () => undefined;
  private readonly output: OutputEncoder;

  constructor(
    kafka: KafkaConfig,
    private readonly codec: EventCodec,
    private readonly consumer: TopicConsumer<unknown>,
    private readonly marks: EpisodeMarks,
    private readonly topics: EmitterTopics,
    /** Prefix of the per-partition transactional ids; the same in every process of the consumer group. */
    transactionalIdPrefix: string,
    options: { readonly holdCommits?: boolean; readonly transactionDeadlineMs?: number } = {},
  ) {
    this.transactions = new TransactionClient({
      kafka,
      clientId: 'trajflow-processors',
      transactionalIdPrefix: `${transactionalIdPrefix}.${topics.steps}`,
      generation: consumer.generation,
      holdCommits: options.holdCommits === true,
      requestDeadlineMs: options.transactionDeadlineMs,
    });
    this.output = new OutputEncoder(codec);
  }

  /** Fault tests: the held commits (ProcessorsOptions.holdCommits), or null. */
  get commitHold(): CommitHold | null {
    return this.transactions.commitHold;
  }

  /** The oldest transaction (or producer hand-over) the worker is still running, for the processors' stall report. */
  oldestRequest(): PendingRequest | null {
    return this.transactions.oldestRequest();
  }

  /** Partitions this member holds a (fenced-in) producer for. */
  get partitions(): number[] {
    return [...this.transactions.partitions];
  }

  /**
   * A rebalance started a new consumer generation: call at once (before awaiting anything), so that a
   * transaction of the old generation that reaches its commit from now on is aborted, not committed.
   */
  generationChanged(): void {
    this.transactions.generation = this.consumer.generation;
    // The new generation may have fetched offsets older than the commits that released these (mark-releases.ts).
    this.stats.droppedTombstones += this.releases.dropPending();
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
    await this.transactions.fence(partitions);
  }

  /**
   * Queues a unit, encoding its events now: a lane busy with a transaction writes it in its next one, and
   * encoding it meanwhile, not after that commit, keeps the encode off its group's path to the broker.
   */
  enqueue(unit: OutputUnit): void {
    let encoded: EncodedUnit | null = null;
    try {
      encoded = this.encode(unit);
    } catch {
      // Left to write(), which encodes it again and fails its transaction as before (TransactionFailedError).
    }
    this.pending.push({ generation: unit.generation, encoded, unit: encoded ? null : unit, marks: unit.marks, sources: unit.sources.map(receiptOf) });
  }

  private encode(unit: OutputUnit): EncodedUnit {
    return {
      samples: unit.samples.map((s) => ({ key: s.groupId, value: this.output.sample(s) })),
      trajectories: unit.trajectories.map((t) => ({ key: t.groupId, value: this.output.trajectory(t) })),
      rolloutStats: (unit.rolloutStats ?? []).map((r) => ({ key: r.runId, value: this.codec.encode('rollout_stats', r) })),
      // Keyed like the source message, as the plain dead-letter route does.
      deadLetters: (unit.deadLetters ?? []).map((d) => ({ key: d.key, value: this.codec.encode('dead_letter', deadLetterEvent(d)) })),
      reroutes: unit.reroutes ?? [],
    };
  }

  private encodedOf(queued: QueuedUnit): EncodedUnit {
    return queued.encoded ?? this.encode(queued.unit!);
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

  /**
   * A fenced producer whose member's generation stays the same. Either the rebalance that gave the partition
   * to another member reaches this one in a moment, or nobody else holds it: the transaction coordinator aborted
   * a transaction that ran past its timeout (bumping the producer's epoch), or this member was dropped from the
   * group without hearing of it. Kept, the partition would be written by nobody until the next rebalance, and its
   * steps would fill the consumer's in-flight bound. With no new generation within FENCED_GRACE_MS the pipeline
   * fails (TransactionFailedError): the processors start it again from the committed offsets, rejoining the group —
   * the one way to learn which partitions are this member's (processors/pipeline/supervise.ts).
   */
  private watchFenced(partition: number, generation: number): void {
    if (this.fencedWatch || this.closed) return;
    this.fencedWatch = setTimeout(() => {
      this.fencedWatch = null;
      if (this.closed || this.consumer.generation !== generation) return;
      this.onFailure(
        new TransactionFailedError(
          new Error(
            `the producer of partition ${partition} was fenced and no rebalance followed within ${FENCED_GRACE_MS / 1000} s (a transaction past its timeout, or this member left the group)`,
          ),
        ),
      );
    }, FENCED_GRACE_MS);
    this.fencedWatch.unref();
  }

  /** Writes what is queued (unless `flush` is false: a failed pipeline's transactions may be what it is stuck on), then stops the producers. */
  async close(options: { readonly flush?: boolean } = {}): Promise<void> {
    if (this.fencedWatch) clearTimeout(this.fencedWatch);
    this.fencedWatch = null;
    if (options.flush !== false) await this.flush().catch(() => undefined);
    this.closed = true;
    if (options.flush !== false) await this.fencing;
    await this.transactions.close();
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
  private batches(units: readonly QueuedUnit[], positions: readonly CommitPosition[], generation: number): Batch[] {
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
    const partitionsOf = (unit: QueuedUnit) => [...new Set(unit.sources.filter((s) => s.topic === this.topics.steps).map((s) => s.partition))];
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
    for (const [partition, keys] of this.releases.take()) batchOf(partition).tombstones.push(...keys);
    return [...batches.values()].filter((b) => b.units.length > 0 || b.positions.length > 0 || b.tombstones.length > 0);
  }

  private async write(batch: Batch): Promise<void> {
    // Not while the producers are being handed over (a revoked partition's producer is disconnecting).
    await this.fencing;
    const { generation, units, positions, tombstones } = batch;
    const encoded = units.map((u) => this.encodedOf(u));
    const samples = encoded.flatMap((e) => e.samples);
    const trajectories = encoded.flatMap((e) => e.trajectories);
    const marks = units.flatMap((u) => u.marks);
    const deadLetters = encoded.flatMap((e) => e.deadLetters);
    const reroutes = encoded.flatMap((e) => e.reroutes);
    const topicMessages = [
      { topic: this.topics.steps, messages: reroutes },
      { topic: this.topics.samples, messages: samples },
      { topic: this.topics.trajectories, messages: trajectories },
      { topic: this.topics.rolloutStats, messages: encoded.flatMap((e) => e.rolloutStats) },
      { topic: this.topics.deadLetters, messages: deadLetters },
      {
        topic: this.topics.state,
        messages: [...marks.map((m) => ({ key: m.key, value: Buffer.from(JSON.stringify(m)) })), ...tombstones.map((key) => ({ key, value: null }))],
      },
    ].filter((t) => t.messages.length > 0);
    const offsets: TransactionOffsets | null = positions.length > 0 ? { consumerGroupId: this.marks.consumerGroupId, topics: byTopic(positions) } : null;
    const { outcome, phases } = await this.transactions.write(batch.partition, generation, topicMessages, offsets);
    if (outcome !== 'committed') {
      // unowned: the partition was taken away, its new owner reads these steps again from the committed
      // offsets. stale: a rebalance came meanwhile, the transaction was aborted. fenced: another member owns
      // the partition now and fenced this producer; what it held is its to redo.
      if (outcome === 'fenced') {
        this.stats.fenced++;
        this.watchFenced(batch.partition, generation);
      }
      this.stats.discardedUnits += units.length;
      return;
    }
    if (phases) this.phaseLog?.push(phases);
    this.stats.transactions++;
    this.stats.samples += samples.length;
    this.stats.trajectories += trajectories.length;
    this.stats.marks += marks.length;
    this.stats.deadLetters += deadLetters.length;
    this.stats.rerouted += reroutes.length;
    this.stats.tombstones += tombstones.length;
    for (const mark of marks) this.marks.add(mark);
    this.committed$.next(
      units.map((u, i) => ({ generation: u.generation, sampleGroupIds: encoded[i]!.samples.map((m) => m.key as string), trajectories: encoded[i]!.trajectories.length })),
    );
    // Episodes now wholly below the committed offsets can never be read again — by a generation that
    // fetches its offsets once this commit is visible. A rebalance during the commit may have fetched the
    // older offsets already and will re-read these episodes: their marks must stay until a commit of a stable
    // generation passes them again. So must those released now if a generation begins before the next
    // transaction deletes them (mark-releases.ts).
    if (this.consumer.generation === generation) this.releases.add(batch.partition, this.marks.release(positions));
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

// Which samples the learner trains next: the pure core of the learner's loop (state in, decisions out; the
// Kafka shell is learner.ts). docs/concepts/versions-and-staleness.md has the rules; in short:
//
// - A sample that names its rollout batch (sample.batch, set by the processors) waits until its batch holds
//   all `batch.samples` samples; the complete batch is one update. So policy version v is the initial
//   weights trained on v whole rollout batches, whatever the token budget, epochs, minibatches, group size
//   or number of actor processes. Batches go in the order of their actors' iteration: a complete batch waits
//   while one of an earlier iteration is still filling. A complete batch whose iteration is past the next one
//   after the last trained (lastTrainedIteration + 1) also waits, up to `batchTimeoutMs` after its last sample:
//   after a restart the partitions are read again unevenly, and a later iteration's batch can be whole before
//   any sample of the next one has been read. Once such a wait runs out (the producer skips iterations, or an
//   iteration's groups were all filtered out), gaps are not waited for again in this process.
// - A batch still incomplete `batchTimeoutMs` after its last sample arrived (its other samples were lost or
//   went to a batch of their own after a processors restart) is trained as it is, counted as partial.
// - A sample without a batch (a v1 producer, a replay) is batched by the token budget, as before batches
//   were named: `batchTokens` tokens, or `minSamples` samples that waited `maxWaitMs`.
// - Samples of other runs and samples already trained (redelivered after a reconnect or a restart) are
//   acknowledged without training; the shell counts them.
import type { TrainingSampleEvent } from '../../schemas/index.js';

/** What the core needs of a delivered sample (an Envelope in the shell). */
export interface Delivered {
  readonly value: TrainingSampleEvent;
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as a decimal string. */
  readonly offset: string;
}

export interface BatchAssemblyOptions {
  readonly runId: string;
  readonly batchTokens: number;
  readonly minSamples: number;
  readonly maxWaitMs: number;
  readonly batchTimeoutMs: number;
  /** Whether a sample id was trained in an earlier update (the shell's memory of recent ids). */
  readonly trained: (sampleId: string) => boolean;
  /** The highest actors' iteration trained so far, -1 before any (the ledger's, restored from a checkpoint). */
  readonly lastTrainedIteration: () => number;
}

export type Admission = 'held' | 'otherRun' | 'duplicate';

/** One update's worth: a whole rollout batch, a partial one after its timeout, or samples without a batch. */
export interface TrainingUnit<D extends Delivered> {
  readonly deliveries: readonly D[];
  readonly batchId: string | null;
  /** The actors' iteration of the batch (-1: none named, or no batch). */
  readonly iteration: number;
  /** Samples the batch announced (its deliveries' count for samples without a batch). */
  readonly expected: number;
  readonly partial: boolean;
}

interface PendingBatch<D> {
  readonly batchId: string;
  readonly iteration: number;
  readonly expected: number;
  readonly members: Map<string, D>;
  readonly order: number;
  lastAt: number;
}

export class BatchAssembly<D extends Delivered> {
  private readonly batches = new Map<string, PendingBatch<D>>();
  private loose: D[] = [];
  private readonly looseIds = new Set<string>();
  private looseTokens = 0;
  private looseSince = 0;
  private opened = 0;
  /** Whether a complete batch waits for a missing earlier iteration (false once such a wait ran out). */
  private waitForGaps = true;

  constructor(private readonly options: BatchAssemblyOptions) {}

  /** Takes a delivery: held for an update, or refused (the shell acknowledges it and counts the reason). */
  add(delivery: D, nowMs: number): Admission {
    const sample = delivery.value;
    if (sample.runId !== this.options.runId) return 'otherRun';
    if (this.options.trained(sample.sampleId)) return 'duplicate';
    const named = sample.batch;
    if (named === null) {
      if (this.looseIds.has(sample.sampleId)) return 'duplicate';
      if (this.loose.length === 0) this.looseSince = nowMs;
      this.loose.push(delivery);
      this.looseIds.add(sample.sampleId);
      this.looseTokens += sample.tokenIds.length;
      return 'held';
    }
    let batch = this.batches.get(named.batchId);
    if (!batch) {
      batch = { batchId: named.batchId, iteration: named.iteration, expected: named.samples, members: new Map(), order: this.opened++, lastAt: nowMs };
      this.batches.set(named.batchId, batch);
    }
    if (batch.members.has(sample.sampleId)) return 'duplicate';
    batch.members.set(sample.sampleId, delivery);
    batch.lastAt = nowMs;
    return 'held';
  }

  /** The next unit to train now, taken out of the assembly, or null when nothing is ready. */
  next(nowMs: number): TrainingUnit<D> | null {
    for (const batch of [...this.batches.values()].sort(order)) {
      if (batch.members.size >= batch.expected || nowMs - batch.lastAt >= this.options.batchTimeoutMs) {
        if (this.waitsForGap(batch, nowMs)) break;
        this.batches.delete(batch.batchId);
        return {
          deliveries: [...batch.members.values()],
          batchId: batch.batchId,
          iteration: batch.iteration,
          expected: batch.expected,
          partial: batch.members.size < batch.expected,
        };
      }
      // An earlier iteration still filling goes first: training a later one before it would make its samples a
      // version staler.
      if (batch.iteration >= 0) break;
    }
    return this.nextLoose(nowMs);
  }

  /** Whether a ready batch waits for the iteration after the last trained, which has not been seen yet. */
  private waitsForGap(batch: PendingBatch<D>, nowMs: number): boolean {
    if (!this.waitForGaps || batch.iteration < 0 || batch.iteration <= this.options.lastTrainedIteration() + 1) return false;
    if (nowMs - batch.lastAt < this.options.batchTimeoutMs) return true;
    this.waitForGaps = false;
    return false;
  }

  /** The lowest held offset per "topic/partition": where a restart must read again from. */
  heldOffsets(): Map<string, bigint> {
    const lowest = new Map<string, bigint>();
    const hold = (d: D) => {
      const key = `${d.topic}/${d.partition}`;
      const offset = BigInt(d.offset);
      const known = lowest.get(key);
      if (known === undefined || offset < known) lowest.set(key, offset);
    };
    for (const batch of this.batches.values()) batch.members.forEach(hold);
    this.loose.forEach(hold);
    return lowest;
  }

  /** Samples held: in batches not yet complete and without a batch. */
  get held(): number {
    let count = this.loose.length;
    for (const batch of this.batches.values()) count += batch.members.size;
    return count;
  }

  private nextLoose(nowMs: number): TrainingUnit<D> | null {
    const { batchTokens, minSamples, maxWaitMs } = this.options;
    if (this.loose.length === 0) return null;
    if (this.looseTokens < batchTokens && !(this.loose.length >= minSamples && nowMs - this.looseSince >= maxWaitMs)) return null;
    // Samples up to the token budget (at least one), in arrival order.
    const taken: D[] = [];
    let tokens = 0;
    while (this.loose.length > 0 && (taken.length === 0 || tokens + this.loose[0]!.value.tokenIds.length <= batchTokens)) {
      const delivery = this.loose.shift()!;
      this.looseIds.delete(delivery.value.sampleId);
      tokens += delivery.value.tokenIds.length;
      taken.push(delivery);
    }
    this.looseTokens -= tokens;
    this.looseSince = nowMs;
    return { deliveries: taken, batchId: null, iteration: -1, expected: taken.length, partial: false };
  }
}

/** Lower iteration first (batches naming none, -1, before all), then in the order their first sample came. */
function order(a: PendingBatch<unknown>, b: PendingBatch<unknown>): number {
  return a.iteration - b.iteration || a.order - b.order;
}

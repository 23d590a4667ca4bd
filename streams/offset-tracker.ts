// Which offsets may be committed, given which delivered messages downstream has finished with.
//
// At-least-once after downstream processing means a partition's committed offset may only move past a
// message once that message *and every earlier one* was acknowledged: acks arrive out of order (a
// stateful processor releases a whole episode at once), so the committable position is the first
// un-acknowledged delivery, or one past the last delivery when all are acknowledged.
//
// A rebalance starts a new generation: kafkajs re-fetches from the committed offsets, so messages still
// in flight will be delivered again. Acks that arrive for an older generation are ignored; committing
// them could move another member's partition.

export interface PartitionKey {
  readonly topic: string;
  readonly partition: number;
}

interface PartitionState {
  /** Delivered offsets in delivery order (ascending); acked entries are dropped from the front. */
  readonly pending: bigint[];
  /** The same offsets as `pending`, for O(1) membership. */
  readonly pendingSet: Set<bigint>;
  readonly acked: Set<bigint>;
  /** Offset of the next message after the last delivered one. */
  nextAfterDelivered: bigint | null;
  /** Last offset handed to commit(), to avoid committing the same position twice. */
  committed: bigint | null;
}

export interface CommitPosition extends PartitionKey {
  /** The next offset to read, as Kafka's OffsetCommit expects. */
  readonly offset: bigint;
}

export class OffsetTracker {
  private partitions = new Map<string, PartitionState>();
  private currentGeneration = 0;
  private unacked = 0;

  get generation(): number {
    return this.currentGeneration;
  }

  /** Messages delivered downstream and not yet acknowledged (in the current generation). */
  get inFlight(): number {
    return this.unacked;
  }

  /** Forget everything in flight: a rebalance happened and kafkajs will deliver them again. */
  newGeneration(): number {
    this.partitions.clear();
    this.unacked = 0;
    return ++this.currentGeneration;
  }

  delivered(key: PartitionKey, offset: bigint): void {
    const state = this.state(key);
    // The generation's first delivery is where the consumer resumed (the committed offset, or the start):
    // committing that position would change nothing, so it does not count as progress.
    if (state.committed === null && state.nextAfterDelivered === null) state.committed = offset;
    const last = state.pending[state.pending.length - 1];
    if (last !== undefined && offset <= last) {
      throw new RangeError(`offset ${offset} of ${key.topic}[${key.partition}] delivered after ${last}: deliveries must ascend within a generation`);
    }
    state.pending.push(offset);
    state.pendingSet.add(offset);
    state.nextAfterDelivered = offset + 1n;
    this.unacked++;
  }

  /** Returns false when the ack belongs to an older generation (or repeats an earlier ack). */
  acked(key: PartitionKey, offset: bigint, generation: number): boolean {
    if (generation !== this.currentGeneration) return false;
    const state = this.partitions.get(id(key));
    if (!state || state.acked.has(offset) || !state.pendingSet.has(offset)) return false;
    state.acked.add(offset);
    this.unacked--;
    while (state.pending.length > 0 && state.acked.has(state.pending[0]!)) {
      const done = state.pending.shift()!;
      state.acked.delete(done);
      state.pendingSet.delete(done);
    }
    return true;
  }

  /** Positions that moved since the last call; mark them committed. */
  takeCommittable(): CommitPosition[] {
    const positions: CommitPosition[] = [];
    for (const [key, state] of this.partitions) {
      const position = state.pending[0] ?? state.nextAfterDelivered;
      if (position === null || position === state.committed) continue;
      state.committed = position;
      const [topic, partition] = split(key);
      positions.push({ topic, partition, offset: position });
    }
    return positions;
  }

  /** Put positions back after a failed commit, so the next attempt retries them. */
  commitFailed(positions: readonly CommitPosition[]): void {
    for (const position of positions) {
      const state = this.partitions.get(id(position));
      if (state && state.committed === position.offset) state.committed = null;
    }
  }

  private state(key: PartitionKey): PartitionState {
    const k = id(key);
    let state = this.partitions.get(k);
    if (!state) {
      state = { pending: [], pendingSet: new Set(), acked: new Set(), nextAfterDelivered: null, committed: null };
      this.partitions.set(k, state);
    }
    return state;
  }
}

function id(key: PartitionKey): string {
  return `${key.partition}@${key.topic}`;
}

function split(key: string): [string, number] {
  const at = key.indexOf('@');
  return [key.slice(at + 1), Number(key.slice(0, at))];
}

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
  readonly topic: string;
  readonly partition: number;
  /**
   * Delivered offsets in delivery order (ascending) from index `head` on, and whether each was acked:
   * acked entries are dropped from the front by moving `head` (Array#shift would move the whole array at
   * every ack: the sink holds 20,000 deliveries), and the arrays are compacted once the dropped part is
   * as large as the rest. An ack finds its offset by binary search (offsets ascend but have gaps).
   */
  offsets: bigint[];
  acks: boolean[];
  head: number;
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
  /** Per topic, the partitions' states by partition number. */
  private partitions = new Map<string, PartitionState[]>();
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
    const last = state.offsets.length > state.head ? state.offsets[state.offsets.length - 1] : undefined;
    if (last !== undefined && offset <= last) {
      throw new RangeError(`offset ${offset} of ${key.topic}[${key.partition}] delivered after ${last}: deliveries must ascend within a generation`);
    }
    state.offsets.push(offset);
    state.acks.push(false);
    state.nextAfterDelivered = offset + 1n;
    this.unacked++;
  }

  /** Returns false when the ack belongs to an older generation (or repeats an earlier ack). */
  acked(key: PartitionKey, offset: bigint, generation: number): boolean {
    if (generation !== this.currentGeneration) return false;
    const state = this.partitions.get(key.topic)?.[key.partition];
    if (!state) return false;
    // Acks mostly come in delivery order (the sink's inserts, a partition's episodes): the head first.
    const at = state.offsets[state.head] === offset ? state.head : indexOf(state.offsets, state.head, offset);
    if (at < 0 || state.acks[at]) return false;
    state.acks[at] = true;
    this.unacked--;
    const { offsets, acks } = state;
    let head = state.head;
    while (head < offsets.length && acks[head]) head++;
    if (head === offsets.length) {
      state.offsets = [];
      state.acks = [];
      head = 0;
    } else if (head > 1024 && head * 2 > offsets.length) {
      state.offsets = offsets.slice(head);
      state.acks = acks.slice(head);
      head = 0;
    }
    state.head = head;
    return true;
  }

  /** Positions that moved since the last call; mark them committed. */
  takeCommittable(): CommitPosition[] {
    const positions: CommitPosition[] = [];
    for (const states of this.partitions.values()) {
      for (const state of states) {
        if (!state) continue; // a partition number this member never received
        const position = state.offsets[state.head] ?? state.nextAfterDelivered;
        if (position === null || position === state.committed) continue;
        state.committed = position;
        positions.push({ topic: state.topic, partition: state.partition, offset: position });
      }
    }
    return positions;
  }

  /** Put positions back after a failed commit, so the next attempt retries them. */
  commitFailed(positions: readonly CommitPosition[]): void {
    for (const position of positions) {
      const state = this.partitions.get(position.topic)?.[position.partition];
      if (state && state.committed === position.offset) state.committed = null;
    }
  }

  private state(key: PartitionKey): PartitionState {
    let states = this.partitions.get(key.topic);
    if (!states) this.partitions.set(key.topic, (states = []));
    let state = states[key.partition];
    if (!state) {
      state = { topic: key.topic, partition: key.partition, offsets: [], acks: [], head: 0, nextAfterDelivered: null, committed: null };
      states[key.partition] = state;
    }
    return state;
  }
}

/** The index of offset in the ascending xs[from..], or -1. */
function indexOf(xs: readonly bigint[], from: number, offset: bigint): number {
  let lo = from;
  let hi = xs.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const x = xs[mid]!;
    if (x === offset) return mid;
    if (x < offset) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

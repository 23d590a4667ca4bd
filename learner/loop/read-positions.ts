// Where a restarted learner reads <prefix>.samples again from, per partition: past every sample seen, but never
// past one still held for a later update (a crash would then skip it). Recorded in every checkpoint; the
// consumer skips the samples below them, so a sample trained before a crash is not trained again even when
// Kafka's committed offsets lag behind (docs/concepts/versions-and-staleness.md, "Crash and resume").

/** What the positions need of a delivery. */
export interface Position {
  readonly topic: string;
  readonly partition: number;
  /** Kafka offset as a decimal string. */
  readonly offset: string;
}

export class ReadPositions {
  /**
   * The positions of the newest update, by "topic/partition": the consumer's start offsets. The consumer reads
   * this map as it goes (a rebalance skips below it again), so it is updated in place, never replaced.
   */
  readonly start = new Map<string, bigint>();
  /** The offset after the newest delivery seen, by "topic/partition". */
  private readonly seen = new Map<string, bigint>();

  /** `restored`: the offsets of the checkpoint resumed from. */
  constructor(restored: Readonly<Record<string, string>> = {}) {
    for (const [key, offset] of Object.entries(restored)) this.start.set(key, BigInt(offset));
  }

  see(delivery: Position): void {
    const key = `${delivery.topic}/${delivery.partition}`;
    const next = BigInt(delivery.offset) + 1n;
    if ((this.seen.get(key) ?? -1n) < next) this.seen.set(key, next);
  }

  /** At an update: every partition seen moves past its deliveries, but not past the lowest still held (`held`). */
  advance(held: ReadonlyMap<string, bigint>): void {
    for (const [key, next] of this.seen) this.start.set(key, held.get(key) ?? next);
  }

  /** The positions as a checkpoint records them (decimal strings). */
  record(): Record<string, string> {
    return Object.fromEntries([...this.start].map(([k, v]) => [k, v.toString()]));
  }
}

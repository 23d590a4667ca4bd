// A bounded memory of keys that were closed recently (episodes, groups), so an item arriving for one
// of them is recognised as late instead of opening a fresh episode or group that could only time out.
// Oldest keys are forgotten first (oldest by their latest add); a forgotten key's late items are then
// treated as new ones.
//
// Not a Set evicting its first key: V8's ordered hash tables leave a deleted entry in place until the
// next rehash, and a table kept at a fixed size rehashes only when full, so finding the oldest key walked
// over every key evicted since: an add cost more the more keys the memory held
// (docs/results/processors.md).
// Here each add is appended to a queue with its sequence number and the map keeps every key's latest
// one; evicting pops queue entries, skipping those a later add of the same key made stale. O(1) amortised.

export class RecentlyClosed {
  /** Key → sequence number of its latest add. */
  private readonly latest = new Map<string, number>();
  /** Adds in order, oldest first from `head`; an entry whose sequence is not its key's latest is stale. */
  private queueKeys: string[] = [];
  private queueSeqs: number[] = [];
  private head = 0;
  private seq = 0;

  constructor(private readonly capacity: number) {}

  add(key: string): void {
    if (this.capacity <= 0) return;
    const seq = this.seq++;
    this.latest.set(key, seq);
    this.queueKeys.push(key);
    this.queueSeqs.push(seq);
    while (this.latest.size > this.capacity) {
      const oldest = this.queueKeys[this.head]!;
      const oldestSeq = this.queueSeqs[this.head]!;
      this.head++;
      if (this.latest.get(oldest) === oldestSeq) this.latest.delete(oldest);
    }
    // Now and then (when at most half of the queue is live: its popped front, or stale entries of keys
    // added again and again), keep only the live entries, so the queue stays within twice the keys held.
    if (this.queueKeys.length > 1024 && this.queueKeys.length > 2 * this.latest.size) this.compact();
  }

  private compact(): void {
    const keys: string[] = [];
    const seqs: number[] = [];
    for (let i = this.head; i < this.queueKeys.length; i++) {
      const key = this.queueKeys[i]!;
      if (this.latest.get(key) === this.queueSeqs[i]) {
        keys.push(key);
        seqs.push(this.queueSeqs[i]!);
      }
    }
    this.queueKeys = keys;
    this.queueSeqs = seqs;
    this.head = 0;
  }

  /** Entries in the queue, live or stale (tests: it stays within max(1024, 2 × size)). */
  get queued(): number {
    return this.queueKeys.length - this.head;
  }

  has(key: string): boolean {
    return this.latest.has(key);
  }

  get size(): number {
    return this.latest.size;
  }
}

/** Key of an episode or group within its run (ids are not expected to contain NUL, the separator). */
export function scopedKey(runId: string, id: string): string {
  return `${runId}\u0000${id}`;
}

// Episode marks a commit released (their episodes wholly below the committed offsets), waiting to be deleted
// by the next transaction of their input partition — and dropped, unwritten, when a new consumer generation
// starts before that transaction. A commit's offsets reach the group coordinator's offset fetch only once the
// transaction coordinator has written the commit's markers, after commit() returned; a broker restart can
// hold that for seconds. A new generation that fetched its offsets meanwhile re-reads the released episodes,
// and its first transaction would have deleted their marks (written from here, its generation being the
// current one) while those episodes were still on their way: written twice. Dropped, the marks stay on the
// state topic; the new generation reloads them, and its own commits release them again once its offsets pass
// them (docs/concepts/exactly-once.md).
export class MarkReleases {
  private pending = new Map<number, string[]>();

  /** Mark keys released by a commit on `partition`. */
  add(partition: number, keys: readonly string[]): void {
    if (keys.length === 0) return;
    const list = this.pending.get(partition);
    if (list) list.push(...keys);
    else this.pending.set(partition, [...keys]);
  }

  /** Takes what is pending, by partition, for the next transactions. */
  take(): Map<number, string[]> {
    const taken = this.pending;
    this.pending = new Map();
    return taken;
  }

  /** A new generation began: nothing pending is written. Returns how many keys were dropped. */
  dropPending(): number {
    let dropped = 0;
    for (const keys of this.pending.values()) dropped += keys.length;
    this.pending = new Map();
    return dropped;
  }
}

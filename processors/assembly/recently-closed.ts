// A bounded memory of keys that were closed recently (episodes, groups), so an item arriving for one
// of them is recognised as late instead of opening a fresh episode or group that could only time out.
// Oldest keys are forgotten first; a forgotten key's late items are then treated as new ones.

export class RecentlyClosed {
  private readonly keys = new Set<string>();

  constructor(private readonly capacity: number) {}

  add(key: string): void {
    if (this.capacity <= 0) return;
    this.keys.delete(key); // re-adding moves the key to the young end
    this.keys.add(key);
    if (this.keys.size > this.capacity) {
      // A Set iterates in insertion order: the first key is the oldest.
      const oldest = this.keys.values().next().value as string;
      this.keys.delete(oldest);
    }
  }

  has(key: string): boolean {
    return this.keys.has(key);
  }

  get size(): number {
    return this.keys.size;
  }
}

/** Key of an episode or group within its run (ids are not expected to contain NUL, the separator). */
export function scopedKey(runId: string, id: string): string {
  return `${runId}\u0000${id}`;
}

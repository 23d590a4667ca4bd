// The ids of the samples trained most recently: a sample delivered again (a redelivery after a reconnect, or after
// a restart above the checkpoint's positions) is refused by its id instead of being trained twice. Bounded: a
// redelivery comes back within the samples of a few batches, so only the newest ids are kept; checkpoints carry
// them across a restart.
export const RECENT_IDS = 20_000;

export class RecentSamples {
  /** In insertion order, oldest first (a Set iterates in insertion order). */
  private readonly ids = new Set<string>();

  constructor(
    restored: readonly string[] = [],
    private readonly limit = RECENT_IDS,
  ) {
    restored.forEach((id) => this.ids.add(id));
  }

  has(sampleId: string): boolean {
    return this.ids.has(sampleId);
  }

  /** Remembers an update's samples, forgetting the oldest past the limit. */
  add(sampleIds: Iterable<string>): void {
    for (const id of sampleIds) this.ids.add(id);
    while (this.ids.size > this.limit) this.ids.delete(this.ids.values().next().value!);
  }

  /** The newest `limit` ids, oldest first, as a checkpoint records them. */
  record(): string[] {
    return [...this.ids].slice(-this.limit);
  }
}

// How many episodes of each group are still being assembled: the trajectory assembler counts them, the group
// assembler asks before it closes an idle group that announced no size (assemble-groups.ts), so a group
// whose next episode is still running is not cut while that episode plays.
import { scopedKey } from './recently-closed.js';

export class GroupOpenEpisodes {
  private readonly counts = new Map<string, number>();

  opened(runId: string, groupId: string): void {
    const key = scopedKey(runId, groupId);
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  closed(runId: string, groupId: string): void {
    const key = scopedKey(runId, groupId);
    const count = (this.counts.get(key) ?? 0) - 1;
    if (count > 0) this.counts.set(key, count);
    else this.counts.delete(key);
  }

  has(runId: string, groupId: string): boolean {
    return this.counts.has(scopedKey(runId, groupId));
  }

  /** Groups with an open episode (a gauge, for tests). */
  get size(): number {
    return this.counts.size;
  }
}

// Runs filters one after another: each sees the groups the previous kept, and every drop is collected,
// so kept + dropped accounts for each input group exactly once.
import type { Group } from '../group.js';
import type { DroppedGroup, FilterResult, GroupFilter } from './types.js';

export function applyFilters(groups: readonly Group[], filters: readonly GroupFilter[]): FilterResult {
  let kept: Group[] = [...groups];
  const dropped: DroppedGroup[] = [];
  for (const filter of filters) {
    const result = filter(kept);
    kept = result.kept;
    dropped.push(...result.dropped);
  }
  return { kept, dropped };
}

// What every group filter returns: the groups it kept (in their input order) and one record per group it
// dropped, with the reason, so that every group is accounted for exactly once.
import type { Group } from '../group.js';

export interface DroppedGroup {
  groupId: string;
  /** The filter that dropped it, e.g. 'dynamic_sampling'. */
  filter: string;
  /** Machine-readable reason, e.g. 'all_rewards_equal'. */
  reason: string;
  /** Human-readable numbers behind the decision. */
  detail: string;
}

export interface FilterResult {
  kept: Group[];
  dropped: DroppedGroup[];
}

export type GroupFilter = (groups: readonly Group[]) => FilterResult;

// DAPO dynamic sampling (docs/algorithms.md §2.2; verl `algorithm.filter_groups`): drop a group whose
// trajectories all got the same reward — its group-relative advantages are all 0, so it carries no
// gradient. verl keeps a uid if np.std(metric) > 0 *or* it has exactly one sample.
//
// Interpretation: we test "all equal" with exact equality, as verl-agent's filter_group_data does
// (`np.all(r == r[0])`, §2.3), instead of np.std > 0. The two agree except under rounding: np.std of
// [0.1, 0.1, 0.1] is 1.4e-17 > 0, so verl would keep that group although every reward is the same.
// A group of one is kept (verl); verl-agent would drop it — set keepSingletons: false for that.
import type { Group } from '../group.js';
import { groupScores } from '../group.js';
import type { DroppedGroup, FilterResult } from './types.js';

export interface DynamicSamplingOptions {
  /** Keep groups with a single trajectory (verl: true; verl-agent: false). Default true. */
  keepSingletons?: boolean;
}

export const DYNAMIC_SAMPLING = 'dynamic_sampling';

export function dynamicSamplingFilter(groups: readonly Group[], { keepSingletons = true }: DynamicSamplingOptions = {}): FilterResult {
  const kept: Group[] = [];
  const dropped: DroppedGroup[] = [];
  for (const group of groups) {
    const scores = groupScores(group);
    const drop = (reason: string, detail: string) => dropped.push({ groupId: group.groupId, filter: DYNAMIC_SAMPLING, reason, detail });
    if (scores.length === 0) drop('empty_group', 'the group has no trajectories');
    else if (scores.length === 1) {
      if (keepSingletons) kept.push(group);
      else drop('singleton_group', `a single trajectory (reward ${scores[0]}) has no group-relative signal`);
    } else if (scores.every((r) => r === scores[0])) {
      drop('all_rewards_equal', `all ${scores.length} trajectories got reward ${scores[0]}`);
    } else kept.push(group);
  }
  return { kept, dropped };
}

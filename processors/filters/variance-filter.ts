// StarPO-S variance filtering (docs/algorithms.md §4.2; RAGEN v1 `agent_trainer._filter_rollout`): score each
// group by U = in-group std of R(τ) (unbiased torch.std), keep `in_group_std.topk(int(ratio·num_groups))`
// — the top fraction with the highest std ('std'), or the lowest ('std_rev'). ratio = 1 keeps everything.
//
// Exact behaviour, and where the reference leaves it open:
// - k = int(ratio·num_groups), truncation (8 groups × 0.25 → 2; 3 groups × 0.25 → 0, so nothing is kept
//   — v1 does that too). `atLeastOne` gives RAGEN-2's top_k rule, max(k, 1).
// - Ties: torch.topk does not specify which of equal values wins; here the earlier group (input order) does.
// - A group of one scores 0 (torch: NaN, which topk would rank first); see stats/moments.ts inGroupStd.
// - The std is of the reward pipeline's totals, so it includes the format penalty when the spec has one
//   (as RAGEN's does). It is not of normalised scores: RAGEN's in-place normalisation quirk (§4.2) is
//   not reproduced — with mean_std on it makes every non-constant group's std ≈ 1.
import { ConfigError } from '../../core/errors.js';
import type { Group } from '../group.js';
import { groupScores } from '../group.js';
import { inGroupStd } from '../stats/moments.js';
import type { DroppedGroup, FilterResult } from './types.js';

export interface VarianceFilterOptions {
  /** Fraction of groups kept, in (0, 1] (RAGEN `rollout_filter_ratio`, default 0.25). */
  ratio?: number;
  /** 'std' keeps the highest std (default), 'std_rev' the lowest. */
  type?: 'std' | 'std_rev';
  /** Keep at least one group (RAGEN-2 top_k's max(k, 1)); default false, as v1. */
  atLeastOne?: boolean;
}

export const VARIANCE_FILTER = 'starpo_s_variance';

export function checkVarianceFilterOptions({ ratio, type }: VarianceFilterOptions): void {
  if (ratio !== undefined && !(ratio > 0 && ratio <= 1)) {
    throw new ConfigError(`variance filter ratio must be in (0, 1], e.g. 0.25 (StarPO-S) or 1 to keep every group; got ${ratio}.`);
  }
  if (type !== undefined && type !== 'std' && type !== 'std_rev') {
    throw new ConfigError(`variance filter type must be 'std' (keep highest std) or 'std_rev' (keep lowest); got ${JSON.stringify(type)}.`);
  }
}

export function varianceFilter(groups: readonly Group[], options: VarianceFilterOptions = {}): FilterResult {
  checkVarianceFilterOptions(options);
  const { ratio = 0.25, type = 'std', atLeastOne = false } = options;
  if (ratio === 1) return { kept: [...groups], dropped: [] };
  const stds = groups.map((group) => inGroupStd(groupScores(group)));
  let k = Math.trunc(ratio * groups.length);
  if (atLeastOne) k = Math.min(Math.max(k, 1), groups.length);
  const sign = type === 'std' ? -1 : 1;
  // Stable sort: equal stds keep input order, so the earlier group wins a tie.
  const order = groups.map((_, i) => i).sort((a, b) => sign * (stds[a]! - stds[b]!));
  const keep = new Set(order.slice(0, k));
  const cutoff = k > 0 ? stds[order[k - 1]!]! : Number.NaN;
  const kept: Group[] = [];
  const dropped: DroppedGroup[] = [];
  groups.forEach((group, i) => {
    if (keep.has(i)) kept.push(group);
    else {
      dropped.push({
        groupId: group.groupId,
        filter: VARIANCE_FILTER,
        reason: type === 'std' ? 'below_top_fraction' : 'above_bottom_fraction',
        detail: `in-group std ${stds[i]} not in the ${type === 'std' ? 'top' : 'bottom'} ${k} of ${groups.length} groups (ratio ${ratio}, cut-off std ${cutoff})`,
      });
    }
  });
  return { kept, dropped };
}

// RAGEN-2 SNR-aware top-p filter (docs/algorithms.md §5; RAGEN `rollout_filter.py`, strategy=top_p,
// top_p_prob_mode=linear, filter_type=largest) with the recommended settings as defaults:
//   1. score = in-group reward std (unbiased); unless includeZero, drop groups with |score| ≤ 1e-10;
//   2. sort the rest by score, descending;
//   3. add groups while the cumulative score is below threshold = value·Σscores − selectionEps
//      (stopping at a score ≤ 0);
//   4. if the cumulative score never reaches the threshold, keep nothing: the step is skipped.
// value ≥ 1 keeps every remaining group. RAGEN stops training after 5 consecutive empty steps; that
// count is stream state and belongs to the operator that calls this.
// Deviations: sums are in float64 (RAGEN casts the scores to float32); ties in the sort keep input order
// (torch.sort is not stable by default); a group of one scores 0 (torch: NaN).
import { ConfigError } from '../../core/errors.js';
import type { Group } from '../group.js';
import { groupScores } from '../group.js';
import { inGroupStd } from '../stats/moments.js';
import type { DroppedGroup, FilterResult } from './types.js';

export interface SnrFilterOptions {
  /** Fraction p of the total std to reach (default 0.9; RAGEN-2's v2 base.yaml ships 1.0 = off). */
  value?: number;
  /** Keep zero-std groups as candidates (default false, recommended). They are never selected by the linear top-p loop anyway. */
  includeZero?: boolean;
  /** Slack subtracted from the threshold (default 0.01). */
  selectionEps?: number;
}

export const SNR_FILTER = 'ragen2_snr_top_p';

export function checkSnrFilterOptions({ value, selectionEps }: SnrFilterOptions): void {
  if (value !== undefined && !(value > 0 && Number.isFinite(value))) {
    throw new ConfigError(`SNR filter value must be > 0, e.g. 0.9 (keep groups holding 90% of the total std) or 1 to keep every non-zero group; got ${value}.`);
  }
  if (selectionEps !== undefined && !(selectionEps >= 0 && Number.isFinite(selectionEps))) {
    throw new ConfigError(`SNR filter selectionEps must be ≥ 0, e.g. 0.01; got ${selectionEps}.`);
  }
}

export function snrFilter(groups: readonly Group[], options: SnrFilterOptions = {}): FilterResult {
  checkSnrFilterOptions(options);
  const { value = 0.9, includeZero = false, selectionEps = 0.01 } = options;
  const stds = groups.map((group) => inGroupStd(groupScores(group)));
  const drops: { index: number; record: DroppedGroup }[] = [];
  const drop = (index: number, reason: string, detail: string) => drops.push({ index, record: { groupId: groups[index]!.groupId, filter: SNR_FILTER, reason, detail } });

  const candidates: number[] = [];
  groups.forEach((_, i) => {
    if (!includeZero && !(Math.abs(stds[i]!) > 1e-10)) drop(i, 'zero_std', `in-group std ${stds[i]}: no reward signal`);
    else candidates.push(i);
  });

  let selected: number[];
  if (value >= 1) selected = candidates;
  else {
    const sorted = [...candidates].sort((a, b) => stds[b]! - stds[a]!);
    const total = candidates.reduce((sum, i) => sum + stds[i]!, 0);
    const threshold = value * total - selectionEps;
    let cumulative = 0;
    let count = 0;
    for (const i of sorted) {
      if (cumulative >= threshold) break;
      if (stds[i]! <= 0) break;
      cumulative += stds[i]!;
      count++;
    }
    if (cumulative >= threshold) {
      selected = sorted.slice(0, count);
      for (const i of sorted.slice(count)) {
        drop(i, 'below_top_p', `in-group std ${stds[i]}: the ${count} groups above it already reach ${cumulative} ≥ ${value}·${total} − ${selectionEps}`);
      }
    } else {
      selected = [];
      for (const i of sorted) {
        drop(i, 'top_p_unreachable', `the groups' std sum ${cumulative} never reaches ${value}·${total} − ${selectionEps}; the step is skipped`);
      }
    }
  }
  const keep = new Set(selected);
  return {
    kept: groups.filter((_, i) => keep.has(i)),
    dropped: drops.sort((a, b) => a.index - b.index).map((d) => d.record), // in input order
  };
}

// REINFORCE++-baseline (docs/algorithms.md §1; verl `compute_reinforce_plus_plus_baseline_outcome_advantage`):
// subtract the group mean (r_i − mean_g; a group of one has mean 0), broadcast to tokens, then
// masked_whiten over the whole batch. Broadcasting a trajectory's value to its T tokens and whitening
// is the same as whitening per trajectory with weight T, which is what this does.
import { mean } from '../stats/moments.js';
import { maskedWhiten } from './whiten.js';

export interface ReinforcePlusPlusBaselineOptions {
  /**
   * Weight of each trajectory in the batch whitening, per group: verl's token count (Σ response_mask).
   * Default 1 each (every trajectory counts once).
   */
  tokenCounts?: readonly (readonly number[])[];
}

/** `groups[g][i]` is the scalar reward of trajectory i of group g; returns advantages in the same shape. */
export function reinforcePlusPlusBaselineAdvantages(groups: readonly (readonly number[])[], { tokenCounts }: ReinforcePlusPlusBaselineOptions = {}): number[][] {
  const centred = groups.map((scores) => {
    const groupMean = scores.length === 1 ? 0 : mean(scores);
    return scores.map((r) => r - groupMean);
  });
  const weights = groups.map((scores, g) => scores.map((_, i) => tokenCounts?.[g]?.[i] ?? 1));
  return maskedWhiten(centred, weights);
}

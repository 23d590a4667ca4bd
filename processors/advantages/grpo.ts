// GRPO group-relative advantage (docs/algorithms.md §1; verl `compute_grpo_outcome_advantage`):
//   A_i = (r_i − mean_g) / (std_g + ε)
// std_g is torch.std: unbiased (n − 1). A group of one gets mean 0 and std 1, so A = r (verl's choice;
// with ε it is r / (1 + 1e-6), as in verl).
import { mean, unbiasedStd } from '../stats/moments.js';

export interface GrpoOptions {
  /** ε added to the std (verl default 1e-6). */
  epsilon?: number;
  /** Divide by the std (verl `norm_adv_by_std_in_grpo`, default true); false is Dr. GRPO. */
  normalizeByStd?: boolean;
}

/** One advantage per trajectory of one group, from their scalar rewards `scores`. */
export function grpoAdvantages(scores: readonly number[], { epsilon = 1e-6, normalizeByStd = true }: GrpoOptions = {}): number[] {
  const single = scores.length === 1;
  const groupMean = single ? 0 : mean(scores);
  const groupStd = single ? 1 : unbiasedStd(scores);
  return scores.map((r) => (normalizeByStd ? (r - groupMean) / (groupStd + epsilon) : r - groupMean));
}

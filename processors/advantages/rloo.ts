// RLOO (docs/algorithms.md §1, arXiv 2402.14740; verl `compute_rloo_outcome_advantage`):
//   A_i = r_i·n/(n−1) − mean_g·n/(n−1) = r_i − mean_{j≠i} r_j
// computed in verl's form. A group of one gets A = r.
import { mean } from '../stats/moments.js';

export function rlooAdvantages(scores: readonly number[]): number[] {
  const n = scores.length;
  if (n === 1) return [scores[0]!];
  const groupMean = mean(scores);
  const scale = n / (n - 1);
  return scores.map((r) => r * scale - groupMean * scale);
}

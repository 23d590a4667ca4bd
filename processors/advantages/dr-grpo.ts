// Dr. GRPO (docs/algorithms.md §1, arXiv 2503.20783): GRPO without the std division, A_i = r_i − mean_g
// (verl `norm_adv_by_std_in_grpo=False`). A group of one keeps A = r, as in verl. The paper's other half,
// `loss_agg_mode="seq-mean-token-sum-norm"` and no KL loss, is the learner's business, not this file's.
import { grpoAdvantages } from './grpo.js';

export function drGrpoAdvantages(scores: readonly number[]): number[] {
  return grpoAdvantages(scores, { normalizeByStd: false });
}

// Trajectory-level StarPO, GRPO variant (docs/algorithms.md §4.1): one normalised scalar per trajectory R(τ),
// shared by all of its tokens. RAGEN normalises in ctx_manager._normalize_score_tensor, grouping=state,
// and then runs verl's GRPO with a unique uid per sample (a group of one: A = score), so the advantage is
// the normalised score itself:
//   mean_std  (x − mean)/(std + 1e-6), or 0 for the whole group if std ≤ 1e-6   (train_all.sh for GRPO)
//   mean      x − mean
//   asym_clip mean_std clamped to [−1, 3]
//   identity  x                                                                  (RAGEN's config default)
// std is torch.std (unbiased). The format penalty is part of x already when the reward spec has it.
import { ConfigError } from '../../core/errors.js';
import { mean, unbiasedStd } from '../stats/moments.js';

export type StarpoNormalization = 'mean_std' | 'mean' | 'asym_clip' | 'identity';

export interface StarpoOptions {
  /** Default 'mean_std', what RAGEN's GRPO runs use. */
  normalization?: StarpoNormalization;
}

function meanStd(scores: readonly number[]): number[] {
  // A group of one has a NaN torch.std, which fails `> 1e-6`, so RAGEN gives it 0 — when the batch also
  // has larger groups. Deviation: RAGEN skips normalisation entirely when *every* group has one member
  // (`len(group2index) < bsz` is false); we work one group at a time and always give a singleton 0.
  const std = unbiasedStd(scores);
  if (!(Math.abs(std) > 1e-6)) return scores.map(() => 0);
  const m = mean(scores);
  return scores.map((x) => (x - m) / (std + 1e-6));
}

export function starpoAdvantages(scores: readonly number[], { normalization = 'mean_std' }: StarpoOptions = {}): number[] {
  switch (normalization) {
    case 'mean_std':
      return meanStd(scores);
    case 'mean': {
      const m = mean(scores);
      return scores.map((x) => x - m);
    }
    case 'asym_clip':
      return meanStd(scores).map((a) => Math.min(3, Math.max(-1, a)));
    case 'identity':
      return [...scores];
    default:
      throw new ConfigError(`starpo.normalization must be 'mean_std', 'mean', 'asym_clip' or 'identity'; got ${JSON.stringify(normalization)}.`);
  }
}

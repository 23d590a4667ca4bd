// buildRewardFn: a RewardSpec → (trajectory) => { total, perStep, returns, parts }.
import type { TrajectoryEvent } from '../../schemas/index.js';
import { discountedReturns } from './discounted-returns.js';
import { termValue } from './terms.js';
import type { RewardFn, RewardResult, RewardSpec } from './types.js';
import { termName, validateRewardSpec } from './validate.js';

/**
 * Validates `spec` (ConfigError with a how-to-fix message when wrong) and returns the reward function.
 * Each term is weighted and summed per step; trajectory-level parts go on the last step, so
 * `total === Σ perStep` for any trajectory with steps. An empty trajectory has `perStep = []` and its
 * trajectory-level parts in `total` only.
 */
export function buildRewardFn(spec: RewardSpec): RewardFn {
  const { terms, gamma = 1 } = validateRewardSpec(spec);
  return (trajectory: TrajectoryEvent): RewardResult => {
    const n = trajectory.steps.length;
    const perStep = new Array<number>(n).fill(0);
    const parts: Record<string, number> = {};
    let partsSum = 0;
    for (const term of terms) {
      const weight = term.weight ?? 1;
      const value = termValue(term, trajectory);
      let part = 0;
      for (let t = 0; t < n; t++) {
        const v = weight * value.perStep[t]!;
        perStep[t]! += v;
        part += v;
      }
      const scalar = weight * value.scalar;
      if (n > 0) perStep[n - 1]! += scalar;
      part += scalar;
      parts[termName(term)] = part;
      partsSum += part;
    }
    // Summed from perStep so that total === Σ perStep exactly, not just up to rounding.
    const total = n > 0 ? perStep.reduce((sum, r) => sum + r, 0) : partsSum;
    return { total, perStep, returns: discountedReturns(perStep, gamma), parts };
  };
}

// verl's masked_whiten (docs/algorithms.md §1, REINFORCE++): (x − mean)·rsqrt(var + 1e-8) over every valid
// position of the whole batch, var the masked *unbiased* variance: masked_mean((x − mean)²)·W/(W − 1),
// W = Σ mask. The mask here is a weight: 0/1 as in verl, or a count (e.g. a turn's number of action
// tokens), which gives the same numbers as repeating that position count times.
import { TrajflowError } from '../../core/errors.js';

/** Whitened values; positions with weight 0 are returned as 0 (verl multiplies by the mask afterwards). */
export function maskedWhiten(values: readonly (readonly number[])[], weights: readonly (readonly number[])[]): number[][] {
  let w = 0;
  let sum = 0;
  values.forEach((row, i) =>
    row.forEach((x, t) => {
      const m = weights[i]![t]!;
      w += m;
      sum += m * x;
    }),
  );
  if (w === 0 || w === 1) {
    // verl's masked_var raises here too ("the sum of the mask is one/zero"): no variance can be estimated.
    throw new TrajflowError('ESTIMATOR', `batch whitening needs at least 2 valid positions, got a mask sum of ${w}.`);
  }
  const m = sum / w;
  let ss = 0;
  values.forEach((row, i) => row.forEach((x, t) => (ss += weights[i]![t]! * (x - m) * (x - m))));
  const variance = (ss / w) * (w / (w - 1));
  const scale = 1 / Math.sqrt(variance + 1e-8);
  return values.map((row, i) => row.map((x, t) => (weights[i]![t]! === 0 ? 0 : (x - m) * scale)));
}

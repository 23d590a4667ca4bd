// Mean and standard deviation as the reference implementations compute them. Every estimator and filter
// takes its statistics from here, so "which std" is decided in one place.

/** Arithmetic mean; NaN for an empty list. */
export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

/**
 * Unbiased (Bessel, n − 1) standard deviation, what `torch.std` returns by default: verl's GRPO, GiGPO,
 * StarPO-S and RAGEN-2 all use it (docs/algorithms.md §1, §3, §4.2, §5). torch returns NaN for a single value;
 * so do we, and each caller says what a singleton means for it.
 */
export function unbiasedStd(values: readonly number[]): number {
  const n = values.length;
  if (n < 2) return Number.NaN;
  const m = mean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) * (v - m);
  return Math.sqrt(ss / (n - 1));
}

/** Population (n) standard deviation, what `np.std` returns (DAPO's dynamic-sampling check, §2.2). */
export function populationStd(values: readonly number[]): number {
  const n = values.length;
  if (n === 0) return Number.NaN;
  const m = mean(values);
  let ss = 0;
  for (const v of values) ss += (v - m) * (v - m);
  return Math.sqrt(ss / n);
}

/**
 * In-group reward std used to rank groups (StarPO-S §4.2, RAGEN-2 §5): unbiased, and 0 for a group of
 * one. Deviation: torch gives NaN there and `topk` ranks NaN first, which would keep a singleton group
 * ahead of every informative one; a singleton has no in-group spread, so we score it 0.
 */
export function inGroupStd(values: readonly number[]): number {
  return values.length < 2 ? 0 : unbiasedStd(values);
}

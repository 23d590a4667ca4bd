// Medians for the benches: every figure that is repeated (rounds, trials) is reported as its median, since
// the machines are shared and one noisy neighbour moves a single measurement by tens of percent.

/** The median (mean of the two middle values for an even count); NaN for none. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The median, or null when any value is null (a figure some rounds could not measure). */
export function medianOrNull(xs: readonly (number | null)[]): number | null {
  return xs.some((x) => x === null) ? null : median(xs as number[]);
}

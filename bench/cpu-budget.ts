// The CPU budget a throughput target leaves, beside what each side of `bench processors` spent.
//
// On a machine whose cores the broker and the processors share, a rate of R steps/s leaves at most
// cores / R seconds of CPU per step for everything: the processors' process and the broker's handling of
// the steps they read and the output they write. The raw ceiling is a rate too, so "0.5 of the raw ceiling"
// is a CPU budget per step: cores × 10⁶ / (0.5 × raw) µs. A side whose own cost per step (its process plus
// the broker's, measured) is above that budget cannot reach the target on this machine, however its code
// is scheduled.

/** µs of CPU one step may cost, all threads and the broker together, to run at `ratio` × the raw ceiling on `cores` cores. */
export function cpuBudgetMicrosPerStep(cores: number, rawEventsPerSecond: number, ratio: number): number {
  if (!(cores > 0) || !(rawEventsPerSecond > 0) || !(ratio > 0)) {
    throw new RangeError(`cores, the raw rate and the ratio must be > 0 (got ${cores}, ${rawEventsPerSecond}, ${ratio})`);
  }
  return (cores * 1e6) / (ratio * rawEventsPerSecond);
}

// The comparison `trajflow bench learning` prints: each algorithm's final held-out success over its seeds, and when
// the seeds first reached the environment's target.
import { seedsToTarget, type SeedsToTarget } from './learning-summary.js';
import type { SeedResult } from './learning-seed.js';

/** `  gigpo     0.900 ± 0.050   (seeds: …)`: the mean and sample std of the seeds' final held-out success. */
export function finalsLine(algorithm: string, finals: readonly number[]): string {
  const mean = finals.reduce((a, b) => a + b, 0) / finals.length;
  const std = Math.sqrt(finals.reduce((a, b) => a + (b - mean) ** 2, 0) / Math.max(1, finals.length - 1));
  return `  ${algorithm.padEnd(9)} ${mean.toFixed(3)} ± ${std.toFixed(3)}   (seeds: ${finals.map((x) => x.toFixed(3)).join(', ')})`;
}

/** Per algorithm, over its seeds: how many reached `target` and the median env steps. */
export function targetSummary(results: readonly SeedResult[], algorithms: readonly string[], target: number): Record<string, SeedsToTarget> {
  return Object.fromEntries(
    algorithms.map((a) => [
      a,
      seedsToTarget(
        results.filter((r) => r.algorithm === a).map((r) => r.curve),
        target,
      ),
    ]),
  );
}

/** The comparison's lines after the header: the finals per algorithm, then the target summary. */
export function comparisonLines(results: readonly SeedResult[], algorithms: readonly string[], summary: Record<string, SeedsToTarget>, target: number): string[] {
  const finals = algorithms.map((algorithm) =>
    finalsLine(
      algorithm,
      results.filter((r) => r.algorithm === algorithm).map((r) => r.final),
    ),
  );
  const reached = Object.entries(summary).map(
    ([a, s]) => `  ${a}: ${s.seedsReachingTarget} of ${s.seeds} seeds reached ${target}; median env steps ${s.medianEnvStepsToTarget ?? 'never'}`,
  );
  return [...finals, ...reached];
}

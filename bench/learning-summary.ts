// When a learning curve first reached a target held-out success (pure): per seed, the env steps and wall seconds of
// the first evaluation at or above the target, and over seeds how many reached it and the median env steps and seconds. Both
// `bench learning` paths map their curves to HeldOutPoint; every figure is reported under a generic name
// (envStepsToTarget, …) and under the target's own (envStepsTo09 for 0.9, envStepsTo05 for 0.5, …).
import { median } from './median.js';

/** One held-out evaluation of a run: env steps used so far, greedy success, wall seconds since the run started (when recorded). */
export interface HeldOutPoint {
  readonly envSteps: number;
  readonly greedy: number;
  readonly seconds?: number;
}

/** When one seed's curve first reached the target (null: never, or no wall time recorded). */
export interface SeedToTarget {
  readonly target: number;
  readonly envStepsToTarget: number | null;
  readonly wallSecondsToTarget: number | null;
}

/** How the seeds did: how many reached the target and the median env steps and wall seconds (null: the median seed never reached it, or no wall time was recorded). */
export interface SeedsToTarget {
  readonly target: number;
  readonly seeds: number;
  readonly seedsReachingTarget: number;
  readonly medianEnvStepsToTarget: number | null;
  readonly medianWallSecondsToTarget: number | null;
}

/** A figure object with each `…Target` key also under the target's own name (0.9 → `…09`). */
export type WithTargetNames<T> = T & Readonly<Record<string, number | null>>;

/** The target as it appears in a key: its digits without the point (0.9 → "09", 0.75 → "075", 1 → "1"). */
export function targetKeySuffix(target: number): string {
  return String(target).replace('.', '');
}

/** `figures` plus a copy of every key ending in `Target` renamed after the target (envStepsToTarget → envStepsTo09). */
export function withTargetNames<T extends { readonly target: number }>(figures: T): WithTargetNames<T> {
  const suffix = targetKeySuffix(figures.target);
  const named = Object.entries(figures)
    .filter(([key]) => key.endsWith('Target'))
    .map(([key, value]) => [`${key.slice(0, -'Target'.length)}${suffix}`, value]);
  return { ...figures, ...Object.fromEntries(named) };
}

/** The first evaluation of `curve` whose greedy success is ≥ `target` (undefined: none). */
export function firstReaching(curve: readonly HeldOutPoint[], target: number): HeldOutPoint | undefined {
  return curve.find((point) => point.greedy >= target);
}

/** One seed: the env steps and wall seconds at its first evaluation ≥ `target`. */
export function seedToTarget(curve: readonly HeldOutPoint[], target: number): WithTargetNames<SeedToTarget> {
  const reached = firstReaching(curve, target);
  return withTargetNames({ target, envStepsToTarget: reached?.envSteps ?? null, wallSecondsToTarget: reached?.seconds ?? null });
}

/** Over seeds (one curve each): how many reached `target`, and the median env steps with a seed that never did counted as +∞. */
export function seedsToTarget(curves: readonly (readonly HeldOutPoint[])[], target: number): WithTargetNames<SeedsToTarget> {
  const reached = curves.map((curve) => firstReaching(curve, target));
  const steps = reached.map((point) => point?.envSteps ?? Number.POSITIVE_INFINITY);
  const seconds = reached.map((point) => (point ? (point.seconds ?? Number.NaN) : Number.POSITIVE_INFINITY));
  const finite = (x: number) => (Number.isFinite(x) ? x : null);
  return withTargetNames({
    target,
    seeds: curves.length,
    seedsReachingTarget: steps.filter(Number.isFinite).length,
    medianEnvStepsToTarget: finite(median(steps)),
    medianWallSecondsToTarget: seconds.some(Number.isNaN) ? null : finite(median(seconds)),
  });
}

// Which policy version samples which iteration, when the actors run ahead of the learner (pure).
//
// With `maxStaleness` K ≥ 1 an episode of iteration i is sampled with EXACTLY the version trained on
// max(0, i − K) rollout batches ("trained on" = L of staleness-gate.ts: metrics.iteration + 1), not with whatever
// version happens to have loaded: the run is then the same whatever the timing, and the learner (which
// trains batch i at version i) sees a staleness of exactly K. The staleness gate already holds iteration i
// until a version with L ≥ i − K has loaded, so the version wanted has arrived by then; the actors keep
// the few versions later iterations may still ask for and let the older ones go.
//
// A version trained on exactly the target may legitimately not exist (a batch every filter dropped never
// becomes an update, so L jumps past it): then the newest version trained on fewer is the one, as long as
// its successor is held too (the jump is known). When the versions in between were never seen (the actors
// joined a running learner and read only its newest version) or failed to load, the nearest later held
// version samples instead: the best that can be had, and the case a fresh run never meets.
//
// K = 0 and "no bound" (null) keep the rule from before: the newest loaded version (with K = 0 the gate
// makes it the one trained on i batches).

/** A version the actors hold: its number and the rollout batches it was trained on (L). */
export interface HeldVersion {
  readonly version: number;
  readonly trainedOn: number;
}

/** Whether the actors sample behind the newest version (K ≥ 1) and so must keep older versions. */
export function samplesBehind(maxStaleness: number | null): boolean {
  return maxStaleness !== null && maxStaleness > 0;
}

/** The batches the policy of `iteration` must be trained on, max(0, iteration − K); null: the newest version. */
export function samplingTarget(iteration: number, maxStaleness: number | null): number | null {
  return samplesBehind(maxStaleness) ? Math.max(0, iteration - (maxStaleness as number)) : null;
}

/** The held version (ascending by version number) that samples for `target`, by the rule above. */
export function chooseVersion<T extends HeldVersion>(held: readonly T[], target: number | null): T {
  const newest = held.at(-1);
  if (newest === undefined) throw new RangeError('chooseVersion: no version is held');
  if (target === null) return newest;
  const below = lastIndexTrainedOnAtMost(held, target);
  if (below >= 0 && isExact(held, below, target)) return held[below]!;
  return held.find((h) => h.trainedOn > target) ?? newest;
}

/** The held versions no target from `target` on can choose (targets only grow as iterations go by). */
export function versionsToEvict<T extends HeldVersion>(held: readonly T[], target: number | null): T[] {
  if (held.length === 0) return [];
  const kept = chooseVersion(held, target);
  return held.filter((h) => h.version < kept.version);
}

/** Index of the newest held version trained on at most `target` batches (−1: none). */
function lastIndexTrainedOnAtMost(held: readonly HeldVersion[], target: number): number {
  for (let i = held.length - 1; i >= 0; i--) if (held[i]!.trainedOn <= target) return i;
  return -1;
}

/** Whether held[index], the newest trained on at most `target` batches, is known to be the one: exactly on it, or its successor (trained on more) is held. */
function isExact(held: readonly HeldVersion[], index: number, target: number): boolean {
  const candidate = held[index]!;
  if (candidate.trainedOn === target) return true;
  const next = held[index + 1];
  return next !== undefined && next.version === candidate.version + 1;
}

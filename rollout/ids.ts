// Deterministic identities and seeds of the actors' work, all derived from the run id, the config and
// an episode's ordinal, so a rerun of the same run (same runId, seedBase, P, G) produces the same ids,
// seeds and actions (and consumers that dedupe by eventId drop a replayed run's duplicates).
//
// The work is an endless sequence of episodes in iteration-major order: ordinal k is rollout
// k mod G of the run's group floor(k / G); iteration i holds groups i·P … i·P + P − 1. Every episode of
// a group resets with the group's seed (seedBase + group index): the G rollouts share one task.

export interface EpisodeCoordinates {
  /** Position in the run's sequence of episodes (0-based). */
  readonly ordinal: number;
  /** The batch this episode belongs to (see staleness-gate.ts). */
  readonly iteration: number;
  /** The run's group index (0-based, over all iterations). */
  readonly groupIndex: number;
  /** Rollout index within the group, 0 … G − 1. */
  readonly rollout: number;
}

export function coordinatesOf(ordinal: number, groups: number, groupSize: number): EpisodeCoordinates {
  const groupIndex = Math.floor(ordinal / groupSize);
  return { ordinal, iteration: Math.floor(groupIndex / groups), groupIndex, rollout: ordinal % groupSize };
}

/** The first ordinal of an iteration. */
export function firstOrdinalOf(iteration: number, groups: number, groupSize: number): number {
  return iteration * groups * groupSize;
}

/** The Kafka key of every step of the group, e.g. "run-7/g12". */
export function groupIdOf(runId: string, groupIndex: number): string {
  return `${runId}/g${groupIndex}`;
}

/** Unique within the run, e.g. "run-7/g12/e3". */
export function episodeIdOf(groupId: string, rollout: number): string {
  return `${groupId}/e${rollout}`;
}

/** Unique within the run, e.g. "run-7/g12/e3/s0". */
export function stepEventIdOf(episodeId: string, stepIndex: number): string {
  return `${episodeId}/s${stepIndex}`;
}

/** The environment seed every rollout of the group resets with. */
export function groupSeedOf(seedBase: number, groupIndex: number): number {
  return seedBase + groupIndex;
}

/**
 * The key an episode's sampling seeds derive from: its task seed, iteration and rollout — not its ids, so the
 * same run seed gives the same rollouts whatever the run is called (the in-process loop and `trajflow train` alike).
 */
export function samplingKeyOf(episode: { readonly groupSeed: number; readonly iteration: number; readonly rollout: number }): string {
  return `${episode.groupSeed}:${episode.iteration}:${episode.rollout}`;
}

/** The policy's sampling seed for one turn of one episode: a 32-bit FNV-1a hash of "key#turn" (key: samplingKeyOf, or any episode id). */
export function turnSeedOf(key: string, turn: number): number {
  const text = `${key}#${turn}`;
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

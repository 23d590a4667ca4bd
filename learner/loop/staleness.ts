// Staleness: how many versions the policy that sampled a sample is behind the learner. A sample past
// `--max-staleness` is dropped and counted, never trained silently; replayed samples keep their own rule (the
// decoupled objective, no bound). docs/concepts/versions-and-staleness.md has the contract.
import type { TrainingSampleEvent } from '../../schemas/index.js';
import { REPLAY_ESTIMATOR_PREFIX } from '../replay/marker.js';

type Versioned = Pick<TrainingSampleEvent, 'policyVersion' | 'estimator'>;

/** Whether `trajflow replay` made the sample (its estimator carries the replay marker). */
export function isReplayed(sample: Pick<TrainingSampleEvent, 'estimator'>): boolean {
  return sample.estimator.startsWith(REPLAY_ESTIMATOR_PREFIX);
}

/** The samples within the bound (in their order) and how many were dropped past it; `maxStaleness` null: no bound. */
export function dropStale<S extends Versioned>(samples: readonly S[], learnerVersion: number, maxStaleness: number | null): { kept: S[]; dropped: number } {
  const kept: S[] = [];
  let dropped = 0;
  for (const sample of samples) {
    if (maxStaleness !== null && learnerVersion - sample.policyVersion > maxStaleness && !isReplayed(sample)) dropped++;
    else kept.push(sample);
  }
  return { kept, dropped };
}

/**
 * The staleness an update reports: over its live samples (all of them when every one was replayed). A replayed
 * sample may even be newer than this learner (another run's version numbers): clamped at 0.
 */
export function stalenessOf(samples: readonly Versioned[], learnerVersion: number): { mean: number; max: number } {
  const live = samples.filter((s) => !isReplayed(s));
  const staleness = (live.length > 0 ? live : samples).map((s) => Math.max(0, learnerVersion - s.policyVersion));
  return { mean: staleness.reduce((a, b) => a + b, 0) / staleness.length, max: Math.max(...staleness) };
}

/** The log line of a unit's drop: which batch, sampled with which version, against which learner version and bound. */
export function staleDropLine(
  dropped: number,
  unit: { readonly batchId: string | null; readonly iteration: number },
  sampledWith: readonly number[],
  learnerVersion: number,
  maxStaleness: number | null,
): string {
  const oldest = Math.min(...sampledWith);
  return `learner: dropped ${dropped} stale samples of ${unit.batchId ?? 'a batch by token budget'} (iteration ${unit.iteration}): sampled with v${oldest}, learner at v${learnerVersion}, bound ${maxStaleness}`;
}

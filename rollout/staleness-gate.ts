// The staleness bound between actors and learner.
//
// DEFINITION. The actors produce their episodes in iterations (batches) of P groups × G rollouts,
// numbered 0, 1, 2, … The learner trains each iteration's rollout batch in one update, in iteration order
// (learner/loop/batch-assembly.ts), and every policy version it publishes names the highest iteration it
// was trained on (metrics.iteration), so L = that iteration + 1 says "batches 0 … L − 1 are trained on"
// (iterationsTrainedBy; a batch that every filter dropped never reaches the learner and counts as trained).
// An episode of iteration i may START only when
//
//     i − L ≤ maxStaleness
//
// i.e. actors run at most maxStaleness iterations ahead of the learner's last published version.
// maxStaleness = 0 is synchronous on-policy training (batch i waits for version i, trained on every
// earlier batch); maxStaleness = 1 lets the actors sample batch i + 1 while the learner trains on
// batch i (one-step off-policy). The behaviour policy of batch i is exactly the version trained on
// max(0, i − maxStaleness) batches (behaviour-version.ts; the actors keep the few versions that may still
// be asked for), so a learner training batch i at version i sees staleness (learner version − behaviour
// version) of exactly maxStaleness once i ≥ maxStaleness, whatever the timing: the run is reproducible.
// null means no bound (runs without a learner: baselines, benches); the newest loaded version samples.
// Before any version event of the run, L = 0 (the initial policy every actor starts with).
//
// A blocked actor waits for the version stream (it keeps consuming) and resumes once a version makes
// the rule hold; stop() releases the waiters.

import type { PolicyVersionEvent } from '../schemas/index.js';

/**
 * L of a policy version: its metrics.iteration + 1, or — for a learner that names no iterations (samples
 * without a rollout batch) — its version number, as one update per batch would give.
 */
export function iterationsTrainedBy(event: Pick<PolicyVersionEvent, 'version' | 'metrics'>): number {
  const iteration = event.metrics.iteration;
  return iteration !== undefined && Number.isInteger(iteration) && iteration >= 0 ? iteration + 1 : event.version;
}

/** The rule above; pure. */
export function mayStartIteration(iteration: number, learnerVersion: number, maxStaleness: number | null): boolean {
  return maxStaleness === null || iteration - learnerVersion <= maxStaleness;
}

/** The lowest learner version that lets `iteration` start (for progress messages). */
export function versionNeededFor(iteration: number, maxStaleness: number): number {
  return iteration - maxStaleness;
}

export class StalenessGate {
  private version: number;
  private waiters: Array<{ iteration: number; wake: () => void }> = [];

  constructor(
    readonly maxStaleness: number | null,
    initialLearnerVersion = 0,
  ) {
    this.version = initialLearnerVersion;
  }

  /** The learner's last published version seen so far. */
  get learnerVersion(): number {
    return this.version;
  }

  /** How many callers are waiting in whenAllowed(). */
  get waiting(): number {
    return this.waiters.length;
  }

  allows(iteration: number): boolean {
    return mayStartIteration(iteration, this.version, this.maxStaleness);
  }

  /** Records a published version (versions only go up: an older one is ignored) and wakes who may go. */
  observe(version: number): void {
    if (version <= this.version) return;
    this.version = version;
    const still: typeof this.waiters = [];
    for (const waiter of this.waiters) {
      if (this.allows(waiter.iteration)) waiter.wake();
      else still.push(waiter);
    }
    this.waiters = still;
  }

  /** Resolves true once `iteration` may start, or false when `signal` aborts first. */
  whenAllowed(iteration: number, signal: AbortSignal): Promise<boolean> {
    if (this.allows(iteration)) return Promise.resolve(true);
    if (signal.aborted) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const waiter = {
        iteration,
        wake: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(true);
        },
      };
      const onAbort = () => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }
}

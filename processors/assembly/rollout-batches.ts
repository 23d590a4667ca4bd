// Rollout batches: finished groups are collected into the batch that filters and batch-level estimators
// see together, and that the learner trains in one update (docs: versions follow data).
//
// A group that names its actors' iteration and the iteration's group count (the steps' info.iteration and
// info.batchGroups, copied into the trajectory metrics) joins the batch of that iteration: the batch closes
// as soon as it holds all the iteration's groups, so one batch is exactly one iteration, as in RAGEN, however
// the iterations' groups interleave on the way (several iterations in flight when the actors run ahead of
// the learner). A group that names none joins the one unnamed batch, which closes when it holds `maxGroups`.
// An iteration's batch also closes once `iterationIdleMs` pass without a new group of it: a group that never
// comes must not hold it (after a processors restart, the groups of an iteration already written are not read
// again, so the batch of the rest can never fill); a late group then opens a batch of its own. The groups of
// one iteration start together and end within an episode's length of each other, so in a healthy run the
// batch fills long before. The unnamed batch closes `windowMs` after its first group.
//
// Why not RxJS bufferTime: its windows run back to back from subscription whatever arrives, so a burst of
// groups is cut wherever a window happens to end, and an idle pipeline still wakes every window. Opening at
// the first group means a group waits at most windowMs.
// On completion the open batches are emitted (oldest first); on error they are dropped (their steps were
// not acknowledged).
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { ConfigError } from '../../core/errors.js';

/** Which iteration a group belongs to and how many groups that iteration has. */
export interface BatchKey {
  readonly key: string;
  readonly groups: number;
}

export interface RolloutBatchOptions<G> {
  /** Longest a batch stays open after its first group (ms, > 0). */
  readonly windowMs: number;
  /** The unnamed batch closes as soon as it holds this many groups (≥ 1). */
  readonly maxGroups: number;
  /** An iteration's batch closes after this long without a new group of it (ms, > 0). Default 10,000. */
  readonly iterationIdleMs?: number;
  /** The group's iteration, or null for a group that names none. Default: none does. */
  readonly keyOf?: (group: G) => BatchKey | null;
  readonly scheduler?: SchedulerLike;
}

interface OpenBatch<G> {
  readonly groups: G[];
  readonly size: number;
  timer: Subscription | null;
}

export function rolloutBatches<G>({
  windowMs,
  maxGroups,
  iterationIdleMs = 10_000,
  keyOf = () => null,
  scheduler = asyncScheduler,
}: RolloutBatchOptions<G>): OperatorFunction<G, G[]> {
  if (!(windowMs > 0)) throw new ConfigError(`batchWindowMs must be > 0 (milliseconds), got ${windowMs}`);
  if (!(iterationIdleMs > 0)) throw new ConfigError(`iterationIdleMs must be > 0 (milliseconds), got ${iterationIdleMs}`);
  if (!(Number.isInteger(maxGroups) && maxGroups >= 1)) throw new ConfigError(`maxBatchGroups must be an integer ≥ 1, got ${maxGroups}`);
  const UNNAMED = '\u0000unnamed';
  return (source) =>
    new Observable<G[]>((subscriber) => {
      // Insertion order is opening order: on completion the oldest batch goes first.
      const open = new Map<string, OpenBatch<G>>();
      const close = (key: string) => {
        const batch = open.get(key);
        if (!batch) return;
        open.delete(key);
        batch.timer?.unsubscribe();
        subscriber.next(batch.groups);
      };
      const subscription = source.subscribe({
        next: (group) => {
          const named = keyOf(group);
          const key = named === null ? UNNAMED : named.key;
          let batch = open.get(key);
          if (!batch) {
            batch = { groups: [], size: named === null ? maxGroups : named.groups, timer: null };
            open.set(key, batch);
            if (named === null) batch.timer = scheduler.schedule(() => close(key), windowMs);
          }
          batch.groups.push(group);
          if (batch.groups.length >= batch.size) return close(key);
          if (named !== null) {
            // Idle timeout: restarted by every group of the iteration.
            batch.timer?.unsubscribe();
            batch.timer = scheduler.schedule(() => close(key), iterationIdleMs);
          }
        },
        error: (error) => subscriber.error(error),
        complete: () => {
          for (const key of [...open.keys()]) close(key);
          subscriber.complete();
        },
      });
      return () => {
        for (const batch of open.values()) batch.timer?.unsubscribe();
        subscription.unsubscribe();
      };
    });
}

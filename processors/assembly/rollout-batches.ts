// Rollout batches: finished groups are collected into the batch that filters and batch-level estimators
// see together. A batch opens with its first group and closes when it holds `maxGroups` groups, or
// `windowMs` after that first group, whichever comes first; the next group opens the next batch.
//
// Why not RxJS bufferTime: its windows run back to back from subscription whatever arrives, so a burst of
// groups (one actors' iteration) is cut wherever a window happens to end, and an idle pipeline still
// wakes every window. Opening at the first group means a group waits at most windowMs, and with
// maxGroups set to the actors' groups per iteration (trajflow train does) a batch is exactly one
// iteration's groups, as in RAGEN, as soon as the last of them is in.
// On completion the open batch is emitted; on error it is dropped (its steps were not acknowledged).
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import { ConfigError } from '../../core/errors.js';

export interface RolloutBatchOptions {
  /** Longest a batch stays open after its first group (ms, > 0). */
  readonly windowMs: number;
  /** A batch closes as soon as it holds this many groups (≥ 1). */
  readonly maxGroups: number;
  readonly scheduler?: SchedulerLike;
}

export function rolloutBatches<G>({ windowMs, maxGroups, scheduler = asyncScheduler }: RolloutBatchOptions): OperatorFunction<G, G[]> {
  if (!(windowMs > 0)) throw new ConfigError(`batchWindowMs must be > 0 (milliseconds), got ${windowMs}`);
  if (!(Number.isInteger(maxGroups) && maxGroups >= 1)) throw new ConfigError(`maxBatchGroups must be an integer ≥ 1, got ${maxGroups}`);
  return (source) =>
    new Observable<G[]>((subscriber) => {
      let open: G[] = [];
      let timer: Subscription | null = null;
      const close = () => {
        timer?.unsubscribe();
        timer = null;
        const batch = open;
        open = [];
        if (batch.length > 0) subscriber.next(batch);
      };
      const subscription = source.subscribe({
        next: (group) => {
          open.push(group);
          if (open.length >= maxGroups) close();
          else if (!timer) timer = scheduler.schedule(close, windowMs);
        },
        error: (error) => subscriber.error(error),
        complete: () => {
          close();
          subscriber.complete();
        },
      });
      return () => {
        timer?.unsubscribe();
        subscription.unsubscribe();
      };
    });
}

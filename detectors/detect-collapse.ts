// The detectors as RxJS operators.
//
// detectCollapse(config): a merged stream of learner steps, rollout-statistics batches and trajectories (of
// any number of runs) → CollapseAlertEvents.
// detectCollapseFrom(config, inputOf): the same over any items (Kafka envelopes), emitting one Detection per
// item — its alerts, possibly none — so the caller can acknowledge the item once its alerts are written.
//
// Timing: an item's Detection is emitted synchronously, except when it raised an alert that is
// attributed by event time (rollout batches, trajectory windows; engine.ts) and no learner step of the run
// later than the alert has been seen yet. Such a Detection is held until that learner step arrives, or for
// `attributionHoldMs` (then it goes out with the attribution known at that moment), or until the source
// completes. Held Detections do not delay others. The hold makes the learner step in the alert independent
// of how the learner-step and rollout topics interleave when they are read.
import { Observable, asyncScheduler, mergeMap, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { CollapseAlertEvent } from '../schemas/index.js';
import { alertEvent } from './alert-event.js';
import type { DetectorsConfig } from './config.js';
import { CollapseEngine, type DetectorInput, type RaisedAlert } from './engine.js';

export interface DetectCollapseOptions {
  /** The detector state to use (e.g. rebuilt from a replay); default a new engine for `config`. */
  readonly engine?: CollapseEngine;
  /** Timers of the attribution hold (a TestScheduler in marble tests). */
  readonly scheduler?: SchedulerLike;
  /**
   * On completion, score the open trajectory windows and emit their alerts (as a Detection without a
   * source). Default true; a Kafka consumer that will resume later passes false.
   */
  readonly flushOnComplete?: boolean;
}

export interface Detection<T> {
  /** The item that raised the alerts; null for alerts of windows closed at completion. */
  readonly source: T | null;
  readonly alerts: CollapseAlertEvent[];
}

interface Held<T> {
  readonly source: T;
  readonly raised: RaisedAlert[];
  timer: Subscription | null;
}

export function detectCollapseFrom<T>(config: DetectorsConfig, inputOf: (item: T) => DetectorInput | null, options: DetectCollapseOptions = {}): OperatorFunction<T, Detection<T>> {
  const { scheduler = asyncScheduler, flushOnComplete = true } = options;
  const holdMs = config.attributionHoldMs;
  return (source) =>
    new Observable<Detection<T>>((subscriber) => {
      const engine = options.engine ?? new CollapseEngine(config);
      const held = new Set<Held<T>>();
      const finalize = (raised: readonly RaisedAlert[]): CollapseAlertEvent[] => raised.map((r) => alertEvent(r, r.attribution ?? engine.attribute(r.runId, r.eventTimeMs)));
      const settled = (raised: readonly RaisedAlert[]): boolean => raised.every((r) => r.attribution !== null || engine.attributionFinal(r.runId, r.eventTimeMs));
      const release = (h: Held<T>): void => {
        held.delete(h);
        h.timer?.unsubscribe();
        subscriber.next({ source: h.source, alerts: finalize(h.raised) });
      };

      const subscription = source.subscribe({
        next: (item) => {
          let input: DetectorInput | null;
          let raised: RaisedAlert[];
          try {
            input = inputOf(item);
            raised = input === null ? [] : engine.observe(input);
          } catch (error) {
            subscriber.error(error);
            return;
          }
          // A learner step may settle the attribution of held alerts: release those first, in arrival order.
          if (input?.type === 'learner_step' && held.size > 0) {
            for (const h of [...held]) if (settled(h.raised)) release(h);
          }
          if (holdMs === 0 || settled(raised)) {
            subscriber.next({ source: item, alerts: finalize(raised) });
            return;
          }
          const h: Held<T> = { source: item, raised, timer: null };
          held.add(h);
          h.timer = scheduler.schedule(() => release(h), holdMs);
        },
        error: (error) => subscriber.error(error),
        complete: () => {
          for (const h of [...held]) release(h);
          if (flushOnComplete) {
            const raised = engine.flush();
            if (raised.length > 0) subscriber.next({ source: null, alerts: finalize(raised) });
          }
          subscriber.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        for (const h of held) h.timer?.unsubscribe();
        held.clear();
      };
    });
}

/** Learner steps, rollout batches and trajectories in; collapse alerts out. */
export function detectCollapse(config: DetectorsConfig, options: DetectCollapseOptions = {}): OperatorFunction<DetectorInput, CollapseAlertEvent> {
  return (source) =>
    source.pipe(
      detectCollapseFrom(config, (input: DetectorInput) => input, options),
      mergeMap((detection) => detection.alerts),
    );
}

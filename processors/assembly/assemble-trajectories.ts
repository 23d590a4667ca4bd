// assembleTrajectories: step events in, one trajectory per episode out.
//
// Steps of an episode may arrive out of order, twice, or never. The operator keeps each open episode's
// steps (OpenEpisode), emits the trajectory as soon as the episode is whole, and closes what stalls:
// an episode with no new step for `idleTimeoutMs` is emitted as 'incomplete' (with its gaps counted),
// and beyond `maxOpenEpisodes` the one idle longest is closed the same way. Incomplete trajectories are
// flagged (`complete: false`) so later stages do not train on them unless told to.
//
// At-least-once: the operator holds steps for a while, so it must not let the caller ack them early.
// Each output carries every source item the episode consumed (`sources`, duplicates included); the
// caller acks them after it has produced whatever it makes of the trajectory. Items that belong to no
// output (steps of an episode already closed) go to `onDiscard` so the caller can ack those too.
//
// Time comes from `scheduler` (asyncScheduler by default), so marble tests drive the timeouts.
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { StepEvent, TrajectoryEvent } from '../../schemas/index.js';
import { ConfigError } from '../../core/errors.js';
import type { GroupOpenEpisodes } from './group-open-episodes.js';
import { OpenEpisode, type EpisodeCloseReason } from './open-episode.js';
import { RecentlyClosed, scopedKey } from './recently-closed.js';

export interface AssembledTrajectory<T> {
  readonly trajectory: TrajectoryEvent;
  /** Every source item consumed for the episode, in arrival order (duplicates included): ack them once this output is handled. */
  readonly sources: readonly T[];
  /** Why the episode was closed. */
  readonly closedBy: EpisodeCloseReason;
  /** False when the outcome is 'incomplete' (a step missing, or the episode never ended): not trained on by default. */
  readonly complete: boolean;
}

/** Counters of the assembler; the operator increments them, the caller reads them (e.g. for rollout stats). */
export interface AssemblyStats {
  /** Items received. */
  steps: number;
  /** Steps dropped as a repeat of one already held (same eventId, or same episode and stepIndex). */
  duplicates: number;
  /** Steps for an episode that was already closed (sent to onDiscard). */
  lateSteps: number;
  /** Steps with an index after the episode's terminated/truncated step (left out of the trajectory). */
  stepsAfterEnd: number;
  /** Trajectories emitted, and by outcome. */
  trajectories: number;
  terminated: number;
  truncated: number;
  incomplete: number;
  /** Episodes closed by the idle timeout. */
  idleClosed: number;
  /** Episodes closed to respect maxOpenEpisodes. */
  evicted: number;
  /** Episodes closed because the source completed. */
  flushedOnComplete: number;
  /** Missing step indices over all emitted trajectories. */
  gaps: number;
  /** Episodes open now (a gauge). */
  openEpisodes: number;
}

export function createAssemblyStats(): AssemblyStats {
  return {
    steps: 0,
    duplicates: 0,
    lateSteps: 0,
    stepsAfterEnd: 0,
    trajectories: 0,
    terminated: 0,
    truncated: 0,
    incomplete: 0,
    idleClosed: 0,
    evicted: 0,
    flushedOnComplete: 0,
    gaps: 0,
    openEpisodes: 0,
  };
}

export type DiscardReason = 'late';

export interface AssembleTrajectoriesOptions<T> {
  /** Reads the step event out of an item (e.g. `(e) => e.value` for an Envelope<StepEvent>). */
  readonly stepOf?: (item: T) => StepEvent;
  /** An episode with no new step for this long is closed as 'incomplete'. Default 120 000 ms. */
  readonly idleTimeoutMs?: number;
  /** At most this many open episodes; opening one more first closes the one idle longest. Default 10 000. */
  readonly maxOpenEpisodes?: number;
  /** How many closed episodes are remembered to recognise late steps. Default 10 000. */
  readonly rememberClosedEpisodes?: number;
  /** On source completion, emit the open episodes as 'incomplete' (closedBy 'source-completed'), or drop them unacked. Default true. */
  readonly flushOnComplete?: boolean;
  /** Items that belong to no output; the caller acks them. */
  readonly onDiscard?: (item: T, reason: DiscardReason) => void;
  /** Counters to increment; pass one from createAssemblyStats() to read them. */
  readonly stats?: AssemblyStats;
  /** Counts each group's open episodes, for assembleGroups' idle close (`hasOpenEpisodes`). */
  readonly openEpisodesByGroup?: GroupOpenEpisodes;
  readonly scheduler?: SchedulerLike;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_OPEN_EPISODES = 10_000;

/** Over plain step events. */
export function assembleTrajectories(options?: AssembleTrajectoriesOptions<StepEvent>): OperatorFunction<StepEvent, AssembledTrajectory<StepEvent>>;
/** Over any item that carries a step event (an Envelope<StepEvent>, ...): `stepOf` reads it. */
export function assembleTrajectories<T>(options: AssembleTrajectoriesOptions<T> & { readonly stepOf: (item: T) => StepEvent }): OperatorFunction<T, AssembledTrajectory<T>>;
export function assembleTrajectories<T>(options: AssembleTrajectoriesOptions<T> = {}): OperatorFunction<T, AssembledTrajectory<T>> {
  const {
    stepOf = (item: T) => item as unknown as StepEvent,
    idleTimeoutMs = DEFAULT_IDLE_TIMEOUT_MS,
    maxOpenEpisodes = DEFAULT_MAX_OPEN_EPISODES,
    rememberClosedEpisodes = 10_000,
    flushOnComplete = true,
    onDiscard,
    stats = createAssemblyStats(),
    openEpisodesByGroup,
    scheduler = asyncScheduler,
  } = options;
  if (!(idleTimeoutMs > 0)) throw new ConfigError(`assembleTrajectories: idleTimeoutMs must be > 0, got ${idleTimeoutMs}.`);
  if (!Number.isInteger(maxOpenEpisodes) || maxOpenEpisodes < 1) {
    throw new ConfigError(`assembleTrajectories: maxOpenEpisodes must be an integer >= 1, got ${maxOpenEpisodes}.`);
  }

  return (source) =>
    new Observable<AssembledTrajectory<T>>((subscriber) => {
      // Insertion order is activity order: an accepted step moves its episode to the end, so the
      // first entry is always the one idle longest (the eviction victim).
      const open = new Map<string, OpenEpisode<T>>();
      const timers = new Map<string, Subscription>();
      const closed = new RecentlyClosed(rememberClosedEpisodes);
      // Each open episode's group, as it was counted in openEpisodesByGroup (only when one is given).
      const groupOf = new Map<string, { readonly runId: string; readonly groupId: string }>();

      const close = (key: string, episode: OpenEpisode<T>, reason: EpisodeCloseReason): void => {
        open.delete(key);
        const group = groupOf.get(key);
        if (group !== undefined) {
          groupOf.delete(key);
          openEpisodesByGroup?.closed(group.runId, group.groupId);
        }
        timers.get(key)?.unsubscribe();
        timers.delete(key);
        closed.add(key);
        stats.openEpisodes = open.size;
        const { trajectory, stepsAfterEnd } = episode.close();
        stats.stepsAfterEnd += stepsAfterEnd;
        stats.trajectories++;
        stats.gaps += trajectory.gapCount;
        if (trajectory.outcome === 'terminated') stats.terminated++;
        else if (trajectory.outcome === 'truncated') stats.truncated++;
        else stats.incomplete++;
        if (reason === 'idle') stats.idleClosed++;
        else if (reason === 'evicted') stats.evicted++;
        else if (reason === 'source-completed') stats.flushedOnComplete++;
        subscriber.next({ trajectory, sources: episode.sources, closedBy: reason, complete: trajectory.outcome !== 'incomplete' });
      };

      // One timer per episode, not re-armed per step: when it fires it checks how long the episode
      // has really been idle and sleeps for the rest. A step then costs a field write, not a
      // clearTimeout/setTimeout pair.
      const watch = (key: string, episode: OpenEpisode<T>, delay: number): void => {
        timers.set(
          key,
          scheduler.schedule(() => {
            try {
              const idleFor = scheduler.now() - episode.lastActivity;
              if (idleFor >= idleTimeoutMs) close(key, episode, 'idle');
              else watch(key, episode, idleTimeoutMs - idleFor);
            } catch (error) {
              subscriber.error(error); // not into the scheduler, which would throw it out of the event loop
            }
          }, delay),
        );
      };

      const subscription = source.subscribe({
        next: (item) => {
          if (subscriber.closed) return; // after an error raised below, while a synchronous source keeps emitting
          try {
            stats.steps++;
            const step = stepOf(item);
            const key = scopedKey(step.runId, step.episodeId);
            let episode = open.get(key);
            if (episode === undefined) {
              if (closed.has(key)) {
                stats.lateSteps++;
                onDiscard?.(item, 'late');
                return;
              }
              if (open.size >= maxOpenEpisodes) {
                const [oldestKey, oldest] = open.entries().next().value as [string, OpenEpisode<T>];
                close(oldestKey, oldest, 'evicted');
              }
              episode = new OpenEpisode<T>(scheduler.now());
              open.set(key, episode);
              if (openEpisodesByGroup !== undefined) {
                groupOf.set(key, { runId: step.runId, groupId: step.groupId });
                openEpisodesByGroup.opened(step.runId, step.groupId);
              }
              stats.openEpisodes = open.size;
              watch(key, episode, idleTimeoutMs);
            }
            if (episode.add(item, step, scheduler.now()) === 'duplicate') {
              stats.duplicates++;
              return;
            }
            open.delete(key);
            open.set(key, episode);
            if (episode.whole) close(key, episode, 'ended');
          } catch (error) {
            // A throwing stepOf or onDiscard is a bug upstream: report it on the error channel.
            subscriber.error(error);
          }
        },
        error: (error) => subscriber.error(error),
        complete: () => {
          if (flushOnComplete) for (const [key, episode] of [...open]) close(key, episode, 'source-completed');
          subscriber.complete();
        },
      });

      return () => {
        subscription.unsubscribe();
        for (const timer of timers.values()) timer.unsubscribe();
        timers.clear();
        for (const group of groupOf.values()) openEpisodesByGroup?.closed(group.runId, group.groupId);
        groupOf.clear();
        open.clear();
        stats.openEpisodes = 0;
      };
    });
}

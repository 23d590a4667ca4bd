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
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import type { StepEvent } from '../../schemas/index.js';
import { ConfigError } from '../../core/errors.js';
import {
  countEpisodeEffect,
  createAssemblyStats,
  createEpisodeAssembly,
  episodeAssemblyStep,
  type AssembledTrajectory,
  type AssemblyStats,
  type EpisodeAssemblyRules,
  type EpisodeEffect,
  type EpisodeEvent,
} from './episode-assembly.js';
import type { GroupOpenEpisodes } from './group-open-episodes.js';

export { createAssemblyStats, type AssembledTrajectory, type AssemblyStats } from './episode-assembly.js';

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
  const { rules, shell } = configOf(options);
  return (source) => new Observable<AssembledTrajectory<T>>((subscriber) => runEpisodeAssembly(source, subscriber, rules, shell));
}

/** What the operator itself does with the options: read steps, time, call back, count. */
interface ShellConfig<T> {
  readonly stepOf: (item: T) => StepEvent;
  readonly onDiscard: ((item: T, reason: DiscardReason) => void) | undefined;
  readonly stats: AssemblyStats;
  readonly openEpisodesByGroup: GroupOpenEpisodes | undefined;
  readonly scheduler: SchedulerLike;
}

/** The options with their defaults, checked (ConfigError saying what would work). */
function configOf<T>(options: AssembleTrajectoriesOptions<T>): { rules: EpisodeAssemblyRules; shell: ShellConfig<T> } {
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
  return {
    rules: { idleTimeoutMs, maxOpenEpisodes, rememberClosedEpisodes, flushOnComplete, countGroups: openEpisodesByGroup !== undefined },
    shell: { stepOf, onDiscard, stats, openEpisodesByGroup, scheduler },
  };
}

/** One subscription: feeds the events to the episode assembly and carries out its effects; returns the teardown. */
function runEpisodeAssembly<T>(source: Observable<T>, subscriber: Subscriber<AssembledTrajectory<T>>, rules: EpisodeAssemblyRules, shell: ShellConfig<T>): () => void {
  const { stepOf, onDiscard, stats, openEpisodesByGroup, scheduler } = shell;
  const state = createEpisodeAssembly<T>(rules);
  const watches = new Map<string, Subscription>();
  const run = (event: EpisodeEvent<T>): void => {
    for (const effect of episodeAssemblyStep(state, event)) carryOut(effect);
  };
  // A failure (a throwing stepOf or onDiscard is a bug upstream) goes to the error channel, not into the
  // scheduler, which would throw it out of the event loop.
  const guarded = (eventOf: () => EpisodeEvent<T>): void => {
    try {
      run(eventOf());
    } catch (error) {
      subscriber.error(error);
    }
  };
  const carryOut = (effect: EpisodeEffect<T>): void => {
    countEpisodeEffect(stats, effect);
    if (effect.kind === 'opened') {
      if (effect.group !== undefined) openEpisodesByGroup?.opened(effect.group.runId, effect.group.groupId);
    } else if (effect.kind === 'watch') {
      const { key } = effect;
      watches.set(
        key,
        scheduler.schedule(() => guarded(() => ({ kind: 'watch', key, now: scheduler.now() })), effect.delay),
      );
    } else if (effect.kind === 'late') onDiscard?.(effect.item, 'late');
    else if (effect.kind === 'closed') {
      if (effect.group !== undefined) openEpisodesByGroup?.closed(effect.group.runId, effect.group.groupId);
      watches.get(effect.key)?.unsubscribe();
      watches.delete(effect.key);
    } else if (effect.kind === 'emit') subscriber.next(effect.assembled);
  };
  const subscription = source.subscribe({
    next: (item) => {
      if (subscriber.closed) return; // after an error raised here, while a synchronous source keeps emitting
      guarded(() => {
        stats.steps++;
        return { kind: 'step', item, step: stepOf(item), now: scheduler.now() };
      });
    },
    error: (error) => subscriber.error(error),
    complete: () => {
      run({ kind: 'complete' });
      subscriber.complete();
    },
  });
  return () => {
    subscription.unsubscribe();
    for (const watch of watches.values()) watch.unsubscribe();
    watches.clear();
    for (const group of state.groupOf.values()) openEpisodesByGroup?.closed(group.runId, group.groupId);
    state.groupOf.clear();
    state.open.clear();
    stats.openEpisodes = 0;
  };
}

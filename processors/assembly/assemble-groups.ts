// assembleGroups: trajectories in, groups of trajectories that started from the same task out.
//
// Group-relative advantages (GRPO, RLOO, GiGPO ...) need the whole group, so trajectories with the
// same (runId, groupId) are held until the group's expected size has arrived or `groupTimeoutMs` has
// passed since its first trajectory. A group closed by the timeout (or by the bound on open groups, or
// by source completion) is emitted if it has at least `minGroupSize` members, otherwise dropped.
//
// Expected size: the announced one when a member's trajectory carries `metrics.groupSize` (the assembler
// copies it from the steps' `info.groupSize`, the contract's way for a producer to say how many episodes
// it started for a task; the processors dead-letter a step whose size is malformed or disagrees with its
// group's, group-sizes.ts); the first member that carries one decides. A group that announces none
// expects `groupSize`, but with `idleCloseMs` set it also closes `idleCloseMs` after its latest trajectory
// when none of its episodes is still open (`hasOpenEpisodes`): a producer that does not announce its group
// size waits seconds, not the group timeout (docs/design/group-completion.md).
//
// Incomplete trajectories (outcome 'incomplete') are dropped on arrival unless `includeIncomplete`,
// but they still count as arrived: the group does not wait out its timeout for an episode that will
// never come back complete. Every drop goes to `onDrop` with its reason and items, so the caller can
// record it and ack the items' sources (at-least-once: nothing is acked here).
//
// Trajectories arriving for a group already closed are dropped as 'late' (remembered for the last
// `rememberClosedGroups` groups); a second trajectory of an episode already in an open group is
// dropped as 'duplicate'.
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscriber, type Subscription } from 'rxjs';
import type { TrajectoryEvent } from '../../schemas/index.js';
import { ConfigError } from '../../core/errors.js';
import type { AssembledTrajectory } from './assemble-trajectories.js';
import {
  countGroupEffect,
  createGroupAssembly,
  createGroupAssemblyStats,
  groupAssemblyStep,
  type GroupAssemblyRules,
  type GroupAssemblyStats,
  type GroupDrop,
  type GroupEffect,
  type GroupEvent,
  type TrajectoryGroup,
} from './group-assembly.js';

export {
  createGroupAssemblyStats,
  type GroupAssemblyStats,
  type GroupCloseReason,
  type GroupDrop,
  type GroupDropReason,
  type TrajectoryGroup,
} from './group-assembly.js';

export interface AssembleGroupsOptions<I> {
  /** Reads the trajectory out of an item; defaults to `item.trajectory` (an AssembledTrajectory). */
  readonly trajectoryOf?: (item: I) => TrajectoryEvent;
  /** Expected trajectories per group when none announces `metrics.groupSize`. Default 16 (RAGEN v1 group_size). */
  readonly groupSize?: number;
  /** A group closed before it is full is emitted only with at least this many members (capped at its expected size). Default 2. */
  readonly minGroupSize?: number;
  /** A group still not full this long after its first trajectory is closed. Default 300 000 ms. */
  readonly groupTimeoutMs?: number;
  /**
   * A group that announces no size closes this long after its latest trajectory, unless one of its episodes
   * is still open then (it closes after that one's trajectory). Default: never (only full or timed out).
   */
  readonly idleCloseMs?: number;
  /** Whether an episode of the group is still being assembled (assembleTrajectories' openEpisodes). Default: none is. */
  readonly hasOpenEpisodes?: (runId: string, groupId: string) => boolean;
  /** Keep incomplete trajectories as members instead of dropping them. Default false. */
  readonly includeIncomplete?: boolean;
  /** At most this many open groups; opening one more first closes the oldest, as by its timeout. Default 10 000. */
  readonly maxOpenGroups?: number;
  /** How many closed groups are remembered to recognise late trajectories. Default 10 000. */
  readonly rememberClosedGroups?: number;
  /** On source completion, close the open groups (emitted or dropped as for a timeout), or drop them silently, unacked, so a restart re-assembles them. Default true. */
  readonly flushOnComplete?: boolean;
  /** Every drop, with its reason; the caller records it and acks the items. */
  readonly onDrop?: (drop: GroupDrop<I>) => void;
  readonly stats?: GroupAssemblyStats;
  readonly scheduler?: SchedulerLike;
}

export const DEFAULT_GROUP_SIZE = 16;
export const DEFAULT_MIN_GROUP_SIZE = 2;
export const DEFAULT_GROUP_TIMEOUT_MS = 300_000;

/** Over the assembler's output. */
export function assembleGroups<T>(options?: AssembleGroupsOptions<AssembledTrajectory<T>>): OperatorFunction<AssembledTrajectory<T>, TrajectoryGroup<AssembledTrajectory<T>>>;
/** Over any item that carries a trajectory (plain TrajectoryEvents: `trajectoryOf: (t) => t`). */
export function assembleGroups<I>(options: AssembleGroupsOptions<I> & { readonly trajectoryOf: (item: I) => TrajectoryEvent }): OperatorFunction<I, TrajectoryGroup<I>>;
export function assembleGroups<I>(options: AssembleGroupsOptions<I> = {}): OperatorFunction<I, TrajectoryGroup<I>> {
  const { rules, shell } = configOf(options);
  return (source) => new Observable<TrajectoryGroup<I>>((subscriber) => runGroupAssembly(source, subscriber, rules, shell));
}

/** What the operator itself does with the options: read trajectories, time, call back, count. */
interface ShellConfig<I> {
  readonly trajectoryOf: (item: I) => TrajectoryEvent;
  readonly groupTimeoutMs: number;
  readonly idleCloseMs: number | undefined;
  readonly hasOpenEpisodes: (runId: string, groupId: string) => boolean;
  readonly onDrop: ((drop: GroupDrop<I>) => void) | undefined;
  readonly stats: GroupAssemblyStats;
  readonly scheduler: SchedulerLike;
}

/** The options with their defaults, checked (ConfigError saying what would work). */
function configOf<I>(options: AssembleGroupsOptions<I>): { rules: GroupAssemblyRules; shell: ShellConfig<I> } {
  const {
    trajectoryOf = (item: I) => (item as unknown as AssembledTrajectory<unknown>).trajectory,
    groupSize = DEFAULT_GROUP_SIZE,
    minGroupSize = DEFAULT_MIN_GROUP_SIZE,
    groupTimeoutMs = DEFAULT_GROUP_TIMEOUT_MS,
    idleCloseMs,
    hasOpenEpisodes = () => false,
    includeIncomplete = false,
    maxOpenGroups = 10_000,
    rememberClosedGroups = 10_000,
    flushOnComplete = true,
    onDrop,
    stats = createGroupAssemblyStats(),
    scheduler = asyncScheduler,
  } = options;
  if (!Number.isInteger(groupSize) || groupSize < 1) throw new ConfigError(`assembleGroups: groupSize must be an integer >= 1, got ${groupSize}.`);
  if (!Number.isInteger(minGroupSize) || minGroupSize < 1 || minGroupSize > groupSize) {
    throw new ConfigError(`assembleGroups: minGroupSize must be an integer in [1, groupSize = ${groupSize}], got ${minGroupSize}.`);
  }
  if (!(groupTimeoutMs > 0)) throw new ConfigError(`assembleGroups: groupTimeoutMs must be > 0, got ${groupTimeoutMs}.`);
  if (idleCloseMs !== undefined && !(idleCloseMs > 0)) throw new ConfigError(`assembleGroups: idleCloseMs must be > 0 (milliseconds), got ${idleCloseMs}.`);
  if (!Number.isInteger(maxOpenGroups) || maxOpenGroups < 1) {
    throw new ConfigError(`assembleGroups: maxOpenGroups must be an integer >= 1, got ${maxOpenGroups}.`);
  }
  return {
    rules: { groupSize, minGroupSize, idleCloseMs, includeIncomplete, maxOpenGroups, rememberClosedGroups, flushOnComplete },
    shell: { trajectoryOf, groupTimeoutMs, idleCloseMs, hasOpenEpisodes, onDrop, stats, scheduler },
  };
}

/** One subscription: feeds the events to the group assembly and carries out its effects; returns the teardown. */
function runGroupAssembly<I>(source: Observable<I>, subscriber: Subscriber<TrajectoryGroup<I>>, rules: GroupAssemblyRules, shell: ShellConfig<I>): () => void {
  const { trajectoryOf, groupTimeoutMs, idleCloseMs, hasOpenEpisodes, onDrop, stats, scheduler } = shell;
  const state = createGroupAssembly<I>(rules);
  const timers = new GroupTimers(scheduler);
  const run = (event: GroupEvent<I>): void => {
    for (const effect of groupAssemblyStep(state, event)) carryOut(effect);
  };
  // A failure goes to the error channel (not into the scheduler, which would throw it out of the event loop).
  const guarded = (eventOf: () => GroupEvent<I>): void => {
    try {
      run(eventOf());
    } catch (error) {
      subscriber.error(error);
    }
  };
  const carryOut = (effect: GroupEffect<I>): void => {
    countGroupEffect(stats, effect);
    if (effect.kind === 'opened') {
      const { key } = effect;
      timers.armTimeout(key, groupTimeoutMs, () => guarded(() => ({ kind: 'timeout', key })));
    } else if (effect.kind === 'closed') timers.cancel(effect.key);
    else if (effect.kind === 'emit') subscriber.next(effect.group);
    else if (effect.kind === 'drop') onDrop?.(effect.drop);
    else if (effect.kind === 'disarm-idle') timers.disarmIdle(effect.key);
    else {
      const { key, runId, groupId } = effect;
      timers.armIdle(key, idleCloseMs, () => guarded(() => ({ kind: 'idle', key, episodesOpen: hasOpenEpisodes(runId, groupId) })));
    }
  };
  const subscription = source.subscribe({
    next: (item) => {
      if (subscriber.closed) return;
      guarded(() => {
        stats.trajectories++;
        return { kind: 'trajectory', item, trajectory: trajectoryOf(item) };
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
    timers.clear();
    state.open.clear();
    stats.openGroups = 0;
  };
}

/** Each open group's timeout and idle close, by group key. */
class GroupTimers {
  private readonly timeouts = new Map<string, Subscription>();
  private readonly idleCloses = new Map<string, Subscription>();

  constructor(private readonly scheduler: SchedulerLike) {}

  armTimeout(key: string, delay: number, fire: () => void): void {
    this.timeouts.set(key, this.scheduler.schedule(fire, delay));
  }

  /** Replaces the group's idle close; a fired one is forgotten before `fire` runs. */
  armIdle(key: string, delay: number | undefined, fire: () => void): void {
    this.disarmIdle(key);
    const fired = (): void => {
      this.idleCloses.delete(key);
      fire();
    };
    this.idleCloses.set(key, this.scheduler.schedule(fired, delay));
  }

  disarmIdle(key: string): void {
    this.idleCloses.get(key)?.unsubscribe();
    this.idleCloses.delete(key);
  }

  cancel(key: string): void {
    this.timeouts.get(key)?.unsubscribe();
    this.timeouts.delete(key);
    this.disarmIdle(key);
  }

  clear(): void {
    for (const timer of [...this.timeouts.values(), ...this.idleCloses.values()]) timer.unsubscribe();
    this.timeouts.clear();
    this.idleCloses.clear();
  }
}

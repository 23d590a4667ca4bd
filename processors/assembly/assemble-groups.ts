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
import { Observable, asyncScheduler, type OperatorFunction, type SchedulerLike, type Subscription } from 'rxjs';
import type { TrajectoryEvent } from '../../schemas/index.js';
import { ConfigError } from '../../core/errors.js';
import type { AssembledTrajectory } from './assemble-trajectories.js';
import { RecentlyClosed, scopedKey } from './recently-closed.js';

/**
 * Why a group was closed: 'full' when every expected trajectory has arrived (some may have been left out
 * as incomplete, see `partial`), 'idle' (no size announced, `idleCloseMs` after its last episode ended
 * with none open), 'timeout', 'evicted' (bound on open groups), 'source-completed'.
 */
export type GroupCloseReason = 'full' | 'idle' | 'timeout' | 'evicted' | 'source-completed';

export interface TrajectoryGroup<I> {
  readonly runId: string;
  readonly groupId: string;
  /** The group's trajectories (as the items that carried them), in arrival order. */
  readonly members: readonly I[];
  /** Size the group was waiting for. */
  readonly expectedSize: number;
  /** Fewer members than expectedSize (a late partial group, or incomplete members left out). */
  readonly partial: boolean;
  readonly closedBy: GroupCloseReason;
}

export type GroupDropReason =
  /** The group closed with fewer than minGroupSize members; `items` are its members. */
  | 'too-small'
  /** An incomplete trajectory, left out of its group. */
  | 'incomplete'
  /** A trajectory for a group already closed. */
  | 'late'
  /** A second trajectory of an episode already in the open group. */
  | 'duplicate';

export interface GroupDrop<I> {
  readonly reason: GroupDropReason;
  readonly runId: string;
  readonly groupId: string;
  readonly items: readonly I[];
  /** Human-readable explanation, e.g. 'group closed by timeout with 1 of 8 (minimum 2)'. */
  readonly detail: string;
}

export interface GroupAssemblyStats {
  trajectories: number;
  /** Groups emitted, and those among them that were partial. */
  groups: number;
  partialGroups: number;
  /** Groups dropped as too small. */
  droppedGroups: number;
  /** Trajectories dropped, by reason (a too-small group's members count here too). */
  dropped: Record<GroupDropReason, number>;
  /** Groups open now (a gauge). */
  openGroups: number;
  /** Groups closed (emitted or dropped as too small), by why they closed. */
  closedBy: Record<GroupCloseReason, number>;
}

export function createGroupAssemblyStats(): GroupAssemblyStats {
  return {
    trajectories: 0,
    groups: 0,
    partialGroups: 0,
    droppedGroups: 0,
    openGroups: 0,
    dropped: { 'too-small': 0, incomplete: 0, late: 0, duplicate: 0 },
    closedBy: { full: 0, idle: 0, timeout: 0, evicted: 0, 'source-completed': 0 },
  };
}

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

interface OpenGroup<I> {
  readonly runId: string;
  readonly groupId: string;
  readonly members: I[];
  readonly episodes: Set<string>;
  /** Members plus incomplete trajectories left out: what has come back of the group so far. */
  arrived: number;
  announcedSize: number | undefined;
  timer: Subscription | undefined;
  idleTimer: Subscription | undefined;
}

/** Over the assembler's output. */
export function assembleGroups<T>(options?: AssembleGroupsOptions<AssembledTrajectory<T>>): OperatorFunction<AssembledTrajectory<T>, TrajectoryGroup<AssembledTrajectory<T>>>;
/** Over any item that carries a trajectory (plain TrajectoryEvents: `trajectoryOf: (t) => t`). */
export function assembleGroups<I>(options: AssembleGroupsOptions<I> & { readonly trajectoryOf: (item: I) => TrajectoryEvent }): OperatorFunction<I, TrajectoryGroup<I>>;
export function assembleGroups<I>(options: AssembleGroupsOptions<I> = {}): OperatorFunction<I, TrajectoryGroup<I>> {
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

  const drop = (reason: GroupDropReason, runId: string, groupId: string, items: readonly I[], detail: string) => {
    stats.dropped[reason] += items.length;
    onDrop?.({ reason, runId, groupId, items, detail });
  };

  return (source) =>
    new Observable<TrajectoryGroup<I>>((subscriber) => {
      // Insertion order is opening order: the first entry is the oldest group (the eviction victim).
      const open = new Map<string, OpenGroup<I>>();
      const closed = new RecentlyClosed(rememberClosedGroups);

      const expectedSizeOf = (group: OpenGroup<I>) => group.announcedSize ?? groupSize;

      const close = (key: string, group: OpenGroup<I>, reason: GroupCloseReason): void => {
        open.delete(key);
        group.timer?.unsubscribe();
        group.idleTimer?.unsubscribe();
        closed.add(key);
        stats.openGroups = open.size;
        stats.closedBy[reason]++;
        const expectedSize = expectedSizeOf(group);
        const partial = group.members.length < expectedSize;
        const minimum = Math.min(minGroupSize, expectedSize);
        if (group.members.length < minimum) {
          stats.droppedGroups++;
          drop('too-small', group.runId, group.groupId, group.members, `group closed (${reason}) with ${group.members.length} of ${expectedSize} (minimum ${minimum})`);
          return;
        }
        stats.groups++;
        if (partial) stats.partialGroups++;
        subscriber.next({ runId: group.runId, groupId: group.groupId, members: group.members, expectedSize, partial, closedBy: reason });
      };

      // (Re)arms the idle close of a group that announces no size; at its end, a group with an episode
      // still open stays open: that episode's trajectory arms it again.
      const armIdleClose = (key: string, group: OpenGroup<I>): void => {
        group.idleTimer?.unsubscribe();
        group.idleTimer = undefined;
        if (idleCloseMs === undefined || group.announcedSize !== undefined) return;
        group.idleTimer = scheduler.schedule(() => {
          try {
            group.idleTimer = undefined;
            if (open.get(key) === group && !hasOpenEpisodes(group.runId, group.groupId)) close(key, group, 'idle');
          } catch (error) {
            subscriber.error(error);
          }
        }, idleCloseMs);
      };

      const subscription = source.subscribe({
        next: (item) => {
          if (subscriber.closed) return;
          try {
            stats.trajectories++;
            const trajectory = trajectoryOf(item);
            const { runId, groupId, episodeId } = trajectory;
            const key = scopedKey(runId, groupId);
            let group = open.get(key);
            if (group === undefined) {
              if (closed.has(key)) {
                drop('late', runId, groupId, [item], `episode ${episodeId} arrived after its group closed`);
                return;
              }
              if (open.size >= maxOpenGroups) {
                const [oldestKey, oldest] = open.entries().next().value as [string, OpenGroup<I>];
                close(oldestKey, oldest, 'evicted');
              }
              group = { runId, groupId, members: [], episodes: new Set(), arrived: 0, announcedSize: undefined, timer: undefined, idleTimer: undefined };
              const opened = group;
              open.set(key, opened);
              stats.openGroups = open.size;
              opened.timer = scheduler.schedule(() => {
                try {
                  close(key, opened, 'timeout');
                } catch (error) {
                  subscriber.error(error); // not into the scheduler, which would throw it out of the event loop
                }
              }, groupTimeoutMs);
            }
            if (group.episodes.has(episodeId)) {
              drop('duplicate', runId, groupId, [item], `episode ${episodeId} is already in the group`);
              return;
            }
            group.episodes.add(episodeId);
            group.arrived++;
            const announced = trajectory.metrics.groupSize;
            if (group.announcedSize === undefined && announced !== undefined && Number.isInteger(announced) && announced >= 1) {
              group.announcedSize = announced;
            }
            if (trajectory.outcome === 'incomplete' && !includeIncomplete) {
              drop('incomplete', runId, groupId, [item], `episode ${episodeId} is incomplete (gapCount ${trajectory.gapCount})`);
            } else {
              group.members.push(item);
            }
            if (group.arrived >= expectedSizeOf(group)) close(key, group, 'full');
            else armIdleClose(key, group);
          } catch (error) {
            subscriber.error(error);
          }
        },
        error: (error) => subscriber.error(error),
        complete: () => {
          if (flushOnComplete) for (const [key, group] of [...open]) close(key, group, 'source-completed');
          subscriber.complete();
        },
      });

      return () => {
        subscription.unsubscribe();
        for (const group of open.values()) {
          group.timer?.unsubscribe();
          group.idleTimer?.unsubscribe();
        }
        open.clear();
        stats.openGroups = 0;
      };
    });
}

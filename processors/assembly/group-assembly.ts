// The group assembler's decisions, without RxJS or a clock: which open group a trajectory joins, when a
// group closes, and whether a closed group is emitted or dropped. The operator (assemble-groups.ts) feeds it
// events — a trajectory, a group's timeout or idle close firing, the source completing — and carries out the
// effects it returns, in order: emit a group, report a drop, arm or cancel a timer.
//
// The state is updated in place: it holds every open group and the memory of closed ones, and one event
// touches one or two of them, so copying it per event would cost what the assembler is there to save.
import type { TrajectoryEvent } from '../../schemas/index.js';
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

/** What the decisions depend on, defaults applied and checked (assemble-groups.ts). */
export interface GroupAssemblyRules {
  /** Expected size of a group that announces none. */
  readonly groupSize: number;
  readonly minGroupSize: number;
  /** Set: a group that announces no size closes this long after its latest trajectory (the operator's timer). */
  readonly idleCloseMs: number | undefined;
  readonly includeIncomplete: boolean;
  readonly maxOpenGroups: number;
  readonly rememberClosedGroups: number;
  readonly flushOnComplete: boolean;
}

interface OpenGroup<I> {
  readonly runId: string;
  readonly groupId: string;
  readonly members: I[];
  readonly episodes: Set<string>;
  /** Members plus incomplete trajectories left out: what has come back of the group so far. */
  arrived: number;
  announcedSize: number | undefined;
}

export interface GroupAssembly<I> {
  readonly rules: GroupAssemblyRules;
  /** Open groups by scopedKey(runId, groupId); insertion order is opening order, so the first is the oldest. */
  readonly open: Map<string, OpenGroup<I>>;
  readonly closed: RecentlyClosed;
}

export type GroupEvent<I> =
  | { readonly kind: 'trajectory'; readonly item: I; readonly trajectory: TrajectoryEvent }
  /** The group's timeout, armed when it opened, fired. */
  | { readonly kind: 'timeout'; readonly key: string }
  /** The group's idle close fired; `episodesOpen`: one of its episodes is still being assembled. */
  | { readonly kind: 'idle'; readonly key: string; readonly episodesOpen: boolean }
  | { readonly kind: 'complete' };

export type GroupEffect<I> =
  /** A group opened: arm its timeout. */
  | { readonly kind: 'opened'; readonly key: string; readonly openGroups: number }
  /** A group closed: cancel its timers. Its 'emit' or its 'too-small' drop follows. */
  | { readonly kind: 'closed'; readonly key: string; readonly reason: GroupCloseReason; readonly openGroups: number }
  | { readonly kind: 'emit'; readonly group: TrajectoryGroup<I> }
  | { readonly kind: 'drop'; readonly drop: GroupDrop<I> }
  /** (Re)arm the idle close of a group that announces no size, replacing the one armed before. */
  | { readonly kind: 'arm-idle'; readonly key: string; readonly runId: string; readonly groupId: string }
  /** The group announced its size: it has no idle close. */
  | { readonly kind: 'disarm-idle'; readonly key: string };

export function createGroupAssembly<I>(rules: GroupAssemblyRules): GroupAssembly<I> {
  return { rules, open: new Map(), closed: new RecentlyClosed(rules.rememberClosedGroups) };
}

/** Applies one event to `state` and returns what the operator must do, in order. */
export function groupAssemblyStep<I>(state: GroupAssembly<I>, event: GroupEvent<I>): GroupEffect<I>[] {
  const effects: GroupEffect<I>[] = [];
  if (event.kind === 'trajectory') addTrajectory(state, event.item, event.trajectory, effects);
  else if (event.kind === 'complete') {
    if (state.rules.flushOnComplete) for (const [key, group] of [...state.open]) close(state, key, group, 'source-completed', effects);
  } else {
    const group = state.open.get(event.key);
    if (group !== undefined && (event.kind === 'timeout' || !event.episodesOpen)) close(state, event.key, group, event.kind, effects);
  }
  return effects;
}

/** Counts an effect in the operator's stats, before the operator carries it out. */
export function countGroupEffect<I>(stats: GroupAssemblyStats, effect: GroupEffect<I>): void {
  if (effect.kind === 'opened') stats.openGroups = effect.openGroups;
  else if (effect.kind === 'closed') {
    stats.openGroups = effect.openGroups;
    stats.closedBy[effect.reason]++;
  } else if (effect.kind === 'drop') {
    if (effect.drop.reason === 'too-small') stats.droppedGroups++;
    stats.dropped[effect.drop.reason] += effect.drop.items.length;
  } else if (effect.kind === 'emit') {
    stats.groups++;
    if (effect.group.partial) stats.partialGroups++;
  }
}

function addTrajectory<I>(state: GroupAssembly<I>, item: I, trajectory: TrajectoryEvent, effects: GroupEffect<I>[]): void {
  const { runId, groupId, episodeId } = trajectory;
  const key = scopedKey(runId, groupId);
  let group = state.open.get(key);
  if (group === undefined) {
    if (state.closed.has(key)) {
      effects.push(dropOf('late', runId, groupId, [item], `episode ${episodeId} arrived after its group closed`));
      return;
    }
    group = openGroup(state, key, runId, groupId, effects);
  }
  if (group.episodes.has(episodeId)) {
    effects.push(dropOf('duplicate', runId, groupId, [item], `episode ${episodeId} is already in the group`));
    return;
  }
  group.episodes.add(episodeId);
  group.arrived++;
  const announced = trajectory.metrics.groupSize;
  if (group.announcedSize === undefined && announced !== undefined && Number.isInteger(announced) && announced >= 1) group.announcedSize = announced;
  if (trajectory.outcome === 'incomplete' && !state.rules.includeIncomplete) {
    effects.push(dropOf('incomplete', runId, groupId, [item], `episode ${episodeId} is incomplete (gapCount ${trajectory.gapCount})`));
  } else {
    group.members.push(item);
  }
  if (group.arrived >= expectedSizeOf(state, group)) close(state, key, group, 'full', effects);
  else if (state.rules.idleCloseMs !== undefined) {
    effects.push(group.announcedSize === undefined ? { kind: 'arm-idle', key, runId, groupId } : { kind: 'disarm-idle', key });
  }
}

/** Opens a group, first closing the oldest one when the bound on open groups is reached. */
function openGroup<I>(state: GroupAssembly<I>, key: string, runId: string, groupId: string, effects: GroupEffect<I>[]): OpenGroup<I> {
  if (state.open.size >= state.rules.maxOpenGroups) {
    const [oldestKey, oldest] = state.open.entries().next().value as [string, OpenGroup<I>];
    close(state, oldestKey, oldest, 'evicted', effects);
  }
  const group: OpenGroup<I> = { runId, groupId, members: [], episodes: new Set(), arrived: 0, announcedSize: undefined };
  state.open.set(key, group);
  effects.push({ kind: 'opened', key, openGroups: state.open.size });
  return group;
}

function close<I>(state: GroupAssembly<I>, key: string, group: OpenGroup<I>, reason: GroupCloseReason, effects: GroupEffect<I>[]): void {
  state.open.delete(key);
  state.closed.add(key);
  effects.push({ kind: 'closed', key, reason, openGroups: state.open.size });
  const expectedSize = expectedSizeOf(state, group);
  const partial = group.members.length < expectedSize;
  const minimum = Math.min(state.rules.minGroupSize, expectedSize);
  if (group.members.length < minimum) {
    const detail = `group closed (${reason}) with ${group.members.length} of ${expectedSize} (minimum ${minimum})`;
    effects.push(dropOf('too-small', group.runId, group.groupId, group.members, detail));
    return;
  }
  effects.push({ kind: 'emit', group: { runId: group.runId, groupId: group.groupId, members: group.members, expectedSize, partial, closedBy: reason } });
}

function expectedSizeOf<I>(state: GroupAssembly<I>, group: OpenGroup<I>): number {
  return group.announcedSize ?? state.rules.groupSize;
}

function dropOf<I>(reason: GroupDropReason, runId: string, groupId: string, items: readonly I[], detail: string): GroupEffect<I> {
  return { kind: 'drop', drop: { reason, runId, groupId, items, detail } };
}

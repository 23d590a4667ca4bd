// The trajectory assembler's decisions, without RxJS or a clock: which open episode a step joins, when an
// episode closes, and what is emitted or discarded. The operator (assemble-trajectories.ts) feeds it events —
// a step, an episode's idle watch firing, the source completing — with the time they happened at, and carries
// out the effects it returns, in order: emit a trajectory, discard a late step, arm or cancel a watch.
//
// The state is updated in place: it holds every open episode and the memory of closed ones, and a step
// touches one or two of them, so copying it per step would cost more than assembling the step.
import type { StepEvent, TrajectoryEvent } from '../../schemas/index.js';
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

/** What the decisions depend on, defaults applied and checked (assemble-trajectories.ts). */
export interface EpisodeAssemblyRules {
  readonly idleTimeoutMs: number;
  readonly maxOpenEpisodes: number;
  readonly rememberClosedEpisodes: number;
  readonly flushOnComplete: boolean;
  /** Say which group each episode that opens or closes belongs to (for a count of open episodes by group). */
  readonly countGroups: boolean;
}

interface EpisodeGroup {
  readonly runId: string;
  readonly groupId: string;
}

export interface EpisodeAssembly<T> {
  readonly rules: EpisodeAssemblyRules;
  /**
   * Open episodes by scopedKey(runId, episodeId). Insertion order is activity order: an accepted step moves
   * its episode to the end, so the first entry is always the one idle longest (the eviction victim).
   */
  readonly open: Map<string, OpenEpisode<T>>;
  readonly closed: RecentlyClosed;
  /** Each open episode's group, when the rules count groups. */
  readonly groupOf: Map<string, EpisodeGroup>;
}

export type EpisodeEvent<T> =
  | { readonly kind: 'step'; readonly item: T; readonly step: StepEvent; readonly now: number }
  /** The episode's idle watch fired at `now`. */
  | { readonly kind: 'watch'; readonly key: string; readonly now: number }
  | { readonly kind: 'complete' };

export type EpisodeEffect<T> =
  /** An episode opened; `group` when the rules count groups. */
  | { readonly kind: 'opened'; readonly group: EpisodeGroup | undefined; readonly openEpisodes: number }
  /** (Re)arm the episode's idle watch to fire after `delay`. */
  | { readonly kind: 'watch'; readonly key: string; readonly delay: number }
  /** A step repeated one already held: dropped (its item stays among the episode's sources). */
  | { readonly kind: 'duplicate' }
  /** A step of an episode already closed: it belongs to no output. */
  | { readonly kind: 'late'; readonly item: T }
  /** An episode closed: cancel its watch. Its 'emit' follows. */
  | { readonly kind: 'closed'; readonly key: string; readonly group: EpisodeGroup | undefined; readonly openEpisodes: number }
  | { readonly kind: 'emit'; readonly assembled: AssembledTrajectory<T>; readonly stepsAfterEnd: number };

export function createEpisodeAssembly<T>(rules: EpisodeAssemblyRules): EpisodeAssembly<T> {
  return { rules, open: new Map(), closed: new RecentlyClosed(rules.rememberClosedEpisodes), groupOf: new Map() };
}

/** Applies one event to `state` and returns what the operator must do, in order. */
export function episodeAssemblyStep<T>(state: EpisodeAssembly<T>, event: EpisodeEvent<T>): EpisodeEffect<T>[] {
  const effects: EpisodeEffect<T>[] = [];
  if (event.kind === 'step') addStep(state, event.item, event.step, event.now, effects);
  else if (event.kind === 'watch') {
    // One watch per episode, not re-armed per step: when it fires it checks how long the episode has really
    // been idle and sleeps for the rest. A step then costs a field write, not a cancelled and a new timer.
    const episode = state.open.get(event.key);
    if (episode !== undefined) {
      const idleFor = event.now - episode.lastActivity;
      if (idleFor >= state.rules.idleTimeoutMs) close(state, event.key, episode, 'idle', effects);
      else effects.push({ kind: 'watch', key: event.key, delay: state.rules.idleTimeoutMs - idleFor });
    }
  } else if (state.rules.flushOnComplete) {
    for (const [key, episode] of [...state.open]) close(state, key, episode, 'source-completed', effects);
  }
  return effects;
}

/** Counts an effect in the operator's stats, before the operator carries it out. */
export function countEpisodeEffect<T>(stats: AssemblyStats, effect: EpisodeEffect<T>): void {
  if (effect.kind === 'opened' || effect.kind === 'closed') stats.openEpisodes = effect.openEpisodes;
  else if (effect.kind === 'duplicate') stats.duplicates++;
  else if (effect.kind === 'late') stats.lateSteps++;
  else if (effect.kind === 'emit') {
    const { trajectory, closedBy } = effect.assembled;
    stats.stepsAfterEnd += effect.stepsAfterEnd;
    stats.trajectories++;
    stats.gaps += trajectory.gapCount;
    if (trajectory.outcome === 'terminated') stats.terminated++;
    else if (trajectory.outcome === 'truncated') stats.truncated++;
    else stats.incomplete++;
    if (closedBy === 'idle') stats.idleClosed++;
    else if (closedBy === 'evicted') stats.evicted++;
    else if (closedBy === 'source-completed') stats.flushedOnComplete++;
  }
}

function addStep<T>(state: EpisodeAssembly<T>, item: T, step: StepEvent, now: number, effects: EpisodeEffect<T>[]): void {
  const key = scopedKey(step.runId, step.episodeId);
  let episode = state.open.get(key);
  if (episode === undefined) {
    if (state.closed.has(key)) {
      effects.push({ kind: 'late', item });
      return;
    }
    episode = openEpisode(state, key, step, now, effects);
  }
  if (episode.add(item, step, now) === 'duplicate') {
    effects.push({ kind: 'duplicate' });
    return;
  }
  state.open.delete(key);
  state.open.set(key, episode);
  if (episode.whole) close(state, key, episode, 'ended', effects);
}

/** Opens an episode, first closing the one idle longest when the bound on open episodes is reached. */
function openEpisode<T>(state: EpisodeAssembly<T>, key: string, step: StepEvent, now: number, effects: EpisodeEffect<T>[]): OpenEpisode<T> {
  if (state.open.size >= state.rules.maxOpenEpisodes) {
    const [oldestKey, oldest] = state.open.entries().next().value as [string, OpenEpisode<T>];
    close(state, oldestKey, oldest, 'evicted', effects);
  }
  const episode = new OpenEpisode<T>(now);
  state.open.set(key, episode);
  let group: EpisodeGroup | undefined;
  if (state.rules.countGroups) {
    group = { runId: step.runId, groupId: step.groupId };
    state.groupOf.set(key, group);
  }
  effects.push({ kind: 'opened', group, openEpisodes: state.open.size });
  effects.push({ kind: 'watch', key, delay: state.rules.idleTimeoutMs });
  return episode;
}

function close<T>(state: EpisodeAssembly<T>, key: string, episode: OpenEpisode<T>, reason: EpisodeCloseReason, effects: EpisodeEffect<T>[]): void {
  state.open.delete(key);
  const group = state.groupOf.get(key);
  if (group !== undefined) state.groupOf.delete(key);
  state.closed.add(key);
  effects.push({ kind: 'closed', key, group, openEpisodes: state.open.size });
  const { trajectory, stepsAfterEnd } = episode.close();
  const assembled = { trajectory, sources: episode.sources, closedBy: reason, complete: trajectory.outcome !== 'incomplete' };
  effects.push({ kind: 'emit', assembled, stepsAfterEnd });
}

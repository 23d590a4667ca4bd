// The gateway's book of open episodes: the next turn index of each, the token context an OpenAI-compatible
// upstream has seen so far (to record only each turn's new prompt tokens), its last turn (a retry of it makes
// that turn an orphan), the answer ids of its turns, when it was last active, and the episodes already ended (a
// call or a finish for one of them is a 409). Pure: time comes in as arguments.
//
// Two sources feed it: this gateway's own turns (reserve, then commit once published) and every gateway step
// read back from the steps topic (observe), so a restarted gateway, or another instance behind the same
// address, continues an episode at the index the log says. An episode whose calls name agents is one
// trajectory per agent (`<episode>/<agent>`, identity.ts); the book knows which belong to which episode, so a
// finish of the episode ends them all. Turn indices are handed out when the upstream has
// answered, just before the step is published; a publish that fails gives its index back when no later turn
// took one, so a failed call leaves no gap.
import type { StepEvent } from '../schemas/index.js';
import { OpenAIError } from './openai-error.js';
import { agentTrajectoryId, type CallIdentity } from './identity.js';
import { agentOf, contextAfter, endOf, INFO, orphansOf, unionOf } from './turn-facts.js';

/** The newest turn of an episode: a call with the same request hash is a retry of it. */
export interface LastTurn {
  readonly stepIndex: number;
  readonly requestHash: string;
  /** The token context the turn's prompt extended (a retry extends it again), or null. */
  readonly contextBefore: readonly number[] | null;
}

export interface OpenEpisodeState {
  readonly identity: CallIdentity;
  /** The index the next turn gets. */
  nextStep: number;
  /** Prompt + completion ids of the last turn (conversation-scoped upstreams), or null. */
  context: readonly number[] | null;
  lastActivityMs: number;
  /** The newest policy version that answered a turn of it. */
  policyVersion: number;
  lastTurn: LastTurn | null;
  /** Turns whose client went away before their answer, not yet named on a published step (info.orphans). */
  orphans: number[];
  /** The step index of each of its turns by the answer's id (for per-call rewards). */
  readonly calls: Map<string, number>;
}

/** What a new turn gets: its index, the context its prompt extends, and the orphans its step names. */
export interface Reservation {
  readonly stepIndex: number;
  readonly context: readonly number[] | null;
  readonly orphans: readonly number[];
}

/** A published turn, as the book remembers it. */
export interface CommittedTurn {
  readonly stepIndex: number;
  readonly requestHash: string;
  readonly callId: string;
  /** The context the turn's prompt extended, and the context after it (null for turn-scoped upstreams). */
  readonly contextBefore: readonly number[] | null;
  readonly context: readonly number[] | null;
  /** The orphans its step named. */
  readonly orphans: readonly number[];
}

export interface EpisodeBookOptions {
  /** An episode with no call and no finish for this long is ended as truncated. */
  readonly timeoutMs: number;
  /** Ended episodes remembered (for the 409), oldest forgotten first. Default 100,000. */
  readonly rememberEnded?: number;
}

const keyOf = (runId: string, episodeId: string): string => `${runId}\u0000${episodeId}`;
/** Where an episode whose agents' trajectories have ended is remembered as ended (apart from a trajectory of its own). */
const agentsKeyOf = (runId: string, episodeId: string): string => `${keyOf(runId, episodeId)}\u0000agents`;

/** The episode an agent's trajectory is part of (choice 0 only: an n > 1 choice is finished on its own). */
function partOf(identity: CallIdentity): string | undefined {
  const agent = identity.agent;
  return agent !== undefined && identity.episodeId === agentTrajectoryId(agent.episodeId, agent.name) ? keyOf(identity.runId, agent.episodeId) : undefined;
}

function freshState(identity: CallIdentity, nowMs: number): OpenEpisodeState {
  return { identity, nextStep: 0, context: null, lastActivityMs: nowMs, policyVersion: 0, lastTurn: null, orphans: [], calls: new Map() };
}

/** The identity a logged step was recorded under. */
function identityOf(step: StepEvent): CallIdentity {
  const size = Number(step.info.groupSize);
  const agent = agentOf(step);
  return {
    runId: step.runId,
    groupId: step.groupId,
    episodeId: step.episodeId,
    envName: step.envName,
    groupSize: Number.isSafeInteger(size) && size > 0 ? size : null,
    ...(agent ? { agent } : {}),
  };
}

export class EpisodeBook {
  private readonly open = new Map<string, OpenEpisodeState>();
  private readonly ended = new Map<string, 'finished' | 'timed-out'>();
  /** The open agents' trajectories of each episode (by the episode's key). */
  private readonly agents = new Map<string, Set<string>>();

  constructor(private readonly options: EpisodeBookOptions) {
    if (!(options.timeoutMs > 0)) throw new RangeError(`timeoutMs must be > 0, got ${options.timeoutMs}`);
  }

  get openCount(): number {
    return this.open.size;
  }

  /** The state of an open episode, if any. */
  get(runId: string, episodeId: string): OpenEpisodeState | undefined {
    return this.open.get(keyOf(runId, episodeId));
  }

  /** Refuses a call for an episode that already ended (before the upstream is asked). */
  checkOpen(identity: CallIdentity): void {
    const ended = this.ended.get(keyOf(identity.runId, identity.episodeId));
    if (ended !== undefined) {
      throw new OpenAIError(
        409,
        `episode ${identity.episodeId} of run ${identity.runId} has ${ended === 'finished' ? 'been finished' : 'timed out'}; start a new episode (x-trajflow-episode)`,
        'conflict_error',
        'x-trajflow-episode',
        'episode_ended',
      );
    }
  }

  /**
   * The step index of a new turn, the episode opened if new. A request repeating the last turn's (same hash)
   * is a retry: its client never saw that turn's answer, so the turn becomes an orphan and the retry's prompt
   * extends the context that turn's prompt extended.
   */
  reserve(identity: CallIdentity, nowMs: number, requestHash = ''): Reservation {
    this.checkOpen(identity);
    const key = keyOf(identity.runId, identity.episodeId);
    let state = this.open.get(key);
    if (!state) {
      state = freshState(identity, nowMs);
      this.put(key, state);
    }
    state.lastActivityMs = nowMs;
    const last = state.lastTurn;
    const retry = requestHash !== '' && last !== null && last.requestHash === requestHash && last.stepIndex === state.nextStep - 1;
    return {
      stepIndex: state.nextStep++,
      context: retry ? last.contextBefore : state.context,
      orphans: retry ? unionOf(state.orphans, [last.stepIndex]) : [...state.orphans],
    };
  }

  /** The turn was published: remember its context, request, answer id and version; its orphans are named. */
  commit(identity: CallIdentity, turn: CommittedTurn, policyVersion: number, nowMs: number): void {
    const state = this.open.get(keyOf(identity.runId, identity.episodeId));
    if (!state) return;
    state.calls.set(turn.callId, turn.stepIndex);
    state.orphans = state.orphans.filter((o) => !turn.orphans.includes(o));
    state.policyVersion = Math.max(state.policyVersion, policyVersion);
    state.lastActivityMs = nowMs;
    if (state.lastTurn !== null && state.lastTurn.stepIndex > turn.stepIndex) return;
    state.context = turn.context;
    state.lastTurn = { stepIndex: turn.stepIndex, requestHash: turn.requestHash, contextBefore: turn.contextBefore };
  }

  /** The turn could not be published: its index is given back if it was the last one handed out. */
  abandon(identity: CallIdentity, stepIndex: number): void {
    const key = keyOf(identity.runId, identity.episodeId);
    const state = this.open.get(key);
    if (!state || state.nextStep !== stepIndex + 1) return;
    state.nextStep = stepIndex;
    if (stepIndex === 0) this.drop(key);
  }

  /** A published turn's client went away before its answer: the next step of the episode names it an orphan. */
  markOrphan(runId: string, episodeId: string, stepIndex: number): void {
    const state = this.open.get(keyOf(runId, episodeId));
    if (state) state.orphans = unionOf(state.orphans, [stepIndex]);
  }

  /** The episode and step of an answer id, among the open episodes. */
  callStep(runId: string, episodeId: string, callId: string): number | undefined {
    return this.open.get(keyOf(runId, episodeId))?.calls.get(callId);
  }

  /**
   * A gateway step read back from the steps topic (this gateway's, an earlier life's or another instance's):
   * a turn past what the book knows moves the episode on, an outcome step ends it. Steps the book already
   * holds change nothing but the activity time, so reading the log again is harmless.
   */
  observe(step: StepEvent): void {
    const key = keyOf(step.runId, step.episodeId);
    if (this.ended.has(key)) return;
    if (step.terminated || step.truncated) {
      this.drop(key);
      this.remember(key, endOf(step));
      const agent = agentOf(step);
      if (agent) this.remember(agentsKeyOf(step.runId, agent.episodeId), endOf(step));
      return;
    }
    let state = this.open.get(key);
    if (!state) {
      state = freshState(identityOf(step), step.eventTimeMs);
      this.put(key, state);
    }
    state.lastActivityMs = Math.max(state.lastActivityMs, step.eventTimeMs);
    state.policyVersion = Math.max(state.policyVersion, step.policyVersion);
    const callId = step.info[INFO.callId];
    if (callId !== undefined) state.calls.set(callId, step.stepIndex);
    const orphans = orphansOf(step.info);
    state.orphans = state.orphans.filter((o) => !orphans.includes(o));
    if (step.stepIndex < state.nextStep) return;
    const last = state.lastTurn;
    const before = last !== null && orphans.includes(last.stepIndex) ? last.contextBefore : state.context;
    state.context = contextAfter(step, before);
    state.lastTurn = { stepIndex: step.stepIndex, requestHash: step.info[INFO.requestHash] ?? '', contextBefore: before };
    state.nextStep = step.stepIndex + 1;
  }

  /** Ends an open episode (its outcome step takes nextStep); undefined when it is not open. */
  finish(runId: string, episodeId: string): OpenEpisodeState | undefined {
    const key = keyOf(runId, episodeId);
    const state = this.open.get(key);
    if (!state) return undefined;
    this.end(key, state, 'finished');
    return state;
  }

  /** The open trajectories a finish of the episode ends: its own, if open, then each agent's, oldest first. */
  trajectories(runId: string, episodeId: string): OpenEpisodeState[] {
    const own = this.open.get(keyOf(runId, episodeId));
    const agents = [...(this.agents.get(keyOf(runId, episodeId)) ?? [])].map((key) => this.open.get(key)!);
    return own ? [own, ...agents] : agents;
  }

  /** Whether an episode (or every agent's trajectory of it) has ended, and how. */
  endedAs(runId: string, episodeId: string): 'finished' | 'timed-out' | undefined {
    return this.ended.get(keyOf(runId, episodeId)) ?? this.ended.get(agentsKeyOf(runId, episodeId));
  }

  /** Ends and returns every episode idle for timeoutMs or longer. */
  expire(nowMs: number): OpenEpisodeState[] {
    const out: OpenEpisodeState[] = [];
    for (const [key, state] of this.open) {
      if (nowMs - state.lastActivityMs < this.options.timeoutMs) continue;
      this.end(key, state, 'timed-out');
      out.push(state);
    }
    return out;
  }

  /** Puts an ended episode back (its outcome step could not be published), so the finish can be retried. */
  reopen(state: OpenEpisodeState): void {
    const key = keyOf(state.identity.runId, state.identity.episodeId);
    this.ended.delete(key);
    const agent = state.identity.agent;
    if (partOf(state.identity) !== undefined) this.ended.delete(agentsKeyOf(state.identity.runId, agent!.episodeId));
    this.put(key, state);
  }

  /** An open trajectory ends: remembered, and so is its episode when it is an agent's. */
  private end(key: string, state: OpenEpisodeState, how: 'finished' | 'timed-out'): void {
    this.drop(key);
    this.remember(key, how);
    const agent = state.identity.agent;
    if (partOf(state.identity) !== undefined) this.remember(agentsKeyOf(state.identity.runId, agent!.episodeId), how);
  }

  private put(key: string, state: OpenEpisodeState): void {
    this.open.set(key, state);
    const part = partOf(state.identity);
    if (part === undefined) return;
    const members = this.agents.get(part) ?? new Set<string>();
    members.add(key);
    this.agents.set(part, members);
  }

  private drop(key: string): void {
    const state = this.open.get(key);
    if (!state) return;
    this.open.delete(key);
    const part = partOf(state.identity);
    const members = part === undefined ? undefined : this.agents.get(part);
    if (!members) return;
    members.delete(key);
    if (members.size === 0) this.agents.delete(part!);
  }

  private remember(key: string, how: 'finished' | 'timed-out'): void {
    this.ended.set(key, how);
    const cap = this.options.rememberEnded ?? 100_000;
    while (this.ended.size > cap) this.ended.delete(this.ended.keys().next().value!);
  }
}

/**
 * The prompt ids a turn adds, for an upstream that reports the whole prompt: the part after what the
 * episode's context already holds. When the context is not a prefix of the new prompt (the agent edited
 * its history, or the chat template renders earlier turns differently: retokenisation drift), the whole
 * prompt is returned and `drift` says so.
 */
export function newPromptIds(context: readonly number[] | null, prompt: readonly number[]): { ids: number[]; drift: boolean } {
  if (context === null) return { ids: [...prompt], drift: false };
  const prefix = context.length <= prompt.length && context.every((id, i) => prompt[i] === id);
  return prefix ? { ids: prompt.slice(context.length), drift: false } : { ids: [...prompt], drift: true };
}

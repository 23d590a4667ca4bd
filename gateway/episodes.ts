// The gateway's book of open episodes: the next turn index of each, the token context an OpenAI-compatible
// upstream has seen so far (to record only each turn's new prompt tokens), when it was last active, and the
// episodes already ended (a call or a finish for one of them is a 409). Pure: time comes in as arguments.
//
// Turn indices are handed out when the upstream has answered, just before the step is published; a publish
// that fails gives its index back when no later turn took one, so a failed call leaves no gap.
import { OpenAIError } from './openai-error.js';
import type { CallIdentity } from './identity.js';

export interface OpenEpisodeState {
  readonly identity: CallIdentity;
  /** The index the next turn gets. */
  nextStep: number;
  /** Prompt + completion ids of the last turn (conversation-scoped upstreams), or null. */
  context: readonly number[] | null;
  lastActivityMs: number;
  /** The newest policy version that answered a turn of it. */
  policyVersion: number;
}

export interface EpisodeBookOptions {
  /** An episode with no call and no finish for this long is ended as truncated. */
  readonly timeoutMs: number;
  /** Ended episodes remembered (for the 409), oldest forgotten first. Default 100,000. */
  readonly rememberEnded?: number;
}

const keyOf = (runId: string, episodeId: string): string => `${runId}\u0000${episodeId}`;

export class EpisodeBook {
  private readonly open = new Map<string, OpenEpisodeState>();
  private readonly ended = new Map<string, 'finished' | 'timed-out'>();

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

  /** The step index of a new turn, the episode opened if new. */
  reserve(identity: CallIdentity, nowMs: number): { stepIndex: number; context: readonly number[] | null } {
    this.checkOpen(identity);
    const key = keyOf(identity.runId, identity.episodeId);
    let state = this.open.get(key);
    if (!state) {
      state = { identity, nextStep: 0, context: null, lastActivityMs: nowMs, policyVersion: 0 };
      this.open.set(key, state);
    }
    state.lastActivityMs = nowMs;
    return { stepIndex: state.nextStep++, context: state.context };
  }

  /** The turn was published: remember its context and version. */
  commit(identity: CallIdentity, context: readonly number[] | null, policyVersion: number, nowMs: number): void {
    const state = this.open.get(keyOf(identity.runId, identity.episodeId));
    if (!state) return;
    state.context = context;
    state.policyVersion = Math.max(state.policyVersion, policyVersion);
    state.lastActivityMs = nowMs;
  }

  /** The turn could not be published: its index is given back if it was the last one handed out. */
  abandon(identity: CallIdentity, stepIndex: number): void {
    const key = keyOf(identity.runId, identity.episodeId);
    const state = this.open.get(key);
    if (!state || state.nextStep !== stepIndex + 1) return;
    state.nextStep = stepIndex;
    if (stepIndex === 0) this.open.delete(key);
  }

  /** Ends an open episode (its outcome step takes nextStep); undefined when it is not open. */
  finish(runId: string, episodeId: string): OpenEpisodeState | undefined {
    const key = keyOf(runId, episodeId);
    const state = this.open.get(key);
    if (!state) return undefined;
    this.open.delete(key);
    this.remember(key, 'finished');
    return state;
  }

  /** Whether an episode has ended, and how. */
  endedAs(runId: string, episodeId: string): 'finished' | 'timed-out' | undefined {
    return this.ended.get(keyOf(runId, episodeId));
  }

  /** Ends and returns every episode idle for timeoutMs or longer. */
  expire(nowMs: number): OpenEpisodeState[] {
    const out: OpenEpisodeState[] = [];
    for (const [key, state] of this.open) {
      if (nowMs - state.lastActivityMs < this.options.timeoutMs) continue;
      this.open.delete(key);
      this.remember(key, 'timed-out');
      out.push(state);
    }
    return out;
  }

  /** Puts an ended episode back (its outcome step could not be published), so the finish can be retried. */
  reopen(state: OpenEpisodeState): void {
    const key = keyOf(state.identity.runId, state.identity.episodeId);
    this.ended.delete(key);
    this.open.set(key, state);
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

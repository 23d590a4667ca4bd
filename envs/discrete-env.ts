// The turn loop of environments with a fixed action vocabulary (Bandit, FrozenLake, Sokoban): parse the
// reply, run its known actions in order within the episode's action budget, sum their rewards, and
// report the turn (contract.ts explains the conventions). Subclasses only say how one action changes
// their state.
import { parseTurn } from './actions.js';
import type { EnvId, Environment, ResetResult, StepResult, TurnLimits } from './contract.js';
import { EpisodeLifecycle } from './lifecycle.js';

/** What one primitive action did. */
export interface ActionOutcome {
  reward: number;
  /** The MDP reached a terminal state. */
  terminated: boolean;
  /** An environment-internal limit cut the episode (Sokoban's max_steps). */
  truncated?: boolean;
  /** Why the episode ended, when it did (e.g. 'goal', 'hole', 'solved'). */
  endReason?: string;
}

export abstract class DiscreteTurnEnv<A extends string> implements Environment {
  abstract readonly id: EnvId;
  abstract readonly actionVocabulary: readonly A[];
  readonly maxTurns: number;
  readonly maxActionsPerTurn: number;
  readonly maxActionsPerEpisode: number;
  private lifecycle: EpisodeLifecycle | undefined;
  private actionsUsed = 0;

  constructor(limits: TurnLimits) {
    this.maxTurns = limits.maxTurns;
    this.maxActionsPerTurn = limits.maxActionsPerTurn;
    this.maxActionsPerEpisode = limits.maxActionsPerEpisode;
  }

  /** Builds the episode's initial state from the seed (all randomness from Rng(seed, …)). */
  protected abstract startEpisode(seed: number): void;
  /** Applies one known action to the state. */
  protected abstract applyAction(action: A): ActionOutcome;
  /** Whether the episode counts as a success (read when it ends). */
  protected abstract isSuccess(): boolean;
  /** Canonical key of the current state. */
  protected abstract currentStateKey(): string;
  abstract render(): string;
  abstract systemPrompt(): string;

  /** The observation of the current state; the rendering unless a subclass says otherwise. */
  protected observe(): string {
    return this.render();
  }

  /** Extra numbers to report with every step (e.g. boxes on target). */
  protected stateMetrics(): Record<string, number> {
    return {};
  }

  validActions(): readonly string[] {
    return this.actionVocabulary;
  }

  private episode(): EpisodeLifecycle {
    this.lifecycle ??= new EpisodeLifecycle(this.id.name);
    return this.lifecycle;
  }

  reset(seed: number): ResetResult {
    this.episode().start(seed);
    this.actionsUsed = 0;
    this.startEpisode(seed);
    return { observation: this.observe(), stateKey: this.currentStateKey(), info: { seed: String(seed) } };
  }

  step(actionText: string): StepResult {
    const episode = this.episode();
    episode.beginTurn();
    const parsed = parseTurn(String(actionText), this.actionVocabulary, this.maxActionsPerTurn);
    const keyBefore = this.currentStateKey();
    // RAGEN caps the executed actions by the actions left in the episode (max_actions_per_traj).
    const runnable = parsed.actions.slice(0, this.maxActionsPerEpisode - this.actionsUsed);
    const executed: A[] = [];
    let reward = 0;
    let terminated = false;
    let limitHit = false;
    let endReason: string | undefined;
    for (const action of runnable) {
      const outcome = this.applyAction(action);
      executed.push(action);
      this.actionsUsed += 1;
      reward += outcome.reward;
      if (outcome.terminated || outcome.truncated) {
        terminated = outcome.terminated;
        limitHit = !outcome.terminated;
        endReason = outcome.endReason;
        break; // the rest of the turn's actions are not executed once the episode is over
      }
    }
    if (!terminated && !limitHit) {
      if (this.actionsUsed >= this.maxActionsPerEpisode) [limitHit, endReason] = [true, 'max-actions'];
      else if (episode.turns >= this.maxTurns) [limitHit, endReason] = [true, 'max-turns'];
    }
    const truncated = !terminated && limitHit;
    episode.endTurn(terminated, truncated);

    const stateKey = this.currentStateKey();
    const info: Record<string, string> = { actions: executed.join(' || ') };
    if (parsed.problem !== null) info.invalidReason = parsed.problem;
    if (parsed.ignored.length > 0) info.ignoredActions = parsed.ignored.join(' || ');
    if (endReason !== undefined) info.endReason = endReason;
    const metrics: Record<string, number> = {
      turn: episode.turns,
      actionsExecuted: executed.length,
      actionsDropped: parsed.dropped.length,
      actionsIgnored: parsed.ignored.length + (parsed.actions.length - runnable.length),
      actionEffective: stateKey === keyBefore ? 0 : 1,
      ...this.stateMetrics(),
    };
    if (terminated || truncated) metrics.success = this.isSuccess() ? 1 : 0;
    return { observation: this.observe(), reward, terminated, truncated, actionValid: parsed.valid, info, metrics, stateKey };
  }
}

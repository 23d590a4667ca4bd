// The episode lifecycle every environment shares: reset before step, no step after the end
// (Gymnasium's OrderEnforcing), and a turn counter for maxTurns.
import { EpisodeOverError, InvalidSeedError, ResetNeededError } from './errors.js';

type Phase = 'before-reset' | 'running' | 'terminated' | 'truncated';

export class EpisodeLifecycle {
  private phase: Phase = 'before-reset';
  private turnCount = 0;

  constructor(private readonly envName: string) {}

  /** Checks the seed and starts a new episode (allowed at any time). */
  start(seed: number): void {
    if (typeof seed !== 'number' || !Number.isSafeInteger(seed) || seed < 0) throw new InvalidSeedError(this.envName, seed);
    this.phase = 'running';
    this.turnCount = 0;
  }

  /** Throws ResetNeededError / EpisodeOverError when no turn may be played; else counts the turn. */
  beginTurn(): void {
    if (this.phase === 'before-reset') throw new ResetNeededError(this.envName);
    if (this.phase !== 'running') throw new EpisodeOverError(this.envName, this.phase);
    this.turnCount += 1;
  }

  /** Records how the turn ended. */
  endTurn(terminated: boolean, truncated: boolean): void {
    if (terminated) this.phase = 'terminated';
    else if (truncated) this.phase = 'truncated';
  }

  /** Turns played in this episode, including the current one. */
  get turns(): number {
    return this.turnCount;
  }
}

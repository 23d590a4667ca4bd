// The tiny environment behind the fake OpenEnv server: guess a secret number from 1 to 10 with
// higher/lower hints. Written the way an OpenEnv (Python) environment behaves: reset(seed) → an
// observation, step(action) → an observation with reward and done, a `state` with episode_id and
// step_count, pydantic-style validation of the action.

export const GUESS_MIN = 1;
export const GUESS_MAX = 10;
/** The seed whose environment "crashes" on every step (EXECUTION_ERROR), to test error propagation. */
export const CRASHING_SEED = 13;

export function secretFor(seed: number): number {
  return GUESS_MIN + ((seed * 7 + 3) % GUESS_MAX);
}

export interface Observed {
  observation: { text: string; hint: 'higher' | 'lower' | 'correct' | null; guesses_left: number };
  reward: number | null;
  done: boolean;
  metadata?: Record<string, unknown>;
}

export interface ValidationIssue {
  type: string;
  loc: string[];
  msg: string;
}

/** Pydantic-like check of a GuessAction ({guess: int in 1..10}, extra fields forbidden, numeric strings coerced). */
export function parseGuess(data: Record<string, unknown>): { ok: true; guess: number } | { ok: false; errors: ValidationIssue[] } {
  const errors: ValidationIssue[] = [];
  for (const key of Object.keys(data)) {
    if (key !== 'guess' && key !== 'metadata') errors.push({ type: 'extra_forbidden', loc: [key], msg: 'Extra inputs are not permitted' });
  }
  const raw = data.guess;
  const guess = typeof raw === 'string' && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw;
  if (raw === undefined) errors.push({ type: 'missing', loc: ['guess'], msg: 'Field required' });
  else if (typeof guess !== 'number' || !Number.isInteger(guess)) errors.push({ type: 'int_parsing', loc: ['guess'], msg: 'Input should be a valid integer' });
  else if (guess < GUESS_MIN || guess > GUESS_MAX) errors.push({ type: 'range', loc: ['guess'], msg: `Input should be between ${GUESS_MIN} and ${GUESS_MAX}` });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, guess: guess as number };
}

export class GuessNumberEnv {
  private secret = 0;
  private seed: number | null = null;
  episodeId: string | null = null;
  stepCount = 0;

  constructor(
    private readonly maxSteps: number,
    private readonly reportTruncation: boolean,
  ) {}

  reset(seed: number | undefined, episodeId: string): Observed {
    this.seed = seed ?? 0;
    this.secret = secretFor(this.seed);
    this.episodeId = episodeId;
    this.stepCount = 0;
    return { observation: { text: `Guess a number between ${GUESS_MIN} and ${GUESS_MAX}.`, hint: null, guesses_left: this.maxSteps }, reward: null, done: false };
  }

  step(guess: number): Observed {
    if (this.episodeId === null) throw new Error('call reset() before step()');
    if (this.seed === CRASHING_SEED) throw new Error('simulator crashed: unlucky seed');
    this.stepCount += 1;
    const left = this.maxSteps - this.stepCount;
    if (guess === this.secret) {
      return { observation: { text: `Correct, it was ${guess}.`, hint: 'correct', guesses_left: left }, reward: 1, done: true };
    }
    const hint = guess < this.secret ? 'higher' : 'lower';
    const out: Observed = { observation: { text: `${guess} is wrong: go ${hint}.`, hint, guesses_left: left }, reward: 0, done: left <= 0 };
    if (out.done && this.reportTruncation) out.metadata = { truncated: true };
    return out;
  }
}

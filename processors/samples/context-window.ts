// The context-window policy: which part of a long multi-turn history goes into a training sample.
//
// A turn is one step: the observation the policy saw, then the action it generated. When all turns
// together exceed `maxContextTokens`, the most recent turns are kept whole and the oldest are dropped
// (the latest turns carry the outcome the reward speaks about, and a partial action would train on
// tokens out of the context they were sampled in). An action is never cut. The one exception: when
// the last turn alone does not fit, its action is kept whole and its observation loses its oldest
// tokens (the end of an observation, next to the action, is usually the question being answered).
// An action longer than the whole window cannot be trained on at all: fitContextWindow throws.
//
// Note that a cut sample is not exactly the context the policy sampled in (unless the actor used the
// same window); `ContextWindowReport` records every cut so the stats can show how often it happens.
import { SampleError } from './sample-error.js';

/** Default window: 8192 tokens. Our choice (no reference value verified); RAGEN v1 allows 5 turns × 400 response tokens plus observations. */
export const DEFAULT_MAX_CONTEXT_TOKENS = 8192;

export interface TurnLength {
  readonly observationTokens: number;
  readonly actionTokens: number;
}

export interface ContextWindowReport {
  readonly maxContextTokens: number;
  /** Turns in the trajectory. */
  readonly turns: number;
  /** Position (in the trajectory's steps) of the first turn kept. */
  readonly firstKeptTurn: number;
  /** Oldest turns left out whole. */
  readonly droppedTurns: number;
  /** Tokens cut from the front of the first kept turn's observation (only when the last turn alone is too long). */
  readonly trimmedObservationTokens: number;
  /** All tokens left out. */
  readonly droppedTokens: number;
  /** Tokens in the sample. */
  readonly keptTokens: number;
  readonly truncated: boolean;
}

export function fitContextWindow(turns: readonly TurnLength[], maxContextTokens: number): ContextWindowReport {
  if (!Number.isInteger(maxContextTokens) || maxContextTokens < 1) {
    throw new RangeError(`maxContextTokens must be an integer >= 1, got ${maxContextTokens}`);
  }
  const lengthOf = (t: TurnLength) => t.observationTokens + t.actionTokens;
  const total = turns.reduce((sum, t) => sum + lengthOf(t), 0);
  let kept = 0;
  let firstKeptTurn = turns.length;
  while (firstKeptTurn > 0 && kept + lengthOf(turns[firstKeptTurn - 1]!) <= maxContextTokens) {
    firstKeptTurn--;
    kept += lengthOf(turns[firstKeptTurn]!);
  }
  let trimmedObservationTokens = 0;
  if (firstKeptTurn === turns.length && turns.length > 0) {
    // Not even the last turn fits whole: keep its action, and as much of its observation's end as fits.
    const last = turns[turns.length - 1]!;
    if (last.actionTokens > maxContextTokens) {
      throw new SampleError(`the last action has ${last.actionTokens} tokens, more than the context window of ${maxContextTokens}`);
    }
    firstKeptTurn = turns.length - 1;
    trimmedObservationTokens = lengthOf(last) - maxContextTokens;
    kept = maxContextTokens;
  }
  return {
    maxContextTokens,
    turns: turns.length,
    firstKeptTurn,
    droppedTurns: firstKeptTurn,
    trimmedObservationTokens,
    droppedTokens: total - kept,
    keptTokens: kept,
    truncated: total > kept,
  };
}

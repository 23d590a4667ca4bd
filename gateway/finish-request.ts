// POST /v1/episodes/{id}/finish, read strictly: the episode's reward, optional per-turn rewards, success and
// how it ended. Pure.
//   { "reward": 1, "success": true }                         terminated (the default)
//   { "reward": 0, "truncated": true }                       cut off (a step limit), not a terminal state
//   { "reward": 0.5, "turn_rewards": [0, 0.1, 0.4] }          per-turn rewards (see record.ts outcomeStep)
import { invalidParam } from './openai-error.js';
import { booleanField, isObject, numberField, onlyKnown, stringField } from './fields.js';
import type { EpisodeOutcome } from './record.js';

const KNOWN = new Set(['reward', 'turn_rewards', 'success', 'terminated', 'truncated', 'run']);
/** Rewards beyond this magnitude are refused: a bug in the agent, not a reward. */
const MAX_REWARD = 1e9;

export interface FinishRequest {
  readonly outcome: EpisodeOutcome;
  /** The run named in the body, if any (the x-trajflow-run header is the other place). */
  readonly run: string | undefined;
}

export function parseFinishRequest(body: unknown): FinishRequest {
  if (!isObject(body)) throw invalidParam('body', 'must be a JSON object such as {"reward": 1, "success": true}', 'invalid_type');
  onlyKnown(body, KNOWN);
  const reward = numberField(body, 'reward', -MAX_REWARD, MAX_REWARD);
  if (reward === undefined) throw invalidParam('reward', "is required: the episode's final reward (a number)", 'missing_required_parameter');
  const raw = body.turn_rewards;
  let turnRewards: number[] = [];
  if (raw !== undefined && raw !== null) {
    if (!Array.isArray(raw)) throw invalidParam('turn_rewards', 'must be an array of numbers, one per turn', 'invalid_type');
    turnRewards = raw.map((value, i) => {
      if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > MAX_REWARD)
        throw invalidParam(`turn_rewards[${i}]`, `must be a finite number within ±${MAX_REWARD}`);
      return value;
    });
  }
  const truncated = booleanField(body, 'truncated') ?? false;
  const terminated = booleanField(body, 'terminated') ?? !truncated;
  if (!terminated && !truncated) throw invalidParam('terminated', 'an episode ends terminated or truncated: set one of them true');
  const success = booleanField(body, 'success') ?? null;
  return { outcome: { reward, turnRewards, success, terminated, truncated, reason: 'finish' }, run: stringField(body, 'run', { nonEmpty: true }) };
}

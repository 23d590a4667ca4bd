// POST /v1/episodes/{id}/finish, read strictly: the episode's reward, optional per-turn and per-call rewards,
// success and how it ended. Pure.
//   { "reward": 1, "success": true }                         terminated (the default)
//   { "reward": 0, "truncated": true }                       cut off (a step limit), not a terminal state
//   { "reward": 0.5, "turn_rewards": [0, 0.1, 0.4] }          per-turn rewards, by step index (see record.ts outcomeStep)
//   { "reward": 1, "call_rewards": {"chatcmpl-…": 0.2} }      rewards of single calls, by the answer's id (step-rewards.ts)
import { invalidParam } from './openai-error.js';
import { booleanField, isObject, numberField, onlyKnown, stringField } from './fields.js';
import type { EpisodeOutcome } from './record.js';

const KNOWN = new Set(['reward', 'turn_rewards', 'call_rewards', 'success', 'terminated', 'truncated', 'run']);
/** Rewards beyond this magnitude are refused: a bug in the agent, not a reward. */
const MAX_REWARD = 1e9;
/** Most rewarded calls in one finish. */
const MAX_CALL_REWARDS = 4096;

function rewardValue(value: unknown, param: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || Math.abs(value) > MAX_REWARD) throw invalidParam(param, `must be a finite number within ±${MAX_REWARD}`);
  return value;
}

/** `call_rewards`: an object of answer ids (the `id` of a call's answer) to rewards. */
function callRewardsOf(raw: unknown): Record<string, number> | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) throw invalidParam('call_rewards', 'must be an object of answer ids to rewards, such as {"chatcmpl-abc": 0.5}', 'invalid_type');
  const entries = Object.entries(raw);
  if (entries.length > MAX_CALL_REWARDS) throw invalidParam('call_rewards', `holds at most ${MAX_CALL_REWARDS} calls, got ${entries.length}`);
  return Object.fromEntries(entries.map(([id, value]) => [id, rewardValue(value, `call_rewards.${id.slice(0, 100)}`)]));
}

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
    turnRewards = raw.map((value, i) => rewardValue(value, `turn_rewards[${i}]`));
  }
  const callRewards = callRewardsOf(body.call_rewards);
  const truncated = booleanField(body, 'truncated') ?? false;
  const terminated = booleanField(body, 'terminated') ?? !truncated;
  if (!terminated && !truncated) throw invalidParam('terminated', 'an episode ends terminated or truncated: set one of them true');
  const success = booleanField(body, 'success') ?? null;
  const outcome = { reward, turnRewards, success, terminated, truncated, reason: 'finish' as const, ...(callRewards ? { callRewards } : {}) };
  return { outcome, run: stringField(body, 'run', { nonEmpty: true }) };
}

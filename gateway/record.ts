// The step events the gateway publishes. Pure: the same call gives the same event.
//
// A turn (one answered call, one choice): observation = the rendered prompt of the turn (its token ids when
// the upstream gave them), action = the completion with its exact token ids and behaviour log-probs, reward 0,
// not terminated — the reward and the end arrive later with POST /v1/episodes/{id}/finish, which publishes an
// outcome step (outcomeStep): one more step of the episode with an empty action and no tokens, carrying the
// reward, terminated/truncated and metrics.success. The processors already close an episode on its
// terminated/truncated step, and nothing published is ever changed (docs/design/gateway-recording.md).
import { createHash } from 'node:crypto';
import type { StepEvent } from '../schemas/index.js';
import type { CallIdentity } from './identity.js';
import { INFO } from './turn-facts.js';
import type { SampledChoice, UpstreamAnswer } from './upstream.js';

export const ENV_VERSION = 'openai-gateway-v1';

/** The episode choice i of an n > 1 call is recorded in: choice 0 in the episode itself, choice i in `<episode>:n<i>`. */
export function choiceEpisodeId(episodeId: string, choice: number): string {
  return choice === 0 ? episodeId : `${episodeId}:n${choice}`;
}

/** A stable event id of (run, episode, step): a retried publish repeats it, so consumers drop the copy. */
export function gatewayEventId(runId: string, episodeId: string, stepIndex: number): string {
  return createHash('sha256').update(`${runId}\u0000${episodeId}\u0000${stepIndex}`).digest('hex').slice(0, 32);
}

function baseInfo(identity: CallIdentity): Record<string, string> {
  return {
    ...(identity.groupSize === null ? {} : { groupSize: String(identity.groupSize) }),
    ...(identity.agent === undefined ? {} : { [INFO.agent]: identity.agent.name }),
  };
}

export interface TurnFacts {
  readonly identity: CallIdentity;
  readonly episodeId: string;
  readonly stepIndex: number;
  readonly answer: UpstreamAnswer;
  readonly choice: SampledChoice;
  readonly observationTokenIds: readonly number[] | null;
  readonly callId: string;
  readonly upstreamName: string;
  /** Wall-clock time the call arrived, and how long the upstream took. */
  readonly startedAtMs: number;
  readonly upstreamMs: number;
  readonly promptDrift: boolean;
  /** The request's hash (a retry repeats it) and the earlier turns this step names as orphans. */
  readonly requestHash: string;
  readonly orphans: readonly number[];
}

/** info.orphans, when there are any: the earlier turns of the episode its client never saw answered. */
function orphanInfo(orphans: readonly number[]): Record<string, string> {
  return orphans.length > 0 ? { [INFO.orphans]: JSON.stringify(orphans) } : {};
}

export function turnStep(f: TurnFacts): StepEvent {
  const { identity, choice, answer } = f;
  return {
    eventId: gatewayEventId(identity.runId, f.episodeId, f.stepIndex),
    runId: identity.runId,
    envName: identity.envName,
    envVersion: ENV_VERSION,
    groupId: identity.groupId,
    episodeId: f.episodeId,
    stepIndex: f.stepIndex,
    observation: answer.promptText,
    observationTokenIds: f.observationTokenIds === null ? null : [...f.observationTokenIds],
    action: choice.text,
    actionTokenIds: [...choice.tokenIds],
    actionLogProbs: [...choice.logProbs],
    policyVersion: answer.policyVersion,
    reward: 0,
    terminated: false,
    truncated: false,
    actionValid: true,
    stateKey: null,
    metrics: {
      upstreamMs: f.upstreamMs,
      promptTokens: answer.usage.promptTokens,
      completionTokens: choice.tokenIds.length,
    },
    info: {
      ...baseInfo(identity),
      ...answer.info,
      model: answer.model,
      upstream: f.upstreamName,
      callId: f.callId,
      finishReason: choice.finishReason,
      [INFO.requestHash]: f.requestHash,
      ...(answer.promptScope === 'conversation' && f.observationTokenIds !== null ? { [INFO.promptScope]: 'conversation' } : {}),
      ...(f.promptDrift ? { promptDrift: '1' } : {}),
      ...orphanInfo(f.orphans),
      ...(choice.toolCalls && choice.toolCalls.length > 0 ? { toolCalls: JSON.stringify(choice.toolCalls) } : {}),
    },
    eventTimeMs: f.startedAtMs,
  };
}

export interface EpisodeOutcome {
  /** The episode's final reward. */
  readonly reward: number;
  /** Per-turn rewards by step index, oldest first (recorded in info.turnRewards; credited as step rewards). */
  readonly turnRewards: readonly number[];
  /** Rewards of single calls by the answer's id, when the agent gave any (credited to the call's step). */
  readonly callRewards?: Readonly<Record<string, number>>;
  readonly success: boolean | null;
  readonly terminated: boolean;
  readonly truncated: boolean;
  /** 'finish': posted by the agent; 'timeout': no call and no finish within the gateway's episode timeout. */
  readonly reason: 'finish' | 'timeout';
}

/** Per-turn rewards as step rewards: turn i is step i. */
export function turnStepRewards(turnRewards: readonly number[]): Map<number, number> {
  return new Map(turnRewards.map((reward, i) => [i, reward]));
}

/** info.stepRewards: `{"<stepIndex>": reward}` as JSON, for the steps with a reward of their own. */
function stepRewardInfo(stepRewards: ReadonlyMap<number, number>): Record<string, string> {
  const entries = [...stepRewards].filter(([, reward]) => reward !== 0).sort(([a], [b]) => a - b);
  return entries.length > 0 ? { [INFO.stepRewards]: JSON.stringify(Object.fromEntries(entries.map(([i, r]) => [String(i), r]))) } : {};
}

/**
 * The step that ends an episode: no action, no tokens, the reward and the end flags. Its reward is the episode's
 * plus every step reward, which `info.stepRewards` names by step index: the processors move each onto its step
 * (processors/assembly/step-rewards.ts), and a reader that does not still sees the episode's whole return.
 */
export function outcomeStep(
  identity: CallIdentity,
  stepIndex: number,
  policyVersion: number,
  outcome: EpisodeOutcome,
  eventTimeMs: number,
  orphans: readonly number[] = [],
  stepRewards: ReadonlyMap<number, number> = turnStepRewards(outcome.turnRewards),
): StepEvent {
  const stepSum = [...stepRewards.values()].reduce((a, b) => a + b, 0);
  return {
    eventId: gatewayEventId(identity.runId, identity.episodeId, stepIndex),
    runId: identity.runId,
    envName: identity.envName,
    envVersion: ENV_VERSION,
    groupId: identity.groupId,
    episodeId: identity.episodeId,
    stepIndex,
    observation: '',
    observationTokenIds: [],
    action: '',
    actionTokenIds: [],
    actionLogProbs: [],
    policyVersion,
    reward: outcome.reward + stepSum,
    terminated: outcome.terminated,
    truncated: outcome.truncated,
    actionValid: true,
    stateKey: null,
    metrics: outcome.success === null ? {} : { success: outcome.success ? 1 : 0 },
    info: {
      ...baseInfo(identity),
      gatewayOutcome: outcome.reason,
      ...(outcome.turnRewards.length > 0 ? { turnRewards: JSON.stringify(outcome.turnRewards) } : {}),
      ...stepRewardInfo(stepRewards),
      ...orphanInfo(orphans),
    },
    eventTimeMs,
  };
}

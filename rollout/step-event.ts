// Building the step event of one turn. Pure: the same inputs give the same event.
//
// State-key convention (envs/contract.ts): a result's stateKey and observation describe the state the
// agent acts FROM next, while step event t carries the state BEFORE its action. So event t takes the
// observation and stateKey of the previous result: reset()'s for t = 0, step t − 1's after that.
import type { EnvId, StepResult } from '../envs/contract.js';
import type { PolicyReply } from '../envs/policy/policy.js';
import type { StepEvent } from '../schemas/index.js';
import { stepEventIdOf } from './ids.js';

/** What stays the same for every step of one episode. */
export interface EpisodeContext {
  readonly runId: string;
  readonly env: EnvId;
  readonly groupId: string;
  readonly episodeId: string;
  /** G: processors wait for this many episodes of the group (sent as info.groupSize). */
  readonly groupSize: number;
  /** The seed every rollout of the group reset with. */
  readonly groupSeed: number;
  readonly rollout: number;
  readonly iteration: number;
  /**
   * P: the groups of the iteration (sent as info.batchGroups), so the processors close the iteration's rollout
   * batch as soon as its last group is in. Absent: the processors batch by their own window.
   */
  readonly batchGroups?: number;
}

/** The previous result's view of the state: what the agent saw when it chose this turn's action. */
export interface StateBefore {
  readonly observation: string;
  readonly stateKey: string;
}

export interface TurnRecord {
  readonly stepIndex: number;
  readonly before: StateBefore;
  readonly reply: PolicyReply;
  readonly policyVersion: number;
  readonly result: StepResult;
  readonly eventTimeMs: number;
}

export function buildStepEvent(episode: EpisodeContext, turn: TurnRecord): StepEvent {
  const { result } = turn;
  return {
    eventId: stepEventIdOf(episode.episodeId, turn.stepIndex),
    runId: episode.runId,
    envName: episode.env.name,
    envVersion: episode.env.version,
    groupId: episode.groupId,
    episodeId: episode.episodeId,
    stepIndex: turn.stepIndex,
    observation: turn.before.observation,
    // The policy's own tokens for this turn's prompt when it has them (learner/policy/context.ts);
    // otherwise the processors tokenize the observation text.
    observationTokenIds: turn.reply.promptTokenIds ? [...turn.reply.promptTokenIds] : null,
    action: turn.reply.text,
    actionTokenIds: [...turn.reply.tokenIds],
    actionLogProbs: [...turn.reply.logProbs],
    policyVersion: turn.policyVersion,
    reward: result.reward,
    terminated: result.terminated,
    truncated: result.truncated,
    actionValid: result.actionValid,
    stateKey: turn.before.stateKey,
    metrics: { ...result.metrics },
    info: {
      ...result.info,
      groupSize: String(episode.groupSize),
      groupSeed: String(episode.groupSeed),
      rollout: String(episode.rollout),
      iteration: String(episode.iteration),
      ...(episode.batchGroups === undefined ? {} : { batchGroups: String(episode.batchGroups) }),
    },
    eventTimeMs: turn.eventTimeMs,
  };
}

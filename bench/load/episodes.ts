// Step events of whole groups of episodes, for processor tests and benchmarks: deterministic, with
// the group size announced in info.groupSize and success on the final step.
import type { StepEvent } from '../../schemas/index.js';
import { makeStep } from './events.js';

export interface EpisodeShape {
  readonly runId: string;
  readonly groupId: string;
  readonly groupSize: number;
  readonly episode: number;
  readonly length: number;
  /** Reward on the final step (the others get 0). */
  readonly finalReward: number;
}

export function episodeSteps(shape: EpisodeShape): StepEvent[] {
  const episodeId = `${shape.groupId}/e${shape.episode}`;
  return Array.from({ length: shape.length }, (_, t) => {
    const last = t === shape.length - 1;
    return {
      ...makeStep({}, shape.episode * 1000 + t),
      eventId: `${episodeId}/s${t}`,
      runId: shape.runId,
      groupId: shape.groupId,
      episodeId,
      stepIndex: t,
      reward: last ? shape.finalReward : 0,
      terminated: last,
      truncated: false,
      stateKey: `state-${t}`,
      info: { groupSize: String(shape.groupSize) },
      metrics: (last ? { success: shape.finalReward > 0 ? 1 : 0 } : {}) as Record<string, number>,
    };
  });
}

/** `groups` groups of `groupSize` episodes each; episode e of every group earns reward e % 2. */
export function groupSteps(runId: string, groups: number, groupSize: number, length = 3, firstGroup = 0): StepEvent[] {
  const steps: StepEvent[] = [];
  for (let g = firstGroup; g < firstGroup + groups; g++) {
    for (let e = 0; e < groupSize; e++) {
      steps.push(...episodeSteps({ runId, groupId: `${runId}-g${g}`, groupSize, episode: e, length, finalReward: e % 2 }));
    }
  }
  return steps;
}

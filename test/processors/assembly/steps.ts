// Step events for the assembly tests: realistic fixture steps with the identity fields set by hand.
import type { StepEvent } from '../../../schemas/index.js';
import { makeStep } from '../../../bench/load/events.js';

export interface StepSpec {
  readonly episode: string;
  readonly index: number;
  readonly group?: string;
  readonly end?: 'terminated' | 'truncated';
  readonly reward?: number;
  readonly eventId?: string;
  readonly success?: boolean;
  readonly groupSize?: number;
}

/** A step of `episode` at `index`; seeded from both so different steps differ in content. */
export function step({ episode, index, group = 'g1', end, reward = 0, eventId, success, groupSize }: StepSpec): StepEvent {
  const base = makeStep({}, index + ((8 * [...episode].reduce((h, c) => h * 31 + c.charCodeAt(0), 7)) % 4096));
  return {
    ...base,
    eventId: eventId ?? `${episode}/${index}`,
    groupId: group,
    episodeId: episode,
    stepIndex: index,
    terminated: end === 'terminated',
    truncated: end === 'truncated',
    reward,
    metrics: success === undefined ? base.metrics : { ...base.metrics, success: success ? 1 : 0 },
    info: groupSize === undefined ? base.info : { ...base.info, groupSize: String(groupSize) },
  };
}

/** A gateway-like step of episode 'ep' with the given token ids, reward and info (the outcome step when `end`). */
export function chatStep(
  stepIndex: number,
  { obs, act, reward, info = {}, end = false }: { obs: number[]; act: number[]; reward: number; info?: Record<string, string>; end?: boolean },
): StepEvent {
  return {
    eventId: `e${stepIndex}`,
    runId: 'r',
    envName: 'Chat',
    envVersion: 'v',
    groupId: 'g',
    episodeId: 'ep',
    stepIndex,
    observation: `o${stepIndex}`,
    observationTokenIds: obs,
    action: end && act.length === 0 ? '' : `a${stepIndex}`,
    actionTokenIds: act,
    actionLogProbs: act.map(() => -1),
    policyVersion: 0,
    reward,
    terminated: end,
    truncated: false,
    actionValid: true,
    stateKey: null,
    metrics: end ? { success: 1 } : {},
    info,
    eventTimeMs: 1000 + stepIndex,
  };
}

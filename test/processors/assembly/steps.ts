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

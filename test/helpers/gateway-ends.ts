// The step that ends a gateway episode, as the gateway writes it (gateway/record.ts outcomeStep: step 1, truncated
// on a timeout, info.gatewayOutcome naming why), for tests that store such ends in ClickHouse and read them back.
import { makeStep } from '../../bench/load/events.js';
import { ENV_VERSION } from '../../gateway/record.js';
import type { StepEvent } from '../../schemas/index.js';

export function gatewayEnd(runId: string, episode: number, reason: 'finish' | 'timeout', eventTimeMs: number): StepEvent {
  return makeStep(
    {
      runId,
      envVersion: ENV_VERSION,
      episodeId: `${runId}-e${episode}`,
      groupId: `${runId}-g`,
      stepIndex: 1,
      eventId: `${runId}/e${episode}/end`,
      terminated: reason === 'finish',
      truncated: reason === 'timeout',
      info: { gatewayOutcome: reason },
      eventTimeMs,
    },
    episode,
  );
}

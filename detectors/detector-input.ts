// Which events feed the detectors, and as what: learner steps, rollout-statistics batches and trajectories
// become DetectorInputs (engine.ts routes each to its detectors); every other event, and events of runs not
// watched, feed nothing. Pure: used by the live consumer and by the rebuild alike, so both feed the same.
import { DecodeError, validateEvent, type AnyEvent, type EventCodec } from '../schemas/index.js';
import type { DetectorInput } from './engine.js';

/** Decodes any trajflow event and applies its semantic checks; DecodeError (dead-lettered) on bad input. */
export function anyEventDecoder(codec: EventCodec): (payload: Buffer | null) => AnyEvent {
  return (payload) => {
    if (payload === null || payload.length === 0) throw new DecodeError('truncated', 'empty payload: the message has no value (a tombstone?)');
    const decoded = codec.decodeAny(payload);
    const check = validateEvent(decoded.event, decoded.value);
    if (!check.ok) throw new DecodeError('invalid-value', `${decoded.event}.${check.field}: ${check.message}`);
    return decoded;
  };
}

/** The detector input of an event read from `source` ('topic/partition'), or null for events the detectors do not read (or of other runs). */
export function detectorInputOf(event: AnyEvent, source: string, runId?: string): DetectorInput | null {
  if (runId !== undefined && 'runId' in event.value && event.value.runId !== runId) return null;
  switch (event.event) {
    case 'learner_step':
      return { type: 'learner_step', event: event.value };
    case 'rollout_stats':
      return { type: 'rollout_stats', event: event.value };
    case 'trajectory':
      return { type: 'trajectory', event: event.value, source };
    default:
      return null;
  }
}

/** 'topic/partition': how the detectors name where an input was read (trajectory windows wait for every such source). */
export const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

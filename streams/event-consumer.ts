// Typed event streams: a TopicConsumer whose payloads are decoded with the Avro codec and checked with
// the event's semantic rules. Anything that fails either goes to the dead-letter topic with the reason.
import type { Kafka } from 'kafkajs';
import { DecodeError, validateEvent, type EventCodec, type EventName, type EventTypes, type StepEvent } from '../schemas/index.js';
import { WireStepReader } from '../schemas/wire-step.js';
import { TopicConsumer, type Rejection, type TopicConsumerOptions } from './topic-consumer.js';

export type EventConsumerOptions = Omit<TopicConsumerOptions<never>, 'decode' | 'classify' | 'topics'> & {
  readonly topic: string;
  /**
   * Step events only: read them as WireSteps (schemas/wire-step.ts), which keep their text and token arrays
   * undecoded in the message bytes until read. For consumers that pass those fields through (the
   * processors); the values are the same, but a WireStep is a class instance, not a plain object.
   */
  readonly wireSteps?: boolean;
};

/** Decodes a payload as `event` and applies its semantic checks; throws DecodeError on bad input. */
export function eventDecoder<N extends EventName>(codec: EventCodec, event: N): (payload: Buffer | null) => EventTypes[N] {
  return (payload) => {
    if (payload === null || payload.length === 0) {
      throw new DecodeError('truncated', 'empty payload: the message has no value (a tombstone?)');
    }
    const value = codec.decode(event, payload);
    const check = validateEvent(event, value);
    if (!check.ok) throw new DecodeError('invalid-value', `${event}.${check.field}: ${check.message}`);
    return value;
  };
}

/** eventDecoder(codec, 'step'), giving WireSteps where wire-step.ts can read the bytes (the same values). */
export function wireStepDecoder(codec: EventCodec): (payload: Buffer | null) => StepEvent {
  const ordinary = eventDecoder(codec, 'step');
  const reader = WireStepReader.of(codec);
  if (reader === null) return ordinary;
  return (payload) => (payload === null ? null : reader.read(payload)) ?? ordinary(payload);
}

/** Decode errors are the input's fault (dead-letter them); anything else is a bug and stops the stream. */
export function classifyDecodeError(error: unknown): Rejection | undefined {
  return error instanceof DecodeError ? { reason: error.reason, detail: error.message } : undefined;
}

export function createEventConsumer<N extends EventName>(kafka: Kafka, codec: EventCodec, event: N, options: EventConsumerOptions): TopicConsumer<EventTypes[N]> {
  const { topic, wireSteps = false, ...rest } = options;
  return new TopicConsumer<EventTypes[N]>(kafka, {
    ...rest,
    topics: [topic],
    decode: event === 'step' && wireSteps ? (wireStepDecoder(codec) as (payload: Buffer | null) => EventTypes[N]) : eventDecoder(codec, event),
    classify: classifyDecodeError,
  });
}

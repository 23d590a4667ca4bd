// Typed event streams: a TopicConsumer whose payloads are decoded with the Avro codec and checked with
// the event's semantic rules. Anything that fails either goes to the dead-letter topic with the reason.
import type { Kafka } from 'kafkajs';
import { DecodeError, validateEvent, type EventCodec, type EventName, type EventTypes } from '../schemas/index.js';
import { TopicConsumer, type Rejection, type TopicConsumerOptions } from './topic-consumer.js';

export type EventConsumerOptions = Omit<TopicConsumerOptions<never>, 'decode' | 'classify' | 'topics'> & {
  readonly topic: string;
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

/** Decode errors are the input's fault (dead-letter them); anything else is a bug and stops the stream. */
export function classifyDecodeError(error: unknown): Rejection | undefined {
  return error instanceof DecodeError ? { reason: error.reason, detail: error.message } : undefined;
}

export function createEventConsumer<N extends EventName>(
  kafka: Kafka,
  codec: EventCodec,
  event: N,
  options: EventConsumerOptions,
): TopicConsumer<EventTypes[N]> {
  const { topic, ...rest } = options;
  return new TopicConsumer<EventTypes[N]>(kafka, {
    ...rest,
    topics: [topic],
    decode: eventDecoder(codec, event),
    classify: classifyDecodeError,
  });
}

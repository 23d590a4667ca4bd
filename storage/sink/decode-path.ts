// The sink's decoding path (every event that is not a transcoded step): the payload decoded with the
// decoder of its topic's event and mapped to its rows, or — when the bytes are not that event (undecodable,
// invalid, another event's) — the dead letter that says why. Pure: sink.ts batches the rows or routes the
// letter. Anything but a DecodeError is a bug and is thrown.
import { DecodeError, type EventName, type EventTypes } from '../../schemas/index.js';
import type { DeadLetterInput, Envelope } from '../../streams/index.js';
import { eventRows, type RowOptions, type TableRow } from './rows.js';

type EventEnvelope = Envelope<Buffer | null>;

/** The event's rows (each with its table), or the dead letter of bytes that are not its topic's event. */
export type DecodedEvent = TableRow[] | { readonly deadLetter: DeadLetterInput };

export function decodeEvent<N extends EventName>(event: N, decode: (payload: Buffer | null) => EventTypes[N], envelope: EventEnvelope, options: RowOptions): DecodedEvent {
  try {
    return eventRows(event, decode(envelope.value), envelope, options);
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    return { deadLetter: deadLetterOf(error, envelope) };
  }
}

/** The dead letter of an event that could not be decoded: the reason, and the bytes where they were read. */
export function deadLetterOf(error: DecodeError, envelope: EventEnvelope): DeadLetterInput {
  return {
    reason: error.reason,
    detail: error.message,
    sourceTopic: envelope.topic,
    sourcePartition: envelope.partition,
    sourceOffset: envelope.offset,
    key: envelope.key,
    payload: envelope.value,
  };
}

// The dead-letter route: bytes that cannot become an event are written, with the reason and where they
// came from, to the dead-letter topic, and the stream goes on. The route awaits the broker's ack, so
// the source offset is only committed once its dead letter is durable — nothing is dropped silently.
import type { EventProducer } from './event-producer.js';

export interface DeadLetterInput {
  /** A short code: bad-marker, unknown-fingerprint, truncated, invalid-value, oversize, empty-payload … */
  readonly reason: string;
  /** What exactly was wrong, for a human. */
  readonly detail: string;
  readonly sourceTopic: string;
  readonly sourcePartition: number;
  readonly sourceOffset: string;
  readonly key: Buffer | null;
  readonly payload: Buffer | null;
}

export interface DeadLetterSink {
  route(letter: DeadLetterInput): Promise<void>;
}

/**
 * A sink that writes the dead letter together with its source offset, in one Kafka transaction (the
 * exactly-once processors): `hold` queues the letter and the consumer's acknowledgement of its source
 * message, and the owner calls `source.ack()` just before it takes the positions it commits in that same
 * transaction. So the dead letter and the offset past it become visible together: after a crash the
 * message is neither lost nor dead-lettered twice.
 */
export interface HeldDeadLetterSink {
  hold(letter: DeadLetterInput, source: HeldSource): void;
}

/** Where the rejected message was, in the consumer generation it was read in; ack() releases its offset. */
export interface HeldSource {
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  readonly generation: number;
  ack(): void;
}

/** The dead_letter event of a rejected message. */
export function deadLetterEvent(letter: DeadLetterInput, eventTimeMs = Date.now()) {
  return {
    reason: letter.reason,
    detail: letter.detail,
    sourceTopic: letter.sourceTopic,
    sourcePartition: letter.sourcePartition,
    sourceOffset: Number(letter.sourceOffset),
    key: letter.key,
    payload: letter.payload ?? Buffer.alloc(0),
    eventTimeMs,
  };
}

export class DeadLetterRoute implements DeadLetterSink {
  constructor(
    private readonly producer: EventProducer,
    readonly topic: string,
  ) {}

  route(letter: DeadLetterInput): Promise<void> {
    // Keyed like the source message, so dead letters of one group stay in order.
    return this.producer.send(this.topic, 'dead_letter', deadLetterEvent(letter), letter.key);
  }
}

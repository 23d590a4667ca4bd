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

export class DeadLetterRoute implements DeadLetterSink {
  constructor(
    private readonly producer: EventProducer,
    readonly topic: string,
  ) {}

  route(letter: DeadLetterInput): Promise<void> {
    return this.producer.send(
      this.topic,
      'dead_letter',
      {
        reason: letter.reason,
        detail: letter.detail,
        sourceTopic: letter.sourceTopic,
        sourcePartition: letter.sourcePartition,
        sourceOffset: Number(letter.sourceOffset),
        key: letter.key,
        payload: letter.payload ?? Buffer.alloc(0),
        eventTimeMs: Date.now(),
      },
      // Keyed like the source message, so dead letters of one group stay in order.
      letter.key,
    );
  }
}

// What the detectors do with each delivery of an input, so that the engine sees every input once and an
// input is acknowledged only after its alerts are written.
//
// The engine's state is the inputs it was fed, per partition up to an offset (the rebuild replays up to
// the group's committed offsets; the live consumer goes on from there). After a rebalance kafkajs
// delivers uncommitted inputs again: one at or below the last offset fed is not fed twice, and is
// acknowledged once the alerts of its first delivery are written (or at once, if they were). No I/O: the
// shell (start-detectors.ts) feeds the engine, writes the alerts and acknowledges.
import type { AnyEvent } from '../schemas/index.js';
import type { Envelope } from '../streams/topic-consumer.js';
import { detectorInputOf, partitionKey } from './detector-input.js';
import type { DetectorInput } from './engine.js';

export interface Delivery {
  readonly envelope: Envelope<AnyEvent>;
  /** What to feed the engine: null for a redelivery, and for events the detectors do not read. */
  readonly input: DetectorInput | null;
  /** For a redelivery: resolves when the first delivery's alerts are written. null for a first delivery. */
  readonly firstDelivery: Promise<void> | null;
}

export class Deliveries {
  /** Highest offset fed to the engine, per partition ('topic/partition'). */
  private readonly fed = new Map<string, bigint>();
  /** First deliveries fed to the engine whose alerts are not written yet, by 'topic/partition/offset'. */
  private readonly writing = new Map<string, { promise: Promise<void>; resolve: () => void }>();

  constructor(
    /** Watch one run only: other runs' events feed nothing. */
    private readonly runId?: string,
  ) {}

  /** The input replayed into the engine by the rebuild (its alerts were written before its offset was committed). */
  replayed(envelope: Envelope<AnyEvent>): DetectorInput | null {
    const partition = partitionKey(envelope.topic, envelope.partition);
    this.fed.set(partition, BigInt(envelope.offset));
    return detectorInputOf(envelope.value, partition, this.runId);
  }

  /** A delivery by the group consumer: fed when new; a redelivery waits for its first delivery's alerts. */
  received(envelope: Envelope<AnyEvent>): Delivery {
    const partition = partitionKey(envelope.topic, envelope.partition);
    const offset = BigInt(envelope.offset);
    const key = `${partition}/${envelope.offset}`;
    const last = this.fed.get(partition);
    if (last !== undefined && offset <= last) return { envelope, input: null, firstDelivery: this.writing.get(key)?.promise ?? Promise.resolve() };
    this.fed.set(partition, offset);
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.writing.set(key, { promise, resolve });
    return { envelope, input: detectorInputOf(envelope.value, partition, this.runId), firstDelivery: null };
  }

  /** The delivery's alerts are written: a first delivery releases its redeliveries. Acknowledge it after this. */
  written(delivery: Delivery): void {
    if (delivery.firstDelivery !== null) return;
    const key = `${partitionKey(delivery.envelope.topic, delivery.envelope.partition)}/${delivery.envelope.offset}`;
    this.writing.get(key)?.resolve();
    this.writing.delete(key);
  }
}

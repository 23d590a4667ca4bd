// Replay: an Observable over a topic from a position to an end, for any consumer (off-policy training,
// re-computing advantages with today's settings, rebuilding a ClickHouse table). It reads with an
// ephemeral consumer group and commits nothing, so it never disturbs the live processors.
//
// The end is fixed when the replay starts (the high watermark, or the offset of a timestamp), so a
// replay of a live topic completes instead of following it forever.
import type { Admin, Kafka } from 'kafkajs';
import { retryRetriable } from './retry.js';
import { TopicConsumer, type TopicConsumerOptions } from './topic-consumer.js';

/** Where a replay starts or ends, on every partition of the topic. */
export type ReplayPosition =
  | 'earliest'
  | 'latest'
  | { readonly offset: bigint | number }
  | { readonly offsets: Readonly<Record<number, bigint | number>> }
  | { readonly timestamp: number };

export interface ReplayOptions<T> extends Pick<TopicConsumerOptions<T>, 'decode' | 'classify' | 'maxInFlight' | 'autoAck'> {
  readonly topic: string;
  readonly from?: ReplayPosition;
  /** Exclusive end; defaults to the high watermark at start. */
  readonly to?: ReplayPosition;
}

export async function positionsOf(admin: Admin, topic: string, position: ReplayPosition): Promise<Map<number, bigint>> {
  const watermarks = await retryRetriable(() => admin.fetchTopicOffsets(topic));
  const result = new Map<number, bigint>();
  if (typeof position === 'object' && 'timestamp' in position) {
    // The first offset whose timestamp is ≥ the given time, or the high watermark when there is none.
    for (const p of await retryRetriable(() => admin.fetchTopicOffsetsByTimestamp(topic, position.timestamp))) {
      const high = watermarks.find((w) => w.partition === p.partition)!.high;
      result.set(p.partition, BigInt(p.offset === '-1' ? high : p.offset));
    }
    return result;
  }
  for (const w of watermarks) {
    const low = BigInt(w.low);
    const high = BigInt(w.high);
    let offset: bigint;
    if (position === 'earliest') offset = low;
    else if (position === 'latest') offset = high;
    else if ('offset' in position) offset = BigInt(position.offset);
    else offset = BigInt(position.offsets[w.partition] ?? low);
    result.set(w.partition, offset < low ? low : offset > high ? high : offset);
  }
  return result;
}

/** Builds a consumer that emits every message of `topic` in [from, to) and then completes. */
export async function createReplay<T>(kafka: Kafka, options: ReplayOptions<T>): Promise<TopicConsumer<T>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const start = await positionsOf(admin, options.topic, options.from ?? 'earliest');
    const end = await positionsOf(admin, options.topic, options.to ?? 'latest');
    const key = (partition: number) => `${options.topic}/${partition}`;
    return new TopicConsumer(kafka, {
      topics: [options.topic],
      decode: options.decode,
      classify: options.classify,
      // Replay acks on emission unless the caller wants backpressure (autoAck: false, then ack()).
      autoAck: options.autoAck ?? true,
      maxInFlight: options.maxInFlight ?? 10000,
      // Rejected payloads were dead-lettered when first consumed; replay counts them in stats.skipped.
      deadLetters: 'skip',
      fromBeginning: true,
      startOffsets: new Map([...start].map(([p, o]) => [key(p), o])),
      endOffsets: new Map([...end].map(([p, o]) => [key(p), o])),
    });
  } finally {
    await admin.disconnect();
  }
}

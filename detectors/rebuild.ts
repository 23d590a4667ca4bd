// The detectors' state on restart. Detectors are windowed, so their state is rebuilt by replay: before the
// group is joined, every partition of the input topics is replayed from its beginning up to the group's
// committed offset into the engine, with the alerts dropped — they were written before those offsets were
// committed. The group then continues from the committed offsets with warm detectors.
import { lastValueFrom, map } from 'rxjs';
import type { Kafka } from 'kafkajs';
import type { AnyEvent } from '../schemas/index.js';
import { classifyDecodeError } from '../streams/event-consumer.js';
import { createReplay } from '../streams/replay.js';
import { retryRetriable } from '../streams/retry.js';
import type { Deliveries } from './deliveries.js';
import { partitionKey } from './detector-input.js';
import type { CollapseEngine } from './engine.js';

/** 'topic/partition' for every partition of a topic. */
export async function partitionsOf(kafka: Kafka, topic: string): Promise<string[]> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [metadata] = (await retryRetriable(() => admin.fetchTopicMetadata({ topics: [topic] }))).topics;
    return (metadata?.partitions ?? []).map((p) => partitionKey(topic, p.partitionId)).sort();
  } finally {
    await admin.disconnect();
  }
}

/**
 * Where the replay of a topic ends, per partition: the group's committed offset, for the partitions whose
 * commit lies past their first offset (`lows`); null when there is nothing to replay. (No commit is -1.)
 */
export function replayEnds(committed: readonly { readonly partition: number; readonly offset: string }[], lows: ReadonlyMap<number, bigint>): Record<number, bigint> | null {
  const ends: Record<number, bigint> = {};
  for (const { partition, offset } of committed) {
    const end = BigInt(offset);
    if (end > (lows.get(partition) ?? 0n)) ends[partition] = end;
  }
  return Object.keys(ends).length > 0 ? ends : null;
}

/** Per topic, partition → committed offset of the group (only partitions with a commit past their start). */
async function committedRanges(kafka: Kafka, groupId: string, topics: readonly string[]): Promise<Map<string, Record<number, bigint>>> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ranges = new Map<string, Record<number, bigint>>();
    for (const { topic, partitions } of await retryRetriable(() => admin.fetchOffsets({ groupId, topics: [...topics] }))) {
      const lows = new Map((await retryRetriable(() => admin.fetchTopicOffsets(topic))).map((w) => [w.partition, BigInt(w.low)]));
      const ends = replayEnds(partitions, lows);
      if (ends !== null) ranges.set(topic, ends);
    }
    return ranges;
  } finally {
    await admin.disconnect();
  }
}

/** Replays the committed part of the input topics into the engine (alerts dropped); returns how many inputs that was. */
export async function rebuildEngine(
  kafka: Kafka,
  {
    groupId,
    topics,
    decode,
    engine,
    deliveries,
  }: { groupId: string; topics: readonly string[]; decode: (payload: Buffer | null) => AnyEvent; engine: CollapseEngine; deliveries: Deliveries },
): Promise<number> {
  let replayed = 0;
  for (const [topic, ends] of await committedRanges(kafka, groupId, topics)) {
    const replay = await createReplay(kafka, { topic, decode, classify: classifyDecodeError, from: 'earliest', to: { offsets: ends } });
    await lastValueFrom(
      replay.events$.pipe(
        map((envelope) => {
          const input = deliveries.replayed(envelope);
          if (input !== null) engine.observe(input); // alerts dropped: written before the offsets were committed
          replayed++;
        }),
      ),
      { defaultValue: undefined },
    );
  }
  return replayed;
}

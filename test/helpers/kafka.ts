// Integration-test helpers: a unique topic and group per test (so tests never see each other's
// events), and waiting by polling a condition, never by sleeping a fixed time.
import { randomBytes } from 'node:crypto';
import { firstValueFrom, lastValueFrom, type Observable } from 'rxjs';
import { take, toArray, timeout } from 'rxjs/operators';
import type { Kafka } from 'kafkajs';
import { topicName, type TrajflowConfig } from '../../core/config.js';
import type { EventName, EventTypes } from '../../schemas/index.js';
import { classifyDecodeError, createReplay, eventDecoder, type Backbone } from '../../streams/index.js';

export function uniqueName(prefix: string): string {
  return `test.${prefix}.${Date.now().toString(36)}.${randomBytes(3).toString('hex')}`;
}

export async function createTopic(kafka: Kafka, prefix: string, partitions = 1): Promise<string> {
  const topic = uniqueName(prefix);
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }], waitForLeaders: true });
  } finally {
    await admin.disconnect();
  }
  return topic;
}

/** Polls `condition` every `everyMs` until it is true; fails with `what` after `timeoutMs`. */
export async function waitFor(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30000, everyMs = 50): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

/** The first `count` values of an Observable, or a timeout error naming how many were expected. */
export function collect<T>(source: Observable<T>, count: number, timeoutMs = 30000): Promise<T[]> {
  return firstValueFrom(
    source.pipe(
      take(count),
      toArray(),
      timeout({
        first: timeoutMs,
        with: () => {
          throw new Error(`expected ${count} values within ${timeoutMs} ms`);
        },
      }),
    ),
  );
}

/** Every event on `<config's prefix>.<topic>` from the beginning to its end now, decoded as `event`. */
export async function readEvents<N extends EventName>(backbone: Pick<Backbone, 'kafka' | 'codec'>, config: TrajflowConfig, topic: string, event: N): Promise<EventTypes[N][]> {
  const replay = await createReplay(backbone.kafka, { topic: topicName(config, topic), decode: eventDecoder(backbone.codec, event), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value);
}

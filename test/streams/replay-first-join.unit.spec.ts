// Unit tier: a replay (a TopicConsumer with start and end offsets, no consumer group) whose kafkajs consumer's
// first join fails the way a freshly started cluster makes it fail — "The coordinator is loading", which kafkajs
// answers by restarting the consumer by itself. kafkajs is an in-memory double here (only the calls TopicConsumer
// makes); the real broker's side is in replay.int.spec.ts and test/faults/broker-loss.e2e.spec.ts.
//
// Found in CI (2026-12-02): the processors read their episode marks with such a replay at start; on a fresh
// 3-broker cluster the state topic was empty, the first join crashed and was restarted, and the replay never
// completed — no batch ever arrives for an empty partition — so the processors hung before reading a step.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Kafka } from 'kafkajs';
import { lastValueFrom, toArray } from 'rxjs';
import { TopicConsumer } from '../../streams/topic-consumer.js';

const EVENTS = { GROUP_JOIN: 'group_join', CRASH: 'crash', END_BATCH_PROCESS: 'end_batch_process' } as const;

/** A kafkajs consumer whose first run() crashes with a retriable error and restarts by itself, as kafkajs does. */
class CrashingFirstJoin extends EventEmitter {
  readonly events = EVENTS;
  runs = 0;
  eachBatch: ((payload: unknown) => Promise<void>) | null = null;
  stopped = false;

  async connect(): Promise<void> {}
  async subscribe(): Promise<void> {}
  async run(options: { eachBatch: (payload: unknown) => Promise<void> }): Promise<void> {
    this.runs++;
    this.eachBatch = options.eachBatch;
    const error = Object.assign(new Error("The coordinator is loading and hence can't process requests for this group"), { name: 'KafkaJSProtocolError', retriable: true });
    this.emit(EVENTS.CRASH, { payload: { error, groupId: 'replay', restart: true } });
  }
  seek(): void {
    throw new Error('Consumer group was not initialized, consumer#run must be called first');
  }
  /** kafkajs' restart: a join that succeeds, then one fetched batch per partition given. */
  async restartAndDeliver(topic: string, batches: ReadonlyArray<{ partition: number; offsets: readonly number[] }>): Promise<void> {
    this.emit(EVENTS.GROUP_JOIN, { payload: { memberAssignment: { [topic]: batches.map((b) => b.partition) } } });
    for (const { partition, offsets } of batches) {
      let resolved = -1;
      await this.eachBatch!({
        batch: { topic, partition, messages: offsets.map((o) => ({ offset: String(o), key: null, value: Buffer.from(`m${o}`), timestamp: '0' })) },
        resolveOffset: (offset: string) => (resolved = Number(offset)),
        heartbeat: async () => undefined,
        isRunning: () => !this.stopped,
        isStale: () => false,
      });
      this.emit(EVENTS.END_BATCH_PROCESS, { payload: { topic, partition, lastOffset: String(resolved) } });
    }
  }
  async commitOffsets(): Promise<void> {}
  async stop(): Promise<void> {
    this.stopped = true;
  }
  async disconnect(): Promise<void> {}
}

function fakeKafka(): { kafka: Kafka; consumers: CrashingFirstJoin[] } {
  const consumers: CrashingFirstJoin[] = [];
  const kafka = {
    consumer: () => {
      const consumer = new CrashingFirstJoin();
      consumers.push(consumer);
      return consumer;
    },
  } as unknown as Kafka;
  return { kafka, consumers };
}

function replay(kafka: Kafka, start: Record<string, bigint>, end: Record<string, bigint>): TopicConsumer<string> {
  return new TopicConsumer(kafka, {
    topics: ['state'],
    decode: (payload) => payload!.toString('utf8'),
    classify: () => undefined,
    deadLetters: 'skip',
    autoAck: true,
    startOffsets: new Map(Object.entries(start)),
    endOffsets: new Map(Object.entries(end)),
  });
}

/** Resolves with what the replay emitted once it completes; rejects after `ms` without completion. */
function completes<T>(consumer: TopicConsumer<T>, ms = 2000): Promise<T[]> {
  return Promise.race([
    lastValueFrom(consumer.events$.pipe(toArray())).then((envelopes) => envelopes.map((e) => e.value)),
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the replay did not complete within ${ms} ms`)), ms).unref()),
  ]);
}

test('a replay of empty ranges completes at once, without joining a group (no coordinator needed)', async () => {
  const { kafka, consumers } = fakeKafka();
  const values = await completes(replay(kafka, { 'state/0': 0n, 'state/1': 5n }, { 'state/0': 0n, 'state/1': 5n }));
  assert.deepEqual(values, []);
  assert.equal(consumers.length, 0, 'no kafkajs consumer was created');
});

test('a first join that kafkajs restarts: the restarted consumer reads the range from the beginning, skips what precedes the start, and the replay completes', async () => {
  const { kafka, consumers } = fakeKafka();
  const consumer = replay(kafka, { 'state/0': 2n, 'state/1': 0n }, { 'state/0': 4n, 'state/1': 0n });
  const done = completes(consumer);
  // Wait for the first run (which crashed); the seek of the start offsets could not happen.
  for (let i = 0; i < 100 && consumers[0]?.runs !== 1; i++) await new Promise((resolve) => setImmediate(resolve));
  assert.equal(consumers[0]?.runs, 1);
  await consumers[0]!.restartAndDeliver('state', [{ partition: 0, offsets: [0, 1, 2, 3] }]);
  assert.deepEqual(await done, ['m2', 'm3']);
  assert.ok(consumers[0]!.stopped, 'the consumer was stopped once the range was read');
});

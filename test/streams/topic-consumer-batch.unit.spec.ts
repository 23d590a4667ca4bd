// One fetched batch through TopicConsumer.onBatch, with kafkajs as an in-memory double: messages before the
// start offset are skipped, past the end stop the batch, undecodable ones go to the dead-letter sink (routed,
// or held for their owner to acknowledge), and the last handled offset is resolved once.
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import { test } from 'node:test';
import type { Kafka } from 'kafkajs';
import { lastValueFrom, toArray } from 'rxjs';
import type { DeadLetterInput, HeldDeadLetterSink } from '../../streams/dead-letter.js';
import { TopicConsumer, type TopicConsumerOptions } from '../../streams/topic-consumer.js';

const EVENTS = { GROUP_JOIN: 'group_join', CRASH: 'crash', END_BATCH_PROCESS: 'end_batch_process' } as const;

/** A kafkajs consumer that joins at run() and hands over the batches a test gives it. */
class FakeConsumer extends EventEmitter {
  readonly events = EVENTS;
  eachBatch: ((payload: unknown) => Promise<void>) | null = null;
  resolved: string[] = [];

  async connect(): Promise<void> {}
  async subscribe(): Promise<void> {}
  async run(options: { eachBatch: (payload: unknown) => Promise<void> }): Promise<void> {
    this.eachBatch = options.eachBatch;
    this.emit(EVENTS.GROUP_JOIN, { payload: { memberAssignment: { t: [0] } } });
  }
  seek(): void {}
  async deliver(partition: number, payloads: readonly string[]): Promise<void> {
    await this.eachBatch!({
      batch: { topic: 't', partition, messages: payloads.map((p, o) => ({ offset: String(o), key: null, value: Buffer.from(p), timestamp: '0' })) },
      resolveOffset: (offset: string) => this.resolved.push(offset),
      heartbeat: async () => undefined,
      isRunning: () => true,
      isStale: () => false,
    });
  }
  async commitOffsets(): Promise<void> {}
  async stop(): Promise<void> {}
  async disconnect(): Promise<void> {}
}

function consumerOf(options: Partial<TopicConsumerOptions<string>>): { consumer: TopicConsumer<string>; fake: () => FakeConsumer | undefined } {
  const fakes: FakeConsumer[] = [];
  const kafka = { consumer: () => (fakes.push(new FakeConsumer()), fakes.at(-1)) } as unknown as Kafka;
  const consumer = new TopicConsumer<string>(kafka, {
    topics: ['t'],
    groupId: 'g',
    commits: 'external',
    decode: (payload) => {
      const text = payload!.toString('utf8');
      if (text.startsWith('bad')) throw new Error(`cannot decode ${text}`);
      return text;
    },
    classify: (error) => ({ reason: 'undecodable', detail: (error as Error).message }),
    deadLetters: 'skip',
    autoAck: true,
    ...options,
  });
  return { consumer, fake: () => fakes[0] };
}

async function started(fake: () => FakeConsumer | undefined): Promise<FakeConsumer> {
  for (let i = 0; i < 100 && !fake()?.eachBatch; i++) await new Promise((resolve) => setImmediate(resolve));
  return fake()!;
}

test('skips what precedes the start, routes an undecodable message, stops at the end, resolves the last handled offset', async () => {
  const routed: DeadLetterInput[] = [];
  const { consumer, fake } = consumerOf({
    deadLetters: { route: async (letter) => void routed.push(letter) },
    startOffsets: new Map([['t/0', 1n]]),
    endOffsets: new Map([['t/0', 5n]]),
  });
  const values = lastValueFrom(consumer.events$.pipe(toArray()));
  const kafkajs = await started(fake);
  await kafkajs.deliver(0, ['m0', 'm1', 'bad2', 'm3', 'm4', 'm5', 'm6']);
  assert.deepEqual(
    (await values).map((e) => e.value),
    ['m1', 'm3', 'm4'],
  );
  assert.deepEqual(kafkajs.resolved, ['4']);
  assert.deepEqual(
    routed.map((l) => [l.sourceOffset, l.detail]),
    [['2', 'cannot decode bad2']],
  );
  assert.equal(consumer.stats.delivered, 3);
  assert.equal(consumer.stats.deadLettered, 1);
});

test('a held dead letter counts its bytes in flight until its owner acknowledges it; a skipped one is only counted', async () => {
  const held: Array<{ offset: string; ack: () => void }> = [];
  const sink: HeldDeadLetterSink = { hold: (_letter, receipt) => void held.push(receipt) };
  const { consumer, fake } = consumerOf({ deadLetters: sink });
  consumer.events$.subscribe();
  const kafkajs = await started(fake);
  await kafkajs.deliver(0, ['m0', 'bad1']);
  assert.deepEqual(
    held.map((h) => h.offset),
    ['1'],
  );
  assert.equal(consumer.inFlightBytes, 4);
  held[0]!.ack();
  assert.equal(consumer.inFlightBytes, 0);
  assert.deepEqual(kafkajs.resolved, ['1']);
  await consumer.close({ drain: false });

  const skipping = consumerOf({});
  skipping.consumer.events$.subscribe();
  const other = await started(skipping.fake);
  await other.deliver(0, ['bad0', 'm1']);
  assert.deepEqual([skipping.consumer.stats.skipped, skipping.consumer.stats.delivered, skipping.consumer.inFlightBytes], [1, 1, 0]);
  await skipping.consumer.close({ drain: false });
});

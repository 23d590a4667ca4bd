// Integration (real Kafka): replay from an offset or a timestamp to an end, and the schema topic.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig } from '../../core/config.js';
import { SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, loadSchemasFromTopic, publishSchemas, type Backbone } from '../../streams/index.js';
import { sampleEvents } from '../../bench/load/events.js';
import { createTopic, waitFor } from '../helpers/kafka.js';

let backbone: Backbone;
before(async () => {
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-replay' });
});
after(async () => {
  await backbone.close();
});

const step = (i: number): StepEvent => ({ ...sampleEvents.step, eventId: `replay-${i}`, stepIndex: i, groupId: `g${i % 3}` });

async function replaySteps(topic: string, range: Pick<Parameters<typeof createReplay>[1], 'from' | 'to'>): Promise<number[]> {
  const replay = await createReplay(backbone.kafka, { topic, ...range, decode: eventDecoder(backbone.codec, 'step'), classify: classifyDecodeError });
  const values = await lastValueFrom(replay.events$.pipe(toArray()));
  return values.map((e) => e.value.stepIndex).sort((a, b) => a - b);
}

test('replays a range of offsets and completes at the end it was given', async () => {
  const topic = await createTopic(backbone.kafka, 'replay-offsets', 1);
  for (let i = 0; i < 50; i++) void backbone.producer.send(topic, 'step', step(i), 'g');
  await backbone.producer.flush();
  assert.deepEqual(
    await replaySteps(topic, { from: { offset: 10 }, to: { offset: 20 } }),
    Array.from({ length: 10 }, (_, i) => 10 + i),
  );
  assert.deepEqual(
    await replaySteps(topic, {}),
    Array.from({ length: 50 }, (_, i) => i),
  );
  assert.deepEqual(await replaySteps(topic, { from: 'latest' }), []);
});

test('replays from a timestamp across partitions, stopping at the high watermark of its start', async () => {
  const topic = await createTopic(backbone.kafka, 'replay-time', 3);
  await Promise.all(Array.from({ length: 30 }, (_, i) => backbone.producer.send(topic, 'step', step(i), `g${i % 3}`)));
  const before = Date.now();
  await waitFor(() => Date.now() > before, 'the clock to move past the first batch');
  const from = Date.now();
  await Promise.all(Array.from({ length: 30 }, (_, i) => backbone.producer.send(topic, 'step', step(100 + i), `g${i % 3}`)));
  assert.deepEqual(
    await replaySteps(topic, { from: { timestamp: from } }),
    Array.from({ length: 30 }, (_, i) => 100 + i),
  );
});

test('every schema the project writes is on the schemas topic and loads into an empty registry', async () => {
  const topic = await createTopic(backbone.kafka, 'schemas', 1);
  const published = await publishSchemas(backbone.producer, backbone.registry, topic);
  const empty = new SchemaRegistry();
  const loaded = await loadSchemasFromTopic(backbone.kafka, empty, topic);
  assert.equal(loaded, published);
  assert.deepEqual([...empty.entries()].map((e) => e.fingerprintHex).sort(), [...backbone.registry.entries()].map((e) => e.fingerprintHex).sort());
});

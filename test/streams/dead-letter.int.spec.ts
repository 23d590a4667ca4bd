// Integration (real Kafka): every kind of bad input lands in the dead-letter topic with its reason and
// source position, while the good events around it flow on in order.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig } from '../../core/config.js';
import { EventCodec, type StepEvent } from '../../schemas/index.js';
import { DeadLetterRoute, connectBackbone, createEventConsumer, createReplay, eventDecoder, classifyDecodeError, type Backbone } from '../../streams/index.js';
import { sampleEvents } from '../../bench/load/events.js';
import { collect, createTopic, uniqueName } from '../helpers/kafka.js';

let backbone: Backbone;
before(async () => {
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-dead-letter' });
});
after(async () => {
  await backbone.close();
});

const good = (i: number): StepEvent => ({ ...sampleEvents.step, eventId: `good-${i}`, stepIndex: i });

test('each bad-input kind is dead-lettered with its reason while good events flow on', async () => {
  const topic = await createTopic(backbone.kafka, 'dlq-source', 1);
  const deadLetterTopic = await createTopic(backbone.kafka, 'dlq', 1);
  const encoded = backbone.codec.encode('step', good(99));
  const unknownFingerprint = Buffer.from(encoded);
  unknownFingerprint.fill(0x5a, 2, 10);
  const invalid = backbone.codec.encode('step', { ...good(98), actionLogProbs: [0.5] }); // fits Avro, breaks the step's rules
  const oversize = backbone.codec.encode('step', { ...good(97), observation: 'x'.repeat(100_000) });
  const bad: Array<[string, Buffer | null]> = [
    ['bad-marker', Buffer.from('{"json":"is not an Avro single-object event"}')],
    ['unknown-fingerprint', unknownFingerprint],
    ['truncated', encoded.subarray(0, Math.floor(encoded.length / 2))],
    ['invalid-value', invalid],
    ['oversize', oversize],
    ['truncated', null],
  ];
  // good-0, bad, good-1, bad, … good-6: a bad message at every odd offset.
  const send = (value: Buffer | null) => backbone.producer.sendRaw(topic, { key: 'group-x', value });
  await send(backbone.codec.encode('step', good(0)));
  for (const [i, [, payload]] of bad.entries()) {
    await send(payload);
    await send(backbone.codec.encode('step', good(i + 1)));
  }

  // A consumer whose codec refuses events over 64 KiB, so the 100 KB observation is oversize.
  const strictCodec = new EventCodec(backbone.registry, { maxEventBytes: 64 * 1024 });
  const consumer = createEventConsumer(backbone.kafka, strictCodec, 'step', {
    topic,
    groupId: uniqueName('dlq'),
    deadLetters: new DeadLetterRoute(backbone.producer, deadLetterTopic),
  });
  const received = await collect(consumer.events$, bad.length + 1);
  for (const envelope of received) envelope.ack();
  await consumer.close();
  assert.deepEqual(
    received.map((e) => e.value.eventId),
    ['good-0', 'good-1', 'good-2', 'good-3', 'good-4', 'good-5', 'good-6'],
  );
  assert.equal(consumer.stats.deadLettered, bad.length);

  const replay = await createReplay(backbone.kafka, {
    topic: deadLetterTopic,
    decode: eventDecoder(backbone.codec, 'dead_letter'),
    classify: classifyDecodeError,
  });
  const letters = (await collect(replay.events$, bad.length)).map((e) => e.value);
  assert.deepEqual(
    letters.map((l) => l.reason),
    bad.map(([reason]) => reason),
  );
  assert.deepEqual(
    letters.map((l) => l.sourceOffset),
    [1, 3, 5, 7, 9, 11],
  );
  for (const [i, letter] of letters.entries()) {
    assert.equal(letter.sourceTopic, topic);
    assert.equal(letter.sourcePartition, 0);
    assert.equal(letter.key?.toString(), 'group-x');
    assert.ok(letter.detail.length > 0, 'a dead letter says what was wrong');
    // The original bytes are kept, so nothing is lost: they can be fixed and re-published.
    assert.deepEqual(letter.payload, bad[i]![1] ?? Buffer.alloc(0));
  }
});

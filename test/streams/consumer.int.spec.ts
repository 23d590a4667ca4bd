// Integration (real Kafka, started by `trajflow up`): the typed consumer Observable end to end.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { concatMap, delay, of, tap } from 'rxjs';
import { loadConfig } from '../../core/config.js';
import { StepPublisher, TopicConsumer, classifyDecodeError, connectBackbone, createEventConsumer, eventDecoder, type Backbone } from '../../streams/index.js';
import type { StepEvent } from '../../schemas/index.js';
import { sampleEvents } from '../../bench/load/events.js';
import { collect, createTopic, uniqueName, waitFor } from '../helpers/kafka.js';

let backbone: Backbone;

before(async () => {
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-consumer' });
});
after(async () => {
  await backbone.close();
});

function step(group: number, episode: number, index: number): StepEvent {
  return {
    ...sampleEvents.step,
    eventId: `g${group}-e${episode}-s${index}`,
    groupId: `group-${group}`,
    episodeId: `group-${group}-episode-${episode}`,
    stepIndex: index,
    reward: index / 10,
  };
}

test('steps published with the SDK come out of the consumer Observable equal and in order per key', async () => {
  const topic = await createTopic(backbone.kafka, 'sdk-order', 3);
  const publisher = new StepPublisher(backbone.producer, topic);
  const sent: StepEvent[] = [];
  for (let index = 0; index < 20; index++) {
    for (let group = 0; group < 6; group++) sent.push(step(group, 0, index));
  }
  await publisher.publishAll(sent);

  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
    topic,
    groupId: uniqueName('sdk-order'),
    deadLetters: backbone.deadLetters,
  });
  const received = await collect(consumer.events$, sent.length);
  for (const envelope of received) envelope.ack();
  await consumer.close();

  assert.equal(received.length, sent.length);
  for (let group = 0; group < 6; group++) {
    const mine = (events: StepEvent[]) => events.filter((e) => e.groupId === `group-${group}`);
    // Equal field for field (log-probs are Avro floats: compare after float32 rounding), in order.
    const expected = mine(sent).map((e) => ({ ...e, actionLogProbs: e.actionLogProbs.map(Math.fround) }));
    assert.deepEqual(mine(received.map((r) => r.value)), expected);
    // The key is the group id, so one group's steps share a partition.
    assert.equal(new Set(received.filter((r) => r.value.groupId === `group-${group}`).map((r) => r.partition)).size, 1);
  }
});

test('backpressure: no more than maxInFlight unacknowledged events while a slow subscriber works', async () => {
  const topic = await createTopic(backbone.kafka, 'backpressure', 2);
  const total = 300;
  await Promise.all(Array.from({ length: total }, (_, i) => backbone.producer.send(topic, 'step', step(i % 4, 0, i), `group-${i % 4}`)));

  const maxInFlight = 16;
  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
    topic,
    groupId: uniqueName('backpressure'),
    deadLetters: backbone.deadLetters,
    maxInFlight,
  });
  let delivered = 0;
  let acked = 0;
  let peak = 0;
  const done = await collect(
    consumer.events$.pipe(
      tap(() => {
        delivered++;
        peak = Math.max(peak, delivered - acked);
      }),
      // A slow downstream step: concatMap queues what arrives while each event waits a timer tick.
      concatMap((envelope) => of(envelope).pipe(delay(1))),
      tap((envelope) => {
        envelope.ack();
        acked++;
      }),
    ),
    total,
    60000,
  );
  await consumer.close();
  assert.equal(done.length, total);
  assert.ok(peak <= maxInFlight, `peak in flight ${peak} > ${maxInFlight}`);
  assert.ok(peak >= maxInFlight / 2, `the limit was not exercised (peak ${peak})`);
});

test('backpressure by bytes: the payload bytes held unacknowledged stay under maxInFlightBytes plus one event', async () => {
  const topic = await createTopic(backbone.kafka, 'backpressure-bytes', 2);
  const total = 200;
  await Promise.all(Array.from({ length: total }, (_, i) => backbone.producer.send(topic, 'step', step(i % 4, 0, i), `group-${i % 4}`)));
  const eventBytes = backbone.codec.encode('step', step(0, 0, 0)).length;
  const maxInFlightBytes = eventBytes * 10;
  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
    topic,
    groupId: uniqueName('backpressure-bytes'),
    deadLetters: backbone.deadLetters,
    // The count bound far above what the byte bound lets through, so only the bytes can hold it back.
    maxInFlight: total,
    maxInFlightBytes,
  });
  let peakBytes = 0;
  const done = await collect(
    consumer.events$.pipe(
      tap(() => (peakBytes = Math.max(peakBytes, consumer.inFlightBytes))),
      concatMap((envelope) => of(envelope).pipe(delay(1))),
      tap((envelope) => envelope.ack()),
    ),
    total,
    60000,
  );
  await consumer.close();
  assert.equal(done.length, total);
  // The gate lets a message through while fewer bytes than the limit are held, so one event may overshoot.
  assert.ok(peakBytes < maxInFlightBytes + eventBytes * 1.5, `peak ${peakBytes} bytes in flight, limit ${maxInFlightBytes}`);
  assert.ok(peakBytes >= maxInFlightBytes / 2, `the byte limit was not exercised (peak ${peakBytes} bytes)`);
  assert.equal(consumer.inFlightBytes, 0, 'every byte released by its ack');
});

const child = fileURLToPath(new URL('./helpers/consume-child.ts', import.meta.url));

interface ChildLine {
  readonly event: string;
  readonly offsets?: string[];
}

function startChild(args: string[]) {
  const proc = spawn(process.execPath, ['--import', 'tsx', child, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: ChildLine[] = [];
  createInterface({ input: proc.stdout }).on('line', (line) => lines.push(JSON.parse(line) as ChildLine));
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return { proc, lines, exited };
}

test('a consumer killed before committing gets its uncommitted events again after restart', async () => {
  const topic = await createTopic(backbone.kafka, 'crash', 1);
  const groupId = uniqueName('crash');
  const total = 40;
  const acknowledged = 15;
  await Promise.all(Array.from({ length: total }, (_, i) => backbone.producer.send(topic, 'step', step(0, 0, i), 'group-0')));

  // The child acks the first 15, waits until that position is committed, receives the other 25
  // without acking them, reports, and is then killed with SIGKILL: no chance to commit anything more.
  const first = startChild([topic, groupId, String(total), String(acknowledged), 'hang']);
  await waitFor(() => first.lines.some((l) => l.event === 'received-all'), 'the first consumer to receive every event', 60000);
  first.proc.kill('SIGKILL');
  await first.exited;

  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', { topic, groupId, deadLetters: backbone.deadLetters });
  const again = await collect(consumer.events$, total - acknowledged, 60000);
  for (const envelope of again) envelope.ack();
  await consumer.close();
  assert.deepEqual(
    again.map((e) => e.value.stepIndex),
    Array.from({ length: total - acknowledged }, (_, i) => acknowledged + i),
  );
});

test('on SIGTERM the consumer commits what was processed and leaves; a restart starts after it', async () => {
  const topic = await createTopic(backbone.kafka, 'sigterm', 1);
  const groupId = uniqueName('sigterm');
  const total = 30;
  await Promise.all(Array.from({ length: total }, (_, i) => backbone.producer.send(topic, 'step', step(1, 0, i), 'group-1')));

  const first = startChild([topic, groupId, String(total), String(total), 'signals']);
  await waitFor(() => first.lines.some((l) => l.event === 'received-all'), 'the child to process every event', 60000);
  first.proc.kill('SIGTERM');
  assert.equal(await first.exited, 0);

  await Promise.all(Array.from({ length: 5 }, (_, i) => backbone.producer.send(topic, 'step', step(1, 0, total + i), 'group-1')));
  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', { topic, groupId, deadLetters: backbone.deadLetters });
  const next = await collect(consumer.events$, 5, 60000);
  for (const envelope of next) envelope.ack();
  await consumer.close();
  // Only the 5 new events: the 30 processed before SIGTERM were committed on the way out.
  assert.deepEqual(
    next.map((e) => e.value.stepIndex),
    [30, 31, 32, 33, 34],
  );
});

test('a group consumer that kafkajs gives up on ("Failed to find group coordinator") starts over from the committed offsets', { timeout: 90_000 }, async () => {
  // kafkajs (CommonJS) spreads its error classes into module.exports: reachable through the default export.
  const kafkajs = (await import('kafkajs')).default as unknown as Record<string, new (e: unknown) => Error>;
  const { KafkaJSGroupCoordinatorNotFound, KafkaJSNonRetriableError } = kafkajs as {
    KafkaJSGroupCoordinatorNotFound: new (e: unknown) => Error;
    KafkaJSNonRetriableError: new (e: unknown) => Error;
  };
  const topic = await createTopic(backbone.kafka, 'reconnect', 2);
  const sent = Array.from({ length: 40 }, (_, i) => step(i % 4, 0, i));
  await new StepPublisher(backbone.producer, topic).publishAll(sent);
  // The 21st message read makes kafkajs crash for good with the error a broker outage gives it (the
  // consumer's decode is where a test can raise it; classify does not know it, so it ends the batch).
  let read = 0;
  const decode = eventDecoder(backbone.codec, 'step');
  const decodeStep = (bytes: Buffer | null) => {
    if (++read === 21) throw new KafkaJSNonRetriableError(new KafkaJSGroupCoordinatorNotFound('Failed to find group coordinator'));
    return decode(bytes);
  };
  const consumer = new TopicConsumer<StepEvent>(backbone.kafka, {
    topics: [topic],
    groupId: uniqueName('reconnect'),
    decode: decodeStep,
    classify: classifyDecodeError,
    deadLetters: backbone.deadLetters,
    commitIntervalMs: 100,
  });
  const seen = new Set<string>();
  let failed: unknown;
  const subscription = consumer.events$.subscribe({
    next: (envelope) => {
      seen.add(envelope.value.eventId);
      envelope.ack();
    },
    error: (error) => (failed = error),
  });
  try {
    await waitFor(() => seen.size === sent.length || failed !== undefined, 'every step, across the reconnect', 60_000);
    assert.equal(failed, undefined, `the stream ended: ${String(failed)}`);
    assert.equal(consumer.stats.reconnects, 1);
    assert.ok(consumer.stats.rebalances >= 2, 'the fresh consumer joined the group again');
  } finally {
    subscription.unsubscribe();
    await consumer.close();
  }

  // Our own errors (a bug) still end the stream at once.
  const topic2 = await createTopic(backbone.kafka, 'reconnect-bug', 1);
  await new StepPublisher(backbone.producer, topic2).publishAll(sent.slice(0, 3));
  const buggy = new TopicConsumer<StepEvent>(backbone.kafka, {
    topics: [topic2],
    groupId: uniqueName('reconnect-bug'),
    decode: () => {
      throw new TypeError('a bug');
    },
    classify: () => undefined,
    deadLetters: backbone.deadLetters,
  });
  const error = await new Promise<unknown>((resolve) => buggy.events$.subscribe({ error: resolve }));
  assert.match(String(error), /a bug/);
  assert.equal(buggy.stats.reconnects, 0);
  await buggy.close();
});

test('a long batch lets the event loop run: a timer set at its first message fires before its last', async () => {
  // One partition, so kafkajs hands the messages over in few large batches; decoding spins 1 ms a message,
  // so a batch handed down without yielding would hold the event loop for hundreds of ms.
  const topic = await createTopic(backbone.kafka, 'yield', 1);
  const total = 400;
  await Promise.all(Array.from({ length: total }, (_, i) => backbone.producer.send(topic, 'step', step(0, 0, i), 'group-0')));
  const spin = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until);
  };
  let decoded = 0;
  let firedAt: number | null = null;
  const decode = eventDecoder(backbone.codec, 'step');
  const consumer = new TopicConsumer(backbone.kafka, {
    topics: [topic],
    groupId: uniqueName('yield'),
    decode: (payload) => {
      if (decoded++ === 0) setTimeout(() => void (firedAt = decoded), 0);
      spin(1);
      return decode(payload);
    },
    classify: classifyDecodeError,
    deadLetters: backbone.deadLetters,
    maxInFlight: total,
    yieldAfterMs: 5,
  });
  const received = await collect(consumer.events$, total);
  for (const envelope of received) envelope.ack();
  await consumer.close();
  assert.ok(firedAt !== null, 'the timer fired');
  // It fired after about yieldAfterMs of decoding, far from the end (the whole topic may come as one batch).
  assert.ok(firedAt < total / 2, `the timer fired after ${firedAt} of ${total} messages`);
});

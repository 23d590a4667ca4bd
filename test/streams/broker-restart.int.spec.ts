// Integration (real Kafka, managed by trajflow): the broker is stopped and started again while a
// producer keeps publishing with retries; every event the producer was told was written is read back.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig } from '../../core/config.js';
import { startKafka, stopKafka } from '../../infra/kafka/server.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, type Backbone } from '../../streams/index.js';
import { sampleEvents } from '../../bench/load/events.js';
import { createTopic, waitFor } from '../helpers/kafka.js';

const config = loadConfig();
let backbone: Backbone;
before(async () => {
  backbone = await connectBackbone(config, { clientId: 'test-restart' });
});
after(async () => {
  await backbone.close();
});

test('no acknowledged event is lost when the broker restarts mid-publish', {
  skip: !config.kafka.managed && 'the broker is external (TRAJFLOW_KAFKA_BROKERS)',
  timeout: 240_000,
}, async () => {
  const topic = await createTopic(backbone.kafka, 'restart', 2);
  const acknowledged = new Set<string>();
  const failed: unknown[] = [];
  let sent = 0;
  let restarted = false;
  let ackedAfterRestart = 0;

  const publishing = (async () => {
    // Load, not a wait: keep a steady stream of sends going until the broker is back and has taken 300 more.
    while (!(restarted && ackedAfterRestart >= 300) && sent < 50_000) {
      for (let i = 0; i < 10; i++, sent++) {
        const eventId = `restart-${sent}`;
        backbone.producer.send(topic, 'step', { ...sampleEvents.step, eventId, stepIndex: sent }, `g${sent % 7}`).then(
          () => {
            acknowledged.add(eventId);
            if (restarted) ackedAfterRestart++;
          },
          (error: unknown) => failed.push(error),
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    await backbone.producer.flush();
  })();

  await waitFor(() => acknowledged.size >= 500, '500 acknowledged events before the restart', 60_000);
  await stopKafka(config);
  await startKafka(config);
  restarted = true;
  await publishing;

  const replay = await createReplay(backbone.kafka, { topic, decode: eventDecoder(backbone.codec, 'step'), classify: classifyDecodeError });
  const stored = (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value.eventId);
  const storedSet = new Set(stored);
  const lost = [...acknowledged].filter((id) => !storedSet.has(id));
  assert.deepEqual(lost, [], `${lost.length} acknowledged events were lost`);
  assert.ok(acknowledged.size >= 800, `only ${acknowledged.size} acknowledged`);
  // With acks=all and retries, every send eventually succeeds; failures would be reported here.
  assert.deepEqual(failed, []);
  console.log(`# restart: sent ${sent}, acknowledged ${acknowledged.size}, stored ${stored.length}, duplicates ${stored.length - storedSet.size}`);
});

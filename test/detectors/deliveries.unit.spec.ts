// What the detectors make of each delivery: a new input is fed to the engine once; a redelivery (after a
// rebalance) is not fed again and is acknowledged only after its first delivery's alerts are written; what
// the rebuild replayed counts as fed, its alerts long written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AnyEvent } from '../../schemas/index.js';
import type { Envelope } from '../../streams/topic-consumer.js';
import { Deliveries } from '../../detectors/deliveries.js';
import { learnerStepEvent, rolloutBatchEvent } from './synthetic.js';

const envelope = (partition: number, offset: number, value: AnyEvent = { event: 'learner_step', value: learnerStepEvent('r', offset) }): Envelope<AnyEvent> => ({
  topic: 'tf.learner.steps',
  partition,
  offset: String(offset),
  key: null,
  timestamp: 0,
  value,
  generation: 1,
  ack: () => undefined,
});

/** Whether a promise has settled, after the microtasks queued so far ran. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  return done;
}

test('a first delivery is fed to the engine, as the input of its event', () => {
  const d = new Deliveries().received(envelope(0, 5));
  assert.equal(d.firstDelivery, null);
  assert.equal(d.input?.type, 'learner_step');
});

test('a redelivery is not fed again, and waits for the alerts of its first delivery', async () => {
  const deliveries = new Deliveries();
  const first = deliveries.received(envelope(0, 5));
  const again = deliveries.received(envelope(0, 5));
  assert.equal(again.input, null);
  assert.ok(again.firstDelivery);
  assert.equal(await settled(again.firstDelivery), false, "the first delivery's alerts are not written yet");
  deliveries.written(first);
  assert.equal(await settled(again.firstDelivery), true);
  deliveries.written(again); // a redelivery releases nothing
});

test('an earlier offset of the partition, its alerts written, is acknowledged at once; other partitions are their own', async () => {
  const deliveries = new Deliveries();
  deliveries.written(deliveries.received(envelope(0, 3)));
  deliveries.written(deliveries.received(envelope(0, 9)));
  const earlier = deliveries.received(envelope(0, 3));
  assert.equal(earlier.input, null);
  assert.equal(await settled(earlier.firstDelivery!), true);
  assert.equal(deliveries.received(envelope(1, 3)).firstDelivery, null, 'partition 1 has fed nothing');
  assert.equal(deliveries.received(envelope(0, 10)).firstDelivery, null, 'past the last offset fed: new');
});

test('what the rebuild replayed counts as fed: delivered again, it is acknowledged at once', async () => {
  const deliveries = new Deliveries();
  const input = deliveries.replayed(envelope(0, 7));
  assert.equal(input?.type, 'learner_step');
  const again = deliveries.received(envelope(0, 7));
  assert.equal(again.input, null);
  assert.equal(await settled(again.firstDelivery!), true);
});

test('watching one run: events of other runs feed nothing (and are acknowledged like any input)', () => {
  const deliveries = new Deliveries('watched');
  const other = deliveries.received(envelope(0, 1, { event: 'rollout_stats', value: rolloutBatchEvent('other', 0) }));
  assert.equal(other.input, null);
  assert.equal(other.firstDelivery, null);
  assert.equal(deliveries.received(envelope(0, 2, { event: 'rollout_stats', value: rolloutBatchEvent('watched', 0) })).input?.type, 'rollout_stats');
});

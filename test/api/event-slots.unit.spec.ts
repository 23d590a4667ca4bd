// Unit: the event-stream limits without sockets: the 503 in all and per client, slots freed once each, and
// the stream settings' defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StreamSlots, slotRefusal } from '../../api/event-slots.js';
import { DEFAULT_MAX_STREAMS, DEFAULT_MAX_STREAMS_PER_CLIENT, eventStreamConfig } from '../../api/events-route.js';
import { DEFAULT_LOOKBACK_MS } from '../../storage/query/events.js';

const limits = { maxStreams: 3, maxStreamsPerClient: 2 };

test('one more stream is refused past the server limit first, then past the client limit', () => {
  assert.equal(slotRefusal(2, 1, limits), undefined);
  assert.equal(slotRefusal(3, 2, limits)?.problem.detail, '3 event streams are open, the most this server keeps; retry later');
  const client = slotRefusal(1, 2, limits);
  assert.equal(client?.status, 503);
  assert.equal(client?.headers['Retry-After'], '10');
  assert.match(client?.problem.detail ?? '', /^this client has 2 event streams open/);
});

test('slots count per client, and a release frees one slot once', () => {
  const slots = new StreamSlots<string>();
  slots.take('s1', 'a');
  slots.take('s2', 'a');
  assert.ok(slots.refusal('a', limits));
  assert.equal(slots.refusal('b', limits), undefined);
  slots.release('s1');
  slots.release('s1');
  assert.equal(slots.size, 1);
  assert.equal(slots.refusal('a', limits), undefined);
  slots.take('s3', 'b');
  slots.take('s4', 'b');
  assert.ok(slots.refusal('c', limits), 'three open in all');
  assert.deepEqual(slots.keys(), ['s2', 's3', 's4']);
  slots.clear();
  assert.equal(slots.has('s2'), false);
  assert.equal(slots.size, 0);
});

test('the stream settings default what is not given', () => {
  assert.deepEqual(eventStreamConfig(), {
    pollMs: 1000,
    heartbeatMs: 15_000,
    maxStreams: DEFAULT_MAX_STREAMS,
    maxStreamsPerClient: DEFAULT_MAX_STREAMS_PER_CLIENT,
    lookbackMs: DEFAULT_LOOKBACK_MS,
  });
  assert.equal(eventStreamConfig({ pollMs: 5 }).pollMs, 5);
});

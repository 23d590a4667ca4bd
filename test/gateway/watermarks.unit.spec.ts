// Unit: how the read barrier gets its watermarks — one request in flight shared by every call it can serve
// (a call is served only by a request sent after it arrived), the latest offsets in one request through kafkajs'
// cluster client, and the admin's request when that client fails — and the Server-Timing header of a call.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import { createKafka } from '../../streams/index.js';
import { parseServerTiming, serverTiming } from '../../gateway/call-timing.js';
import { clusterClientOf, HighWatermarks } from '../../gateway/high-watermarks.js';
import { SharedFetch } from '../../gateway/shared-fetch.js';

/** A fetch whose requests the test answers one by one. */
function manualFetch() {
  const pending: Array<{ resolve: (n: number) => void; reject: (e: Error) => void }> = [];
  let sent = 0;
  const fetch = () =>
    new Promise<number>((resolve, reject) => {
      sent++;
      pending.push({ resolve, reject });
    });
  return { fetch, pending, sent: () => sent };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

test('a request in flight serves only the calls that asked before it; every call asking meanwhile shares the next', async () => {
  const m = manualFetch();
  const shared = new SharedFetch(m.fetch);
  const first = shared.get();
  const second = shared.get();
  const third = shared.get();
  assert.equal(m.sent(), 1, 'the calls asking during the first request wait for the next, and share it');
  m.pending[0]!.resolve(1);
  assert.equal(await first, 1);
  await tick();
  assert.equal(m.sent(), 2);
  m.pending[1]!.resolve(2);
  assert.deepEqual(await Promise.all([second, third]), [2, 2]);
  const later = shared.get();
  assert.equal(m.sent(), 3, 'a call after every request settled sends its own');
  m.pending[2]!.reject(new Error('broker gone'));
  await assert.rejects(later, /broker gone/);
  const after = shared.get();
  m.pending[3]!.resolve(4);
  assert.equal(await after, 4, 'a failed request does not stop the next');
});

test('with several requests allowed in flight, a call sends its own until they are all taken, then joins the queued one', async () => {
  const m = manualFetch();
  const shared = new SharedFetch(m.fetch, 2);
  const [a, b, c, d] = [shared.get(), shared.get(), shared.get(), shared.get()];
  assert.equal(m.sent(), 2);
  m.pending[1]!.resolve(2);
  assert.equal(await b, 2);
  await tick();
  assert.equal(m.sent(), 3, 'the queued request is sent once a slot frees, not before');
  m.pending[2]!.resolve(3);
  m.pending[0]!.resolve(1);
  assert.deepEqual(await Promise.all([a, c, d]), [1, 3, 3]);
  assert.throws(() => new SharedFetch(m.fetch, 0), /maxInFlight/);
});

test("kafkajs' cluster client is there to take (no connection made), and the latest offsets come from one request", async () => {
  assert.notEqual(clusterClientOf(createKafka({ kafka: { brokers: ['127.0.0.1:1'] } } as never)), null);
  const requests: unknown[] = [];
  const cluster = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    addTargetTopic: async () => undefined,
    refreshMetadataIfNecessary: async () => undefined,
    findTopicPartitionMetadata: () => [{ partitionId: 0 }, { partitionId: 1 }],
    fetchTopicsOffset: async (topics: unknown) => {
      requests.push(topics);
      if (requests.length === 2) throw new Error('not the leader');
      return [
        {
          topic: 't',
          partitions: [
            { partition: 0, offset: '7' },
            { partition: 1, offset: '3' },
          ],
        },
      ];
    },
  };
  const admin = {
    fetchTopicOffsets: async () => [
      { partition: 0, offset: '9', high: '9', low: '0' },
      { partition: 1, offset: '4', high: '4', low: '0' },
    ],
  } as unknown as Admin;
  const watermarks = new HighWatermarks('t', admin, cluster);
  assert.deepEqual(
    [...(await watermarks.fetch())],
    [
      [0, 7n],
      [1, 3n],
    ],
  );
  assert.deepEqual(requests[0], [{ topic: 't', fromBeginning: false, partitions: [{ partition: 0 }, { partition: 1 }] }]);
  assert.deepEqual(
    [...(await watermarks.fetch())],
    [
      [0, 9n],
      [1, 4n],
    ],
    "a failed request falls back on the admin's",
  );
  assert.deepEqual(
    [...(await new HighWatermarks('t', admin, null).fetch())],
    [
      [0, 9n],
      [1, 4n],
    ],
  );
});

test("a call's phases go out as a Server-Timing header and read back the same", () => {
  const timing = { upstreamMs: 0.5, barrierMs: 1.25, watermarksMs: 1.2, barrierWaitMs: 0.75, publishMs: 2, recordMs: 3.3 };
  const header = serverTiming(timing);
  assert.equal(header, 'upstream;dur=0.500, barrier;dur=1.250, watermarks;dur=1.200, barrier-wait;dur=0.750, publish;dur=2.000, record;dur=3.300');
  assert.deepEqual(parseServerTiming(header), timing);
  assert.equal(parseServerTiming('upstream;dur=1'), null);
  assert.equal(parseServerTiming(undefined), null);
});

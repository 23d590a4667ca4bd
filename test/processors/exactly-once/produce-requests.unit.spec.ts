// Unit: a transaction's messages split into produce requests that each stay under a per-topic byte limit,
// with every topic's messages in their order across the requests.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_REQUEST_TOPIC_BYTES, splitIntoRequests } from '../../../processors/exactly-once/produce-requests.js';
import { Rng } from '../../../core/rng.js';

const message = (key: string, bytes: number) => ({ key, value: Buffer.alloc(bytes, 1) });
/** The bytes the split counts for a message of the test (key and value are never null here). */
const sizeOf = (m: { key: string | Buffer | null; value: Buffer | null }) => String(m.key).length + m.value!.length + 32;

test('messages under the limit stay one request, as they came', () => {
  const topicMessages = [
    { topic: 'samples', messages: [message('g1', 1000), message('g2', 2000)] },
    { topic: 'state', messages: [{ key: 'mark', value: null }] },
  ];
  assert.deepEqual(splitIntoRequests(topicMessages), [topicMessages]);
  assert.deepEqual(splitIntoRequests([]), []);
});

test('each topic is cut into slices of at most the limit, request i holding slice i of every topic, order kept', () => {
  const rng = new Rng(5);
  for (let trial = 0; trial < 50; trial++) {
    const limit = 10_000 + rng.int(50_000);
    const topicMessages = ['samples', 'trajectories', 'state'].map((topic) => ({
      topic,
      messages: Array.from({ length: rng.int(200) }, (_, i) => message(`${topic}-${i}`, rng.int(3000))),
    }));
    const requests = splitIntoRequests(topicMessages, limit);
    for (const { topic, messages } of topicMessages) {
      const slices = requests.flatMap((request) => request.filter((t) => t.topic === topic).map((t) => t.messages));
      assert.deepEqual(slices.flat(), messages, `trial ${trial}: ${topic} in order`);
      for (const slice of slices) {
        const bytes = slice.reduce((sum, m) => sum + sizeOf(m), 0);
        assert.ok(slice.length === 1 || bytes <= limit, `trial ${trial}: ${topic} slice of ${bytes} bytes above ${limit}`);
      }
      // Slices fill greedily: only a topic's last slice may be followed by nothing; every cut was needed.
      for (let i = 0; i + 1 < slices.length; i++) {
        const next = slices[i + 1]![0]!;
        const bytes = slices[i]!.reduce((sum, m) => sum + sizeOf(m), 0);
        assert.ok(bytes + sizeOf(next) > limit, `trial ${trial}: a cut that was not needed`);
      }
    }
    for (const request of requests) assert.equal(new Set(request.map((t) => t.topic)).size, request.length, 'a topic at most once per request');
  }
});

test('a message above the limit goes alone; the default limit is under a Kafka cluster’s default max.message.bytes', () => {
  const requests = splitIntoRequests([{ topic: 't', messages: [message('a', 10), message('b', 5000), message('c', 10)] }], 1000);
  assert.deepEqual(
    requests.map((r) => r[0]!.messages.map((m) => m.key)),
    [['a'], ['b'], ['c']],
  );
  assert.ok(MAX_REQUEST_TOPIC_BYTES < 1_048_588 - 1024);
});

// Unit: following the policy versions through a broker outage (rollout/follow-policy-versions.ts, followFrom).
// An in-memory source stands in for the TopicConsumer: the follower's logic is what is tested — a kafkajs
// outage starts a new consumer that reads from the beginning, versions already handled are skipped, other
// errors are reported. (test/faults/broker-restart.int.spec.ts runs the real thing against a restarted broker.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Subject } from 'rxjs';
import { followFrom, type VersionSource } from '../../rollout/follow-policy-versions.js';
import type { Envelope } from '../../streams/index.js';
import type { PolicyVersionEvent } from '../../schemas/index.js';
import { waitFor } from '../helpers/kafka.js';

class FakeSource {
  readonly events$ = new Subject<Envelope<PolicyVersionEvent>>();
  readonly stats = { rebalances: 1 } as VersionSource['stats'];
  closed = false;
  async close(): Promise<void> {
    this.closed = true;
  }
  deliver(partition: number, offset: number, runId: string, version: number): void {
    const value = {
      runId,
      version,
      weightsUri: `file:///v${version}`,
      checksum: '0'.repeat(64),
      parentVersion: version - 1,
      learnerStep: version,
      createdAtMs: 0,
    } as PolicyVersionEvent;
    this.events$.next({ topic: 'versions', partition, offset: String(offset), key: null, timestamp: 0, value, generation: 1, ack: () => undefined });
  }
}

/** A kafkajs "gave up" error as the broker restart produced it. */
function coordinatorLost(): Error {
  const cause = Object.assign(new Error('Failed to find group coordinator'), { name: 'KafkaJSGroupCoordinatorNotFound' });
  return Object.assign(new Error('Failed to find group coordinator', { cause }), { name: 'KafkaJSNonRetriableError' });
}

function follow(lastAtStart: Map<number, bigint>) {
  const sources: FakeSource[] = [];
  const seen: number[] = [];
  const errors: unknown[] = [];
  const logs: string[] = [];
  const follower = followFrom(
    lastAtStart,
    () => {
      const source = new FakeSource();
      sources.push(source);
      return source;
    },
    { topic: 'versions', runId: 'run-a', onVersion: (event) => void seen.push(event.version), onError: (error) => errors.push(error) },
    { baseBackoffMs: 1, maxBackoffMs: 2, log: (line) => logs.push(line) },
  );
  return { follower, sources, seen, errors, logs };
}

test('a broker outage starts a new consumer; versions read again are skipped, the new ones handed on in order', async () => {
  const { follower, sources, seen, errors, logs } = follow(new Map([[0, 1n]]));
  sources[0]!.deliver(0, 0, 'run-a', 0);
  sources[0]!.deliver(0, 1, 'run-b', 7); // another run's version: not handed on, but caught up past it
  await follower.caughtUp;
  sources[0]!.deliver(0, 2, 'run-a', 1);
  await waitFor(() => seen.length === 2, 'v1');
  sources[0]!.events$.error(coordinatorLost());
  await waitFor(() => sources.length === 2, 'a second consumer');
  assert.equal(sources[0]!.closed, true, 'the failed consumer is closed');
  assert.match(logs[0]!, /lost the broker.*following again/);
  // The new consumer reads from the beginning of the topic.
  for (const [offset, run, version] of [
    [0, 'run-a', 0],
    [1, 'run-b', 7],
    [2, 'run-a', 1],
    [3, 'run-a', 2],
    [4, 'run-a', 3],
  ] as const) {
    sources[1]!.deliver(0, offset, run, version);
  }
  await waitFor(() => seen.length === 4, 'v2 and v3');
  assert.deepEqual(seen, [0, 1, 2, 3], 'each version once, in order');
  assert.deepEqual(errors, []);
  await follower.close();
  assert.equal(sources[1]!.closed, true);
});

test('an error that is not a broker outage is reported, and no new consumer is started', async () => {
  const { follower, sources, errors } = follow(new Map());
  await follower.caughtUp;
  const bug = new TypeError('a bug in our code');
  sources[0]!.events$.error(bug);
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.deepEqual(errors, [bug]);
  assert.equal(sources.length, 1);
  await follower.close();
});

test('close() during the wait before a reconnect starts nothing more', async () => {
  const { follower, sources } = follow(new Map());
  sources[0]!.events$.error(coordinatorLost());
  await follower.close();
  await new Promise((resolve) => setTimeout(resolve, 20));
  assert.equal(sources.length, 1);
});

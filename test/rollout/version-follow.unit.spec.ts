// Unit: the pure transitions of following the policy versions (rollout/version-follow.ts): catching up
// with the versions on the topic at start, skipping records read again after an outage, and the backoff.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { handledAlready, initialFollowState, isCaughtUp, recordHandled, streamFailed, versionReached, type FollowState } from '../../rollout/version-follow.js';

/** A kafkajs "gave up" error as a broker restart produces it. */
function coordinatorLost(): Error {
  const cause = Object.assign(new Error('Failed to find group coordinator'), { name: 'KafkaJSGroupCoordinatorNotFound' });
  return Object.assign(new Error('Failed to find group coordinator', { cause }), { name: 'KafkaJSNonRetriableError' });
}

const handled = (state: FollowState, partition: number, offset: bigint): FollowState => versionReached(recordHandled(state, partition, offset), partition, offset);

test('an empty topic is caught up at once; a partition is caught up once its last record at start is handled', () => {
  assert.equal(isCaughtUp(initialFollowState(new Map())), true);
  assert.equal(isCaughtUp(initialFollowState(new Map([[0, -1n]]))), true, 'an empty partition has nothing to wait for');
  let state = initialFollowState(
    new Map([
      [0, 1n],
      [1, 0n],
    ]),
  );
  assert.deepEqual([...state.pending], [0, 1]);
  state = handled(state, 0, 0n);
  assert.deepEqual([...state.pending], [0, 1]);
  state = handled(state, 0, 1n);
  assert.deepEqual([...state.pending], [1]);
  assert.equal(isCaughtUp(state), false);
  state = handled(state, 1, 0n);
  assert.equal(isCaughtUp(state), true);
});

test('records at or below the last offset handled on their partition are handled already', () => {
  const state = recordHandled(initialFollowState(new Map()), 0, 2n);
  assert.equal(handledAlready(state, 0, 0n), true);
  assert.equal(handledAlready(state, 0, 2n), true);
  assert.equal(handledAlready(state, 0, 3n), false);
  assert.equal(handledAlready(state, 1, 0n), false, 'another partition has its own offsets');
});

test('each outage in a row waits twice as long up to the cap; a version handled restarts the count', () => {
  const backoff = { baseBackoffMs: 500, maxBackoffMs: 5000 };
  let state = initialFollowState(new Map());
  const waits: number[] = [];
  for (let i = 0; i < 6; i++) {
    const next = streamFailed(state, coordinatorLost(), backoff);
    assert.equal(next.failure.kind, 'reconnect');
    if (next.failure.kind === 'reconnect') {
      waits.push(next.failure.waitMs);
      assert.match(next.failure.line, /^actors: the policy-version stream lost the broker \(Failed to find group coordinator\); following again in \d+ ms/);
    }
    state = next.state;
  }
  assert.deepEqual(waits, [500, 1000, 2000, 4000, 5000, 5000]);
  state = handled(state, 0, 0n);
  assert.equal(state.failures, 0);
  const again = streamFailed(state, coordinatorLost(), backoff).failure;
  assert.deepEqual(again.kind === 'reconnect' && again.waitMs, 500);
});

test('an error that is not a broker outage is to be reported, and counts no failure', () => {
  const state = initialFollowState(new Map());
  const next = streamFailed(state, new TypeError('a bug in our code'), { baseBackoffMs: 1, maxBackoffMs: 2 });
  assert.deepEqual(next.failure, { kind: 'report' });
  assert.equal(next.state, state);
});

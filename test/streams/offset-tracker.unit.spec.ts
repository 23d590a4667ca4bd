import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OffsetTracker } from '../../streams/offset-tracker.js';

const p0 = { topic: 't', partition: 0 };
const p1 = { topic: 't', partition: 1 };

test('commits only up to the first unacknowledged offset of each partition', () => {
  const tracker = new OffsetTracker();
  for (const offset of [10n, 11n, 12n]) tracker.delivered(p0, offset);
  tracker.delivered(p1, 5n);
  const g = tracker.generation;

  assert.equal(tracker.acked(p0, 11n, g), true);
  assert.equal(tracker.acked(p0, 12n, g), true);
  // 10 is still in flight: partition 0 may not move past it. Both partitions are still where this
  // generation resumed (its first deliveries, 10 and 5): nothing to commit.
  assert.deepEqual(tracker.takeCommittable(), []);
  assert.equal(tracker.acked(p0, 10n, g), true);
  assert.deepEqual(tracker.takeCommittable(), [{ topic: 't', partition: 0, offset: 13n }]);
  assert.equal(tracker.inFlight, 1);
});

test('does not repeat a position already taken, and gives it back after a failed commit', () => {
  const tracker = new OffsetTracker();
  tracker.delivered(p0, 0n);
  tracker.acked(p0, 0n, tracker.generation);
  const first = tracker.takeCommittable();
  assert.deepEqual(first, [{ topic: 't', partition: 0, offset: 1n }]);
  assert.deepEqual(tracker.takeCommittable(), []);
  tracker.commitFailed(first);
  assert.deepEqual(tracker.takeCommittable(), first);
});

test('ignores acks from an older generation after a rebalance', () => {
  const tracker = new OffsetTracker();
  tracker.delivered(p0, 7n);
  const old = tracker.generation;
  tracker.newGeneration();
  assert.equal(tracker.inFlight, 0);
  assert.equal(tracker.acked(p0, 7n, old), false);
  assert.deepEqual(tracker.takeCommittable(), []);
  // The same offset is delivered again in the new generation and can then be acked.
  tracker.delivered(p0, 7n);
  assert.equal(tracker.acked(p0, 7n, tracker.generation), true);
  assert.deepEqual(tracker.takeCommittable(), [{ topic: 't', partition: 0, offset: 8n }]);
});

test('a repeated ack counts once', () => {
  const tracker = new OffsetTracker();
  tracker.delivered(p0, 1n);
  tracker.delivered(p0, 2n);
  assert.equal(tracker.acked(p0, 2n, tracker.generation), true);
  assert.equal(tracker.acked(p0, 2n, tracker.generation), false);
  assert.equal(tracker.inFlight, 1);
});

test('rejects deliveries that go backwards within a generation', () => {
  const tracker = new OffsetTracker();
  tracker.delivered(p0, 4n);
  assert.throws(() => tracker.delivered(p0, 4n), /must ascend/);
});

test('many deliveries acked in random order, with gaps in the offsets: the position is always the first unacked one', () => {
  let seed = 12345;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const tracker = new OffsetTracker();
  const generation = tracker.newGeneration();
  const key = { topic: 't', partition: 7 };
  // 5,000 offsets with gaps (transaction markers, compaction), acked in a shuffled order (long stretches of
  // acks behind an unacked head, which is what the tracker's compaction is for).
  const offsets: bigint[] = [];
  for (let o = 100n; offsets.length < 5000; o += 1n + BigInt(Math.floor(random() * 3))) offsets.push(o);
  for (const o of offsets) tracker.delivered(key, o);
  const order = offsets
    .map((o, i) => ({ o, k: i + random() * 3000 }))
    .sort((a, b) => a.k - b.k)
    .map((x) => x.o);
  const acked = new Set<bigint>();
  let reported = offsets[0]!; // the resume position counts as committed
  for (const [i, o] of order.entries()) {
    assert.equal(tracker.acked(key, o, generation), true);
    assert.equal(tracker.acked(key, o, generation), false, 'a second ack of the same offset');
    acked.add(o);
    if (i % 97 === 0 || i === order.length - 1) {
      const expected = offsets.find((x) => !acked.has(x)) ?? offsets.at(-1)! + 1n;
      const [position] = tracker.takeCommittable();
      reported = position?.offset ?? reported; // nothing taken: the position has not moved
      assert.equal(reported, expected);
      assert.equal(tracker.inFlight, offsets.length - acked.size);
    }
  }
  assert.equal(tracker.acked(key, 99n, generation), false, 'an offset never delivered');
  tracker.delivered(key, offsets.at(-1)! + 5n);
  assert.deepEqual(tracker.takeCommittable(), [{ topic: 't', partition: 7, offset: offsets.at(-1)! + 5n }]);
});

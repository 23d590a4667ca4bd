// Unit: the processors' per-partition write lanes (processors/exactly-once/partition-lanes.ts) — partitions
// do not wait for each other, a busy lane's queued batches go into its next write together, an exclusive
// write runs alone, a failure stops everything once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PartitionLanes } from '../../../processors/exactly-once/partition-lanes.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

function controlledLanes() {
  const writes: Array<{ partition: number; batches: string[]; resolve: () => void; reject: (e: unknown) => void }> = [];
  const errors: unknown[] = [];
  const lanes = new PartitionLanes<string>(
    (partition, batches) => new Promise<void>((resolve, reject) => void writes.push({ partition, batches: [...batches], resolve, reject })),
    (error) => errors.push(error),
  );
  return { lanes, writes, errors };
}

test('a slow write on one partition does not hold back another partition', async () => {
  const { lanes, writes } = controlledLanes();
  lanes.submit(0, 'a1');
  await turn();
  lanes.submit(1, 'b1');
  await turn();
  assert.deepEqual(
    writes.map((w) => [w.partition, w.batches]),
    [
      [0, ['a1']],
      [1, ['b1']],
    ],
    'partition 1 writes while 0 is in flight',
  );
  writes[1]!.resolve();
  lanes.submit(1, 'b2');
  await turn();
  assert.deepEqual(writes[2] && [writes[2].partition, writes[2].batches], [1, ['b2']], 'and again, with 0 still in flight');
  writes[0]!.resolve();
  writes[2]!.resolve();
  await lanes.idle();
});

test('batches submitted to a busy lane go into its next write together, in order; the same turn shares the first', async () => {
  const { lanes, writes } = controlledLanes();
  lanes.submit(2, 'x1');
  lanes.submit(2, 'x2');
  await turn();
  assert.deepEqual(
    writes.map((w) => w.batches),
    [['x1', 'x2']],
  );
  lanes.submit(2, 'x3');
  lanes.submit(2, 'x4');
  await turn();
  assert.equal(writes.length, 1, 'one write per lane at a time');
  writes[0]!.resolve();
  await turn();
  assert.deepEqual(
    writes.map((w) => w.batches),
    [
      ['x1', 'x2'],
      ['x3', 'x4'],
    ],
  );
  writes[1]!.resolve();
  await lanes.idle();
  lanes.submit(2, 'x5');
  await turn();
  assert.deepEqual(writes[2]?.batches, ['x5'], 'a lane that went idle starts again on the next submit');
  writes[2]!.resolve();
  await lanes.idle();
});

test('a batch submitted in the microtask right after a write resolves is not lost', async () => {
  const { lanes, writes } = controlledLanes();
  lanes.submit(0, 'first');
  await turn();
  writes[0]!.resolve();
  // Between the write's resolution and the lane looking at its queue again.
  await Promise.resolve();
  lanes.submit(0, 'second');
  await turn();
  assert.deepEqual(
    writes.map((w) => w.batches),
    [['first'], ['second']],
  );
  writes[1]!.resolve();
  await lanes.idle();
});

test('an exclusive write waits for every lane, runs alone, and the lanes go on after it', async () => {
  const { lanes, writes } = controlledLanes();
  lanes.submit(0, 'a');
  lanes.submit(1, 'b');
  await turn();
  const order: string[] = [];
  let finishExclusive!: () => void;
  const exclusive = lanes.runExclusive(async () => {
    order.push('exclusive start');
    await new Promise<void>((resolve) => (finishExclusive = resolve));
    order.push('exclusive end');
  });
  assert.equal(lanes.exclusive, true);
  assert.throws(() => lanes.submit(0, 'c'), /during an exclusive write/);
  await turn();
  assert.deepEqual(order, [], 'not while lane writes are in flight');
  writes[0]!.resolve();
  await turn();
  assert.deepEqual(order, [], 'not while one lane is still writing');
  writes[1]!.resolve();
  await turn();
  assert.deepEqual(order, ['exclusive start']);
  finishExclusive();
  await exclusive;
  assert.equal(lanes.exclusive, false);
  lanes.submit(0, 'after');
  await turn();
  assert.deepEqual(
    writes.map((w) => w.batches),
    [['a'], ['b'], ['after']],
  );
  writes[2]!.resolve();
  await lanes.idle();
});

test('the first failure is reported once; nothing is written after it and idle() still resolves', async () => {
  const { lanes, writes, errors } = controlledLanes();
  lanes.submit(0, 'a');
  lanes.submit(1, 'b');
  await turn();
  lanes.submit(0, 'queued behind a');
  writes[0]!.reject(new Error('transaction failed'));
  writes[1]!.reject(new Error('second failure'));
  await lanes.idle();
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ['transaction failed'],
  );
  assert.equal((lanes.failed as Error).message, 'transaction failed');
  lanes.submit(2, 'later');
  await turn();
  assert.equal(writes.length, 2, 'neither the queued batch nor a later one is written');
});

test('settled() waits for what was submitted before it, not for what keeps coming on other lanes', async () => {
  // A rebalance's onAssignment awaits settled() while the other partitions keep writing: waiting until no
  // lane runs at all may never end under steady input (the processors stalled on it after a broker restart).
  const { lanes, writes } = controlledLanes();
  lanes.submit(0, 'a');
  lanes.submit(1, 'b');
  await turn();
  let settled = false;
  const waiting = lanes.settled().then(() => (settled = true));
  lanes.submit(1, 'c after settled()');
  writes[0]!.resolve();
  await turn();
  assert.equal(settled, false, 'b is still in flight');
  writes[1]!.resolve();
  await turn();
  assert.deepEqual(writes[2]?.batches, ['c after settled()'], 'c is being written');
  await waiting;
  assert.equal(settled, true, 'settled() did not wait for c');
  let idle = false;
  const whenIdle = lanes.idle().then(() => (idle = true));
  await turn();
  assert.equal(idle, false, 'idle() waits for c');
  writes[2]!.resolve();
  await whenIdle;
});

test('settled() includes a pending exclusive write', async () => {
  const { lanes, writes } = controlledLanes();
  lanes.submit(0, 'a');
  await turn();
  let finishExclusive!: () => void;
  void lanes.runExclusive(() => new Promise<void>((resolve) => (finishExclusive = resolve)));
  let settled = false;
  const waiting = lanes.settled().then(() => (settled = true));
  writes[0]!.resolve();
  await turn();
  await turn();
  assert.equal(settled, false, 'the exclusive write is running');
  finishExclusive();
  await waiting;
});

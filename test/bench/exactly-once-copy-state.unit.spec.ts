// Unit: the exactly-once copy's bookkeeping (bench/exactly-once-copy-state.ts) — one transaction in flight per
// partition, what arrives meanwhile written by the next in delivery order with the newest offset, and the end once
// every step is written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchDelivered, copyMessages, emptyCopy, writeCommitted } from '../../bench/exactly-once-copy-state.js';

test('a batch on an idle partition is written at once; on a busy one it waits, merged with the next, for the commit', () => {
  let step = batchDelivered(emptyCopy<string>(), 0, ['a', 'b'], '1');
  assert.deepEqual(step.write, { partition: 0, values: ['a', 'b'], lastOffset: '1' });
  step = batchDelivered(step.state, 0, ['c'], '2');
  assert.equal(step.write, null);
  step = batchDelivered(step.state, 0, ['d', 'e'], '4');
  assert.equal(step.write, null);
  const other = batchDelivered(step.state, 3, ['x'], '9');
  assert.deepEqual(other.write, { partition: 3, values: ['x'], lastOffset: '9' });
  const committed = writeCommitted(other.state, 0, 2, 100);
  assert.equal(committed.finished, false);
  assert.deepEqual(committed.write, { partition: 0, values: ['c', 'd', 'e'], lastOffset: '4' });
  assert.equal(committed.state.written, 2);
  assert.deepEqual([...committed.state.inFlight].sort(), [0, 3]);
  assert.equal(committed.state.pending.size, 0);
});

test('a commit with nothing pending leaves the partition idle; the next batch is written at once', () => {
  const first = batchDelivered(emptyCopy<string>(), 1, ['a'], '0');
  const committed = writeCommitted(first.state, 1, 1, 10);
  assert.equal(committed.write, null);
  assert.equal(committed.finished, false);
  assert.deepEqual(batchDelivered(committed.state, 1, ['b'], '1').write, { partition: 1, values: ['b'], lastOffset: '1' });
});

test('an empty batch changes nothing; the copy finishes once every step is written, pending or not', () => {
  const empty = emptyCopy<string>();
  assert.deepEqual(batchDelivered(empty, 0, [], '5'), { state: empty, write: null });
  let step = batchDelivered(empty, 0, ['a', 'b'], '1');
  step = batchDelivered(step.state, 0, ['c'], '2');
  const done = writeCommitted(step.state, 0, 2, 2);
  assert.equal(done.finished, true);
  assert.equal(done.write, null);
  assert.equal(done.state.written, 2);
});

test('the output messages: every n consecutive values concatenated into one', () => {
  const values = ['ab', 'cd', 'ef', 'gh', 'ij'].map((s) => Buffer.from(s));
  assert.deepEqual(
    copyMessages(values, 2).map((m) => [m.key, m.value.toString()]),
    [
      [null, 'abcd'],
      [null, 'efgh'],
      [null, 'ij'],
    ],
  );
  assert.deepEqual(copyMessages([], 4), []);
});

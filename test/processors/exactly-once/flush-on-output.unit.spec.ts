// Unit: when the processors write (processors/exactly-once/flush-on-output.ts) — at once when idle, kicks
// during a write coalesced into one more write, nothing after stop or after a failure.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { flushOnOutput } from '../../../processors/exactly-once/flush-on-output.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

function controlledFlush() {
  const calls: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const flush = () => new Promise<void>((resolve, reject) => void calls.push({ resolve, reject }));
  return { calls, flush };
}

test('kicks in one turn make one write; kicks while it runs make exactly one more', async () => {
  const { calls, flush } = controlledFlush();
  const flusher = flushOnOutput(flush, () => assert.fail('no error expected'));
  flusher.kick();
  flusher.kick();
  assert.equal(calls.length, 0, 'deferred by one macrotask, so a batch queued synchronously goes in one transaction');
  await turn();
  assert.equal(calls.length, 1);
  flusher.kick();
  flusher.kick();
  flusher.kick();
  await turn();
  assert.equal(calls.length, 1, 'no second write while one is in flight');
  calls[0]!.resolve();
  await turn();
  assert.equal(calls.length, 2, 'what was queued meanwhile goes in the next write');
  calls[1]!.resolve();
  await turn();
  await turn();
  assert.equal(calls.length, 2, 'and then it is idle');
  flusher.kick();
  await turn();
  assert.equal(calls.length, 3);
  calls[2]!.resolve();
});

test('after stop() no write starts; a failed write reports once and stops', async () => {
  const stopped = controlledFlush();
  const a = flushOnOutput(stopped.flush, () => assert.fail('no error expected'));
  a.stop();
  a.kick();
  await turn();
  assert.equal(stopped.calls.length, 0);

  const failing = controlledFlush();
  const errors: unknown[] = [];
  const b = flushOnOutput(failing.flush, (e) => errors.push(e));
  b.kick();
  await turn();
  b.kick();
  failing.calls[0]!.reject(new Error('transaction failed'));
  await turn();
  await turn();
  assert.deepEqual(
    errors.map((e) => (e as Error).message),
    ['transaction failed'],
  );
  b.kick();
  await turn();
  assert.equal(failing.calls.length, 1, 'no write after a failure (the pipeline restarts)');
});

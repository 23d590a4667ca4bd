// The sink's per-table batching: cut at maxRows or maxDelayMs after a batch's first row, at most
// `concurrency` flushes per key in flight (the rest wait in order), end() flushes what is buffered.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Batcher } from '../../../storage/sink/batcher.js';

const unexpected = (error: unknown): never => assert.fail(String(error));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function recorder(flushMs = 0) {
  const flushed: Array<{ key: string; batch: number[] }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const flush = async (key: string, batch: number[]) => {
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    await sleep(flushMs);
    flushed.push({ key, batch });
    inFlight--;
  };
  return { flushed, flush, maxInFlight: () => maxInFlight };
}

test('a batch is cut at maxRows at once, per key', async () => {
  const r = recorder();
  const batcher = new Batcher<string, number>({ maxRows: 3, maxDelayMs: 10_000, concurrency: 1, flush: r.flush, onError: unexpected });
  for (let i = 0; i < 7; i++) batcher.add(i % 2 ? 'b' : 'a', i);
  await sleep(5);
  assert.deepEqual(r.flushed, [
    { key: 'a', batch: [0, 2, 4] },
    { key: 'b', batch: [1, 3, 5] },
  ]);
  await batcher.end();
  assert.deepEqual(r.flushed.slice(2), [{ key: 'a', batch: [6] }]);
});

test('a partial batch goes maxDelayMs after its first row', async () => {
  const r = recorder();
  const batcher = new Batcher<string, number>({ maxRows: 100, maxDelayMs: 40, concurrency: 1, flush: r.flush, onError: unexpected });
  batcher.add('a', 1);
  await sleep(20);
  batcher.add('a', 2);
  assert.equal(r.flushed.length, 0);
  await sleep(35);
  assert.deepEqual(r.flushed, [{ key: 'a', batch: [1, 2] }]);
  await batcher.end();
});

test('at most `concurrency` flushes of a key at a time; later batches wait in order', async () => {
  for (const concurrency of [1, 2]) {
    const r = recorder(15);
    const batcher = new Batcher<string, number>({ maxRows: 1, maxDelayMs: 1000, concurrency, flush: r.flush, onError: unexpected });
    for (let i = 0; i < 6; i++) batcher.add('a', i);
    await batcher.end();
    assert.equal(r.maxInFlight(), concurrency);
    assert.deepEqual(
      r.flushed.map((f) => f.batch[0]),
      [0, 1, 2, 3, 4, 5],
    );
  }
});

test('end() waits for flushes in flight and drops later adds; a failing flush goes to onError', async () => {
  const r = recorder(10);
  const errors: unknown[] = [];
  const batcher = new Batcher<string, number>({
    maxRows: 2,
    maxDelayMs: 1000,
    concurrency: 1,
    flush: (key, batch) => (batch[0] === 99 ? Promise.reject(new Error('bug')) : r.flush(key, batch)),
    onError: (error) => errors.push(error),
  });
  batcher.add('a', 1);
  batcher.add('a', 2);
  batcher.add('b', 99);
  await batcher.end();
  batcher.add('a', 3);
  assert.deepEqual(r.flushed, [{ key: 'a', batch: [1, 2] }]);
  assert.equal((errors[0] as Error).message, 'bug');
  assert.throws(() => new Batcher({ maxRows: 0, maxDelayMs: 1, concurrency: 1, flush: async () => undefined, onError: () => undefined }), RangeError);
});

// Unit: the processors recover from failed transactions in-process — a fresh pipeline after a backoff —
// and give up on other errors or on failures that keep coming.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { superviseProcessors, type Restartable } from '../../../processors/pipeline/supervise.js';
import { TransactionFailedError } from '../../../processors/exactly-once/transactional-emitter.js';

function pipelines(outcomes: readonly ('ok' | 'txn' | 'other')[]) {
  const closed: number[] = [];
  let started = 0;
  const start = async (): Promise<Restartable> => {
    const index = started++;
    const outcome = outcomes[index] ?? 'ok';
    const done =
      outcome === 'ok' ? Promise.resolve() : Promise.reject(outcome === 'txn' ? new TransactionFailedError(new Error('Failed to find group coordinator')) : new Error('bug'));
    done.catch(() => undefined);
    return { done, close: async () => void closed.push(index) };
  };
  return { start, closed, started: () => started };
}

test('a failed transaction: the failed pipeline is closed and a new one started after a growing backoff', async () => {
  const p = pipelines(['txn', 'txn', 'ok']);
  const waits: number[] = [];
  const lines: string[] = [];
  const restarts = await superviseProcessors(p.start, { sleep: async (ms) => void waits.push(ms), log: (l) => lines.push(l), now: () => 0 });
  assert.equal(restarts, 2);
  assert.equal(p.started(), 3);
  assert.deepEqual(p.closed, [0, 1]);
  assert.deepEqual(waits, [1000, 2000]);
  assert.match(
    lines[0]!,
    /^processors: a processors transaction failed and was aborted .*Failed to find group coordinator.*resuming in this process from the committed offsets in 1\.0 s \(failure 1 of at most 10\)/,
  );
});

test('other errors end the run at once; failures that keep coming end it after maxRestarts; a quiet spell resets the count', async () => {
  await assert.rejects(superviseProcessors(pipelines(['other']).start, { sleep: async () => undefined }), /bug/);
  await assert.rejects(superviseProcessors(pipelines(['txn', 'txn', 'txn', 'txn']).start, { sleep: async () => undefined, maxRestarts: 3, now: () => 0 }), TransactionFailedError);
  let clock = 0;
  const spaced = await superviseProcessors(pipelines(['txn', 'txn', 'txn', 'txn', 'ok']).start, {
    sleep: async () => undefined,
    maxRestarts: 1,
    windowMs: 1000,
    now: () => (clock += 5000),
  });
  assert.equal(spaced, 4, 'failures far apart never exhaust the budget');
  const stopping = await superviseProcessors(pipelines(['txn', 'ok']).start, {
    sleep: async () => undefined,
    stopping: (() => {
      let n = 0;
      return () => ++n > 1;
    })(),
  });
  assert.equal(stopping, 1, 'a shutdown during the backoff starts nothing new');
});

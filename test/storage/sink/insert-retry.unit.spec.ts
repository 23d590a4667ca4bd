// What follows a failed insert: ClickHouse failures are retried after a backoff that doubles up to the
// maximum; anything else is a bug (thrown); a stopping sink gives the batch up (it comes again).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ClickHouseError } from '../../../infra/clickhouse/http.js';
import { afterFailedInsert, firstInsertAttempt, type InsertAttempt } from '../../../storage/sink/insert-retry.js';

const down = new ClickHouseError('ClickHouse at x is not reachable', null, { retriable: true });

test('ClickHouse failing: waits from the initial delay, doubling, capped at the maximum; attempts counted', () => {
  let attempt: InsertAttempt = firstInsertAttempt(100);
  const waits: number[] = [];
  for (let i = 0; i < 9; i++) {
    const next = afterFailedInsert(attempt, down, false, 5000);
    assert.equal(next.action, 'retry');
    if (next.action !== 'retry') return;
    waits.push(next.waitMs);
    attempt = next.next;
  }
  assert.deepEqual(waits, [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000]);
  assert.equal(attempt.attempt, 10);
});

test("an error that is not ClickHouse's is thrown (a bug), stopping or not", () => {
  assert.deepEqual(afterFailedInsert(firstInsertAttempt(100), new TypeError('bug'), false, 5000), { action: 'throw' });
  assert.deepEqual(afterFailedInsert(firstInsertAttempt(100), new TypeError('bug'), true, 5000), { action: 'throw' });
});

test('a stopping sink gives the batch up: nothing acknowledged, it comes again after the restart', () => {
  assert.deepEqual(afterFailedInsert(firstInsertAttempt(100), down, true, 5000), { action: 'give-up' });
});

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { retryRetriable } from '../../streams/retry.js';

const retriable = (message: string) => Object.assign(new Error(message), { retriable: true });

test('an admin call that fails with a retriable error (NOT_COORDINATOR) is run again until it succeeds', async () => {
  let calls = 0;
  const result = await retryRetriable(async () => {
    calls++;
    if (calls < 3) throw retriable('This is not the correct coordinator for this group');
    return 'offsets';
  });
  assert.equal(result, 'offsets');
  assert.equal(calls, 3);
});

test('a non-retriable error is thrown at once, and a retriable one after the last attempt', async () => {
  let calls = 0;
  await assert.rejects(
    retryRetriable(async () => {
      calls++;
      throw new Error('topic authorization failed');
    }),
    /authorization/,
  );
  assert.equal(calls, 1);
  calls = 0;
  await assert.rejects(
    retryRetriable(async () => {
      calls++;
      throw retriable('still loading');
    }, 2),
    /still loading/,
  );
  assert.equal(calls, 2);
});

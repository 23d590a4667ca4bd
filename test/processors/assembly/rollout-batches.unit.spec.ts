// Marble tests of the rollout-batch operator (time-dependent: window from the first group, size cap).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { rolloutBatches } from '../../../processors/assembly/rollout-batches.js';
import { createTestScheduler } from './test-scheduler.js';

describe('rolloutBatches', () => {
  test('a batch opens at its first group and closes windowMs later; an idle stream emits nothing', () => {
    const scheduler = createTestScheduler();
    scheduler.run(({ hot, expectObservable, expectSubscriptions }) => {
      // a at 2 opens a batch that closes at 2 + 5 = 7 with a and b; c at 12 opens the next (closes at 17).
      const source = hot('--a--b------c--------', { a: 'a', b: 'b', c: 'c' });
      const expected = '   -------x---------y---';
      expectObservable(source.pipe(rolloutBatches({ windowMs: 5, maxGroups: 10, scheduler }))).toBe(expected, { x: ['a', 'b'], y: ['c'] });
      expectSubscriptions(source.subscriptions).toBe('^');
    });
  });

  test('a batch closes as soon as it holds maxGroups groups; the next group opens a new window', () => {
    const scheduler = createTestScheduler();
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-a-b-c-d----------', { a: 'a', b: 'b', c: 'c', d: 'd' });
      // a, b, c fill the batch at 5; d at 7 opens a window that closes at 7 + 8 = 15.
      const expected = '   -----x---------y--';
      expectObservable(source.pipe(rolloutBatches({ windowMs: 8, maxGroups: 3, scheduler }))).toBe(expected, { x: ['a', 'b', 'c'], y: ['d'] });
    });
  });

  test('completion emits the open batch; teardown cancels its timer; an error drops it', () => {
    const scheduler = createTestScheduler();
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b|', { a: 'a', b: 'b' }).pipe(rolloutBatches({ windowMs: 50, maxGroups: 10, scheduler }))).toBe('----(x|)', { x: ['a', 'b'] });
      expectObservable(cold('-a-b-#', { a: 'a', b: 'b' }, new Error('boom')).pipe(rolloutBatches({ windowMs: 50, maxGroups: 10, scheduler }))).toBe('-----#', undefined, new Error('boom'));
      // Unsubscribed at 3, before the window of a (opened at 1) would close at 6: nothing is emitted.
      expectObservable(cold('-a----', { a: 'a' }).pipe(rolloutBatches({ windowMs: 5, maxGroups: 10, scheduler })), '---!').toBe('---');
    });
  });

  test('options are checked when built', () => {
    assert.throws(() => rolloutBatches({ windowMs: 0, maxGroups: 1 }), ConfigError);
    assert.throws(() => rolloutBatches({ windowMs: 10, maxGroups: 0 }), /maxBatchGroups/);
  });
});

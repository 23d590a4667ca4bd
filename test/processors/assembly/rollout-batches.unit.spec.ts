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
      expectObservable(cold('-a-b-#', { a: 'a', b: 'b' }, new Error('boom')).pipe(rolloutBatches({ windowMs: 50, maxGroups: 10, scheduler }))).toBe(
        '-----#',
        undefined,
        new Error('boom'),
      );
      // Unsubscribed at 3, before the window of a (opened at 1) would close at 6: nothing is emitted.
      expectObservable(cold('-a----', { a: 'a' }).pipe(rolloutBatches({ windowMs: 5, maxGroups: 10, scheduler })), '---!').toBe('---');
    });
  });

  test("groups naming their iteration make one batch per iteration, closed by the iteration's last group however iterations interleave", () => {
    const scheduler = createTestScheduler();
    // Groups are 'iteration:name'; each iteration has 2 groups; u has no iteration.
    const keyOf = (g: string) => (g.includes(':') ? { key: g.split(':')[0]!, groups: 2 } : null);
    scheduler.run(({ hot, expectObservable }) => {
      const values = { a: '0:a', b: '1:b', c: '0:c', u: 'u', d: '1:d' };
      // 0:a opens iteration 0, 1:b iteration 1; 0:c completes iteration 0 at 5 and 1:d iteration 1 at 9; u waits
      // for the unnamed batch's window (7 + 20 = 27).
      const source = hot('-a-b-c-u-d------------------', values);
      const expected = '   -----x---y-----------------z';
      expectObservable(source.pipe(rolloutBatches({ windowMs: 20, maxGroups: 10, iterationIdleMs: 100, keyOf, scheduler }))).toBe(expected, {
        x: ['0:a', '0:c'],
        y: ['1:b', '1:d'],
        z: ['u'],
      });
    });
  });

  test("an iteration's batch closes iterationIdleMs after its last group when a group never comes; a late group opens its own", () => {
    const scheduler = createTestScheduler();
    const keyOf = (g: string) => ({ key: g.split(':')[0]!, groups: 3 });
    scheduler.run(({ hot, expectObservable }) => {
      const source = hot('-a-----b-------------c-------', { a: '0:a', b: '0:b', c: '0:c' });
      // 0:b at 7 restarts the idle timer of 0:a (1 + 8 = 9 would have closed it): the batch closes at 7 + 8 = 15
      // with a and b; the late 0:c at 21 closes at 29 on its own.
      const expected = '   ---------------x-------------y';
      expectObservable(source.pipe(rolloutBatches({ windowMs: 2, maxGroups: 10, iterationIdleMs: 8, keyOf, scheduler }))).toBe(expected, { x: ['0:a', '0:b'], y: ['0:c'] });
    });
  });

  test('completion emits every open batch, oldest first', () => {
    const scheduler = createTestScheduler();
    const keyOf = (g: string) => ({ key: g.split(':')[0]!, groups: 5 });
    scheduler.run(({ cold, expectObservable }) => {
      expectObservable(cold('-a-b-c|', { a: '1:a', b: '0:b', c: '1:c' }).pipe(rolloutBatches({ windowMs: 50, maxGroups: 10, keyOf, scheduler }))).toBe('------(xy|)', {
        x: ['1:a', '1:c'],
        y: ['0:b'],
      });
    });
  });

  test('options are checked when built', () => {
    assert.throws(() => rolloutBatches({ windowMs: 10, maxGroups: 1, iterationIdleMs: 0 }), /iterationIdleMs/);
    assert.throws(() => rolloutBatches({ windowMs: 0, maxGroups: 1 }), ConfigError);
    assert.throws(() => rolloutBatches({ windowMs: 10, maxGroups: 0 }), /maxBatchGroups/);
  });
});

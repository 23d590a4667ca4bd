import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mayStartIteration, StalenessGate, versionNeededFor } from '../../rollout/index.js';

test('an iteration may start when it is at most maxStaleness ahead of the learner version', () => {
  const table: Array<[iteration: number, learner: number, maxStaleness: number | null, allowed: boolean]> = [
    [0, 0, 0, true], // synchronous: batch 0 with the initial policy
    [1, 0, 0, false], // synchronous: batch 1 waits for version 1
    [1, 1, 0, true],
    [1, 0, 1, true], // one step off-policy
    [2, 0, 1, false],
    [5, 3, 2, true],
    [6, 3, 2, false],
    [3, 7, 0, true], // the learner is ahead (actors resumed late): always allowed
    [1_000_000, 0, null, true], // no bound
  ];
  for (const [iteration, learner, maxStaleness, allowed] of table) {
    assert.equal(mayStartIteration(iteration, learner, maxStaleness), allowed, `iteration ${iteration}, learner v${learner}, bound ${maxStaleness}`);
  }
  assert.equal(versionNeededFor(6, 2), 4);
});

test('the gate wakes a waiter once a newer version allows its iteration, not before', async () => {
  const gate = new StalenessGate(1);
  const abort = new AbortController();
  let woke: boolean | null = null;
  const waiting = gate.whenAllowed(3, abort.signal).then((allowed) => (woke = allowed));
  assert.equal(gate.waiting, 1);
  gate.observe(1); // iteration 3 needs version 2
  await Promise.resolve();
  assert.equal(woke, null);
  gate.observe(1); // repeated
  gate.observe(0); // older
  assert.equal(gate.learnerVersion, 1);
  gate.observe(2);
  await waiting;
  assert.equal(woke, true);
  assert.equal(gate.waiting, 0);
});

test('aborting releases waiters with false', async () => {
  const gate = new StalenessGate(0);
  const abort = new AbortController();
  const waiting = gate.whenAllowed(4, abort.signal);
  abort.abort();
  assert.equal(await waiting, false);
  assert.equal(gate.waiting, 0);
  assert.equal(await gate.whenAllowed(4, abort.signal), false);
  assert.equal(await gate.whenAllowed(0, abort.signal), true);
});

test('without a bound the gate never waits', async () => {
  const gate = new StalenessGate(null);
  assert.equal(await gate.whenAllowed(10 ** 9, new AbortController().signal), true);
});

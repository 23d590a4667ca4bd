// Unit: the processors' stall report (processors/pipeline/stall-report.ts) — silent for normal waits, one line
// naming what has waited and for how long otherwise.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stallReport } from '../../../processors/pipeline/stall-report.js';

test('nothing waiting, or nothing waiting long: no line', () => {
  assert.equal(stallReport({ oldestRequest: null, setup: null }), null);
  assert.equal(stallReport({ oldestRequest: { kind: 'write', partition: 1, ageMs: 29_999 }, setup: { stage: 'fencing', ageMs: 5000 } }), null);
});

test('a transaction waiting past the threshold is named with its partition and age', () => {
  assert.equal(
    stallReport({ oldestRequest: { kind: 'write', partition: 3, ageMs: 45_400 }, setup: null }),
    'processors: waiting — the transaction worker has run a write on partition 3 for 45 s',
  );
  assert.equal(
    stallReport({ oldestRequest: { kind: 'fence', partition: null, ageMs: 31_000 }, setup: null }),
    'processors: waiting — the transaction worker has run a fence for 31 s',
  );
});

test("a rebalance's setup past the threshold is named with its stage; both waits in one line", () => {
  assert.equal(
    stallReport({ oldestRequest: { kind: 'write', partition: 0, ageMs: 60_000 }, setup: { stage: 'reloading the episode marks', ageMs: 40_000 } }),
    "processors: waiting — the transaction worker has run a write on partition 0 for 60 s; a rebalance's setup has run 40 s (now reloading the episode marks)",
  );
  assert.equal(stallReport({ oldestRequest: null, setup: { stage: 'fencing', ageMs: 10_000 } }, 5000), "processors: waiting — a rebalance's setup has run 10 s (now fencing)");
});

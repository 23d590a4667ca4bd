// Unit: `bench alerts`' second view (bench/alerts-staging.ts): runs labelled by the fault they staged, not by their
// success curve — alerts after a fault's onset are right, a fault is caught by any of them, unfaulted runs stay quiet.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ScoredRun } from '../../bench/alerts-score.js';
import { scoreStaging } from '../../bench/alerts-staging.js';

const warn = (iteration: number) => ({ iteration, kind: 'entropy_surge', severity: 'warning' });
const run = (name: string, alerts: ScoredRun['alerts'], onset?: number): ScoredRun => ({
  name,
  trainSuccess: Array(40).fill(0.5),
  alerts,
  ...(onset !== undefined ? { onset } : {}),
});

test('alerts at or after a staged onset are right, before it or on an unfaulted run false; the delay is from the onset', () => {
  const s = scoreStaging([
    run('caught', [warn(18), warn(22), warn(30)], 20),
    run('from the start', [warn(5)], 0),
    run('missed', [], 20),
    run('healthy, one warning', [warn(10)]),
    run('healthy, critical', [{ iteration: 3, kind: 'nan', severity: 'critical' }]),
  ]);
  assert.deepEqual(s, { alerts: 6, precision: 3 / 6, faults: 3, recall: 2 / 3, medianDelay: (2 + 5) / 2, unfaultedRuns: 2, unfaultedQuiet: 1 });
});

test('no alerts and no faults give nulls, not zeros', () => {
  const s = scoreStaging([run('quiet', [])]);
  assert.deepEqual([s.precision, s.recall, s.medianDelay, s.unfaultedQuiet], [null, null, null, 1]);
});

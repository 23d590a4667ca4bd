// Unit: one `bench scale` configuration's figures (bench/scale-window.ts) — the CPU spent between two readings, the
// window's rate and sample counts net of the warm-up's, and the steps per transaction over the processes' lives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpuSpent, windowFigures, withTransactions } from '../../bench/scale-window.js';

test("the CPU spent: each process's and the broker's difference, the broker's null when either reading lacks it", () => {
  assert.deepEqual(cpuSpent({ processesMs: [100, 200], brokerMs: 50 }, { processesMs: [400, 260], brokerMs: 80 }), { processesMs: [300, 60], brokerMs: 30 });
  assert.deepEqual(cpuSpent({ processesMs: [1], brokerMs: null }, { processesMs: [2], brokerMs: 80 }), { processesMs: [1], brokerMs: null });
});

test("the window: steps/s, and the samples counted past the warm-up's, with duplicates and what is missing", () => {
  const window = { processes: 2, groups: 10, warmGroups: 4, warmedSamples: 32, steps: 320, seconds: 2 };
  const figures = windowFigures(window, { total: 32 + 80 + 3, distinct: 32 + 78 }, { processesMs: [320, 320], brokerMs: 160 }, 8);
  assert.deepEqual(figures, {
    cpuSecondsPerStep: 0.0025,
    processesCpuSecondsPerStep: 0.002,
    brokerCpuSecondsPerStep: 0.0005,
    processes: 2,
    steps: 320,
    seconds: 2,
    stepsPerSecond: 160,
    samples: 83,
    distinctSamples: 78,
    expectedSamples: 80,
    duplicates: 5,
    missing: 2,
  });
});

test('the transactions over the processes lives: steps read per transaction, null without a stop line or a transaction', () => {
  const figures = windowFigures(
    { processes: 1, groups: 1, warmGroups: 0, warmedSamples: 0, steps: 32, seconds: 1 },
    { total: 8, distinct: 8 },
    { processesMs: [1], brokerMs: null },
    8,
  );
  assert.deepEqual(withTransactions(figures, { transactions: 4, stepsRead: 1000 }), { ...figures, transactions: 4, stepsPerTransaction: 250 });
  assert.deepEqual(withTransactions(figures, { transactions: 0, stepsRead: 1000 }), { ...figures, transactions: 0, stepsPerTransaction: null });
  assert.deepEqual(withTransactions(figures, null), { ...figures, transactions: null, stepsPerTransaction: null });
});

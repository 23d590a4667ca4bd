// Unit: `bench processors`' pure parts — the latency plan and figure (bench/processors-latency.ts: warm-up groups
// apart, nearest-rank quantiles, the transactions' phases) and the flags and lines it prints (bench/processors-report.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { latencyPlan, latencyQuantiles, latencyResult } from '../../bench/processors-latency.js';
import { latencyLines, processorsFlags, roundLines, throughputLines, type ProcessorsResult } from '../../bench/processors-report.js';
import type { TransactionPhases } from '../../processors/exactly-once/transactional-emitter.js';

test('the plan: groups for the measured seconds (at least one) after those of the warm-up, one group every intervalMs', () => {
  assert.deepEqual(latencyPlan(5000, 10, 5, 32), { groups: 1563, warmUpGroups: 781, allGroups: 2344, intervalMs: 6.4 });
  assert.deepEqual(latencyPlan(1, 1, 0, 32), { groups: 1, warmUpGroups: 0, allGroups: 1, intervalMs: 32_000 });
});

test('quantiles: nearest rank over the sorted latencies, NaN for none', () => {
  const q = latencyQuantiles(Array.from({ length: 100 }, (_, i) => 100 - i));
  assert.deepEqual(q, { groups: 100, p50Ms: 51, p99Ms: 100, maxMs: 100 });
  const none = latencyQuantiles([]);
  assert.equal(none.groups, 0);
  assert.ok(Number.isNaN(none.p50Ms) && Number.isNaN(none.maxMs));
});

test('the figure: quantiles over the measured groups, over every group in `whole`, the rate the publisher reached, the phases', () => {
  const plan = latencyPlan(64, 1, 1, 32);
  const lastStepAcked = new Map([
    ['g0', 0],
    ['g1', 100],
    ['g2', 200],
    ['g3', 300],
  ]);
  const done = new Map([
    ['g0', 500],
    ['g1', 110],
    ['g2', 230],
    ['g3', 310],
  ]);
  const phase = (ms: number): TransactionPhases => ({ beginMs: ms, sendMs: 2 * ms, offsetsMs: 3 * ms, commitMs: 4 * ms, handOffMs: 5 * ms });
  const result = latencyResult(plan, 32, 1, 2, { lastStepAcked, done, measured: new Set(['g2', 'g3']), phaseLog: [phase(1), phase(2)] });
  assert.equal(result.stepsPerSecond, (4 * 32) / 2);
  assert.deepEqual({ groups: result.groups, p50Ms: result.p50Ms, maxMs: result.maxMs }, { groups: 2, p50Ms: 30, maxMs: 30 });
  assert.deepEqual(result.whole, { groups: 4, p50Ms: 30, p99Ms: 500, maxMs: 500 });
  assert.equal(result.warmUpSeconds, 1);
  assert.equal(result.transactions.count, 2);
  assert.deepEqual(result.transactions.phases.commitMs, { p50Ms: 8, p99Ms: 8 });
});

test('the flags: the defaults, and each one given', () => {
  assert.deepEqual(processorsFlags(['processors']), { groups: 4000, rounds: 3, latencySeconds: 10, warmUpSeconds: 5 });
  assert.deepEqual(processorsFlags(['processors', '--groups', '10', '--rounds', '1', '--latency-seconds', '2', '--warm-up-seconds', '1']), {
    groups: 10,
    rounds: 1,
    latencySeconds: 2,
    warmUpSeconds: 1,
  });
  assert.throws(() => processorsFlags(['processors', '--rounds', '0']), /--rounds needs a positive integer/);
});

test('the lines: one per round, the medians and CPU per step against the budget, the latency and its transactions', () => {
  const round = {
    rawStepsPerSecond: 40_000,
    copyStepsPerSecond: 30_000,
    stepsPerSecond: 20_000,
    ratio: 0.5,
    ratioToCopy: 0.67,
    rawCpuMicrosPerEvent: 10,
    rawBrokerCpuMicrosPerEvent: 5,
    copyCpuMicrosPerStep: 20,
    copyBrokerCpuMicrosPerStep: null,
    processorsCpuMicrosPerStep: 40,
    brokerCpuMicrosPerStep: 6,
    mainThreadCpuMicrosPerStep: 25,
    budgetMicrosPerStep: 100,
  };
  const q = { p50Ms: 1, p99Ms: 2 };
  const result = {
    ...round,
    rounds: [round],
    processorsStepsPerSecond: 20_000,
    copyRatio: 0.75,
    cores: 2,
    latency: {
      stepsPerSecond: 5000,
      groups: 1563,
      warmUpSeconds: 5,
      p50Ms: 40,
      p99Ms: 120,
      maxMs: 150,
      whole: { groups: 2344, p50Ms: 41, p99Ms: 300, maxMs: 400 },
      transactions: { count: 900, phases: { beginMs: q, sendMs: q, offsetsMs: q, commitMs: q, handOffMs: q } },
    },
  } as unknown as ProcessorsResult;
  assert.deepEqual(roundLines(result), [
    '  round 1: raw 40,000 events/s, exactly-once copy 30,000 steps/s, processors 20,000 steps/s, ratio 0.50 (to the copy 0.67); CPU µs per step: raw 10.0 + 5.0 broker, copy 20.0, processors 40.0 + 6.0 broker (main thread 25.0); 0.5 of raw leaves 100.0',
  ]);
  const lines = throughputLines(result, 3, 4000);
  assert.equal(lines[0], 'raw kafkajs produce→consume: 40,000 events/s (median of 3 rounds)');
  assert.equal(lines[2], "ratio processors/raw: 0.50 (median of the rounds' ratios; target ≥ 0.50)");
  assert.equal(lines[4], 'CPU per step in the throughput windows (medians): processors (this process) 40.0 µs (main thread 25.0 µs, other threads 15.0 µs), broker 6.0 µs');
  assert.match(lines[5]!, /exactly-once copy 20\.0 µs \(broker not measured\), processors 46\.0 µs$/);
  const latency = latencyLines(result);
  assert.equal(latency[1], "  every group, the warm-up's included (2344): p50 41 ms, p99 300 ms, max 400 ms");
  assert.match(latency[2]!, /^its 900 transactions, p50 \/ p99 ms of each step: begin 1\.0 \/ 2\.0, .* and back 1\.0 \/ 2\.0$/);
});

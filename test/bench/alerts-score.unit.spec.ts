// Unit: how `bench alerts` scores the detectors (bench/alerts-score.ts): runs labelled by the fall rule, right
// alerts and false alarms, recall and lead time per detector, quiet healthy runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_SCENARIOS, TUNING_SCENARIOS, pickScenarios } from '../../bench/alerts-scenarios.js';
import { scoreAlerts, SCORING, type ScoredRun } from '../../bench/alerts-score.js';

/** 20 iterations at 0.8, then 0.1: the rolling mean of 5 falls below 0.64 at iteration 21. */
const collapsing = (alerts: ScoredRun['alerts']): ScoredRun => ({ name: 'c', trainSuccess: [...Array(20).fill(0.8), ...Array(20).fill(0.1)], alerts });
const healthy = (alerts: ScoredRun['alerts']): ScoredRun => ({ name: 'h', trainSuccess: Array.from({ length: 40 }, (_, i) => Math.min(0.9, 0.1 + 0.03 * i)), alerts });

test('a run is labelled by its success curve: a fall makes it collapsing, a rise healthy', () => {
  const score = scoreAlerts([collapsing([]), healthy([])]);
  assert.deepEqual(
    score.runs.map((r) => [r.name, r.fell, r.fall?.fallIndex ?? null]),
    [
      ['c', true, 21],
      ['h', false, null],
    ],
  );
});

test('alerts in the horizon before the fall or while the run is down are right; others are false alarms; lead = fall − first', () => {
  const fall = 21;
  const alerts = [
    { iteration: fall - SCORING.horizon - 1, kind: 'entropy_collapse', severity: 'warning' },
    { iteration: 12, kind: 'entropy_collapse', severity: 'warning' },
    { iteration: 15, kind: 'policy_shift_spike', severity: 'warning' },
    { iteration: fall + SCORING.after, kind: 'grad_norm_spike', severity: 'critical' },
    { iteration: fall + SCORING.after + 1, kind: 'grad_norm_spike', severity: 'critical' },
  ];
  const score = scoreAlerts([collapsing(alerts), healthy([{ iteration: 30, kind: 'entropy_collapse', severity: 'warning' }])]);
  const [c, h] = score.runs;
  assert.deepEqual([c!.rightAlerts, c!.falseAlarms, c!.lead], [4, 1, fall - 12]);
  assert.deepEqual([h!.rightAlerts, h!.falseAlarms, h!.healthyPass], [0, 1, true]);
  const byKind = Object.fromEntries(score.detectors.map((d) => [d.kind, d]));
  assert.deepEqual(byKind.entropy_collapse, { kind: 'entropy_collapse', alerts: 3, precision: 1 / 3, recall: 1, earlyRecall: 1, medianLead: fall - 12 });
  assert.deepEqual(
    byKind.grad_norm_spike,
    { kind: 'grad_norm_spike', alerts: 2, precision: 1, recall: 1, earlyRecall: 0, medianLead: -SCORING.after },
    'after the fall: caught late, and right while the run is down',
  );
  assert.deepEqual(score.overall, { kind: 'any', alerts: 6, precision: 4 / 6, recall: 1, earlyRecall: 1, medianLead: fall - 12 });
});

test('an alert after the run climbed back is a false alarm, and one long after the fall catches nothing', () => {
  // Falls at 21 and stays down until the rolling mean is back at 0.8 × 0.8 at index 58.
  const run: ScoredRun = {
    name: 'back',
    trainSuccess: [...Array(20).fill(0.8), ...Array(35).fill(0.1), ...Array(20).fill(0.8)],
    alerts: [
      { iteration: 50, kind: 'entropy_surge', severity: 'warning' },
      { iteration: 60, kind: 'entropy_surge', severity: 'warning' },
    ],
  };
  const [v] = scoreAlerts([run]).runs;
  assert.deepEqual([v!.fell, v!.rightAlerts, v!.falseAlarms, v!.lead], [true, 1, 1, null]);
});

test('a healthy run passes with at most one warning and no critical alert', () => {
  const warn = (iteration: number) => ({ iteration, kind: 'entropy_collapse', severity: 'warning' });
  const score = scoreAlerts([
    { ...healthy([warn(5)]), name: 'one' },
    { ...healthy([warn(5), warn(30)]), name: 'two' },
    { ...healthy([{ iteration: 5, kind: 'nan', severity: 'critical' }]), name: 'critical' },
  ]);
  assert.deepEqual(
    score.runs.map((r) => r.healthyPass),
    [true, false, false],
  );
  assert.deepEqual([score.healthyRuns, score.healthyPassing], [3, 1]);
  assert.equal(score.overall.recall, null, 'no run fell');
});

test('a fall that climbs back to 0.8 × its peak within 30 updates is a dip, not a collapse', () => {
  const dip = [...Array(20).fill(0.8), ...Array(26).fill(0.3), ...Array(20).fill(0.8)];
  const late = [...Array(20).fill(0.8), ...Array(32).fill(0.3), ...Array(10).fill(0.8)];
  const score = scoreAlerts([
    { name: 'dip', trainSuccess: dip, alerts: [] },
    { name: 'late', trainSuccess: late, alerts: [] },
  ]);
  assert.deepEqual(
    score.runs.map((r) => [r.name, r.fell, r.dips]),
    [
      ['dip', false, 1],
      ['late', true, 0],
    ],
  );
});

test('the tuning runs can be picked by name but are not scored by default', () => {
  assert.deepEqual(TUNING_SCENARIOS, ['frozenlake-preset-s4', 'sokoban-preset-s4', 'frozenlake-preset-s5', 'sokoban-preset-s5', 'frozenlake-preset-s6', 'sokoban-preset-s6']);
  assert.deepEqual(
    pickScenarios(TUNING_SCENARIOS).map((s) => [s.name, s.config.env, s.config.seed]),
    [
      ['frozenlake-preset-s4', 'FrozenLake', 4],
      ['sokoban-preset-s4', 'Sokoban', 4],
      ['frozenlake-preset-s5', 'FrozenLake', 5],
      ['sokoban-preset-s5', 'Sokoban', 5],
      ['frozenlake-preset-s6', 'FrozenLake', 6],
      ['sokoban-preset-s6', 'Sokoban', 6],
    ],
  );
  for (const name of TUNING_SCENARIOS) assert.ok(!DEFAULT_SCENARIOS.includes(name), name);
  assert.ok(DEFAULT_SCENARIOS.includes('frozenlake-preset-s1'));
});

test('a staged fault is timed from its onset: the delay to the first catching alert and the reach to the fall', () => {
  const run = (alerts: ScoredRun['alerts']): ScoredRun => ({ ...collapsing(alerts), onset: 18 });
  const score = scoreAlerts([
    { ...run([{ iteration: 19, kind: 'entropy_surge', severity: 'warning' }]), name: 'one' },
    { ...run([{ iteration: 25, kind: 'entropy_surge', severity: 'warning' }]), name: 'three' },
    { ...run([]), name: 'missed' },
    { ...collapsing([{ iteration: 19, kind: 'entropy_surge', severity: 'warning' }]), name: 'unstaged' },
  ]);
  assert.deepEqual(
    score.runs.map((r) => [r.name, r.delay, r.reach]),
    [
      ['one', 1, 3],
      ['three', 7, 3],
      ['missed', null, 3],
      ['unstaged', null, null],
    ],
  );
  assert.deepEqual([score.medianDelay, score.medianReach], [4, 3], 'over the caught staged faults');
});

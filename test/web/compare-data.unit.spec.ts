// Unit: the comparison of runs' decisions (web/static/compare-data.js), run in node as the browser runs the module:
// the selection in the URL read and written back, the limits on how many runs, each row's place on each x axis,
// the runs' lines aligned on one x array, alerts as markers, the shared range, the axis labels and the legend's lines.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ID_PATTERN as API_ID_PATTERN } from '../../schemas/ids.js';
import type { AlertView, CurvePoint, EvaluationView, LearnerMetricsView, RunView } from '../../web/static/types.js';

type XAxis = 'envSteps' | 'policyVersion' | 'wallTime';
interface Selection {
  readonly runIds: readonly string[];
  readonly x: XAxis;
  readonly invalid: readonly string[];
}
interface RunData {
  runId: string;
  color: string;
  run: RunView | null;
  curve: readonly CurvePoint[];
  learner: readonly LearnerMetricsView[];
  evaluations: readonly EvaluationView[];
  alerts: readonly AlertView[];
  truncated: boolean;
  error: string | null;
}
interface Progress {
  envSteps: number | null;
  policyVersion: number | null;
  timeMs: number;
}
interface Metric {
  readonly id: string;
  rows(data: RunData): ReadonlyArray<{ progress: Progress; y: number | null }>;
}
interface AlertRow {
  x: number | null;
  color: string;
  runId: string;
  alert: AlertView;
}

/** The module's exports used here, as its JSDoc declares them (web/static/tsconfig.json checks the module against those). */
interface CompareData {
  readonly MIN_RUNS: number;
  readonly MAX_RUNS: number;
  readonly X_AXES: readonly XAxis[];
  readonly DEFAULT_X: XAxis;
  readonly ID_PATTERN: RegExp;
  readonly RUN_COLORS: readonly string[];
  readonly METRICS: readonly Metric[];
  parseSelection(search: string): Selection;
  selectionHash(selection: { runIds: readonly string[]; x: XAxis }): string;
  countProblem(runIds: readonly string[]): string | null;
  selectionNote(n: number): { ok: boolean; text: string };
  runStartMs(data: RunData): number | null;
  xOf(axis: XAxis, progress: Progress, startMs: number | null): number | null;
  metricPoints(metric: Metric, data: RunData, axis: XAxis): { points: Array<[number, number]>; leftOut: number };
  alignSeries(series: ReadonlyArray<ReadonlyArray<readonly [number, number]>>): { xs: number[]; columns: Array<Array<number | null>> };
  alertRows(runs: readonly RunData[], axis: XAxis): AlertRow[];
  alertMarkers(runs: readonly RunData[], axis: XAxis): Array<AlertRow & { x: number }>;
  sharedRange(xs: readonly number[], axis: XAxis): [number, number];
  compactCount(n: number): string;
  formatDuration(seconds: number): string;
  formatX(axis: XAxis, value: number): string;
  runSummary(data: RunData, axis: XAxis): { state: 'error' | 'missing' | 'empty' | 'ok'; text: string };
}

// The page's module is plain JavaScript without a declaration file: imported by URL, typed by CompareData.
const data = (await import(new URL('../../web/static/compare-data.js', import.meta.url).href)) as CompareData;

const T0 = 1_764_400_000_000;
const point = (timeMs: number, cumulativeEnvSteps: number | null, policyVersion: number | null, rewardMean: number | null) =>
  ({ timeMs, lastEventTimeMs: timeMs, cumulativeEnvSteps, policyVersion, rewardMean, successRate: rewardMean, meanInGroupRewardStd: 0.1 }) as unknown as CurvePoint;
const step = (eventTimeMs: number, envSteps: number | null, policyVersion: number, entropy: number) =>
  ({ eventTimeMs, envSteps, policyVersion, entropy, kl: 0.01 }) as unknown as LearnerMetricsView;
const evaluation = (policyVersion: number, envSteps: number, greedySuccess: number, eventTimeMs: number) =>
  ({ policyVersion, envSteps, greedySuccess, eventTimeMs }) as unknown as EvaluationView;
const alert = (alertId: string, eventTimeMs: number, envSteps: number | null, policyVersion: number) =>
  ({ alertId, eventTimeMs, envSteps, policyVersion, severity: 'warning', kind: 'entropy_collapse' }) as unknown as AlertView;
const runView = (runId: string, firstEventTimeMs: number) => ({ runId, firstEventTimeMs, envName: 'FrozenLake', envVersion: 'v1' }) as unknown as RunView;

function run(runId: string, extra: Partial<RunData> = {}): RunData {
  return { runId, color: '#1f6feb', run: runView(runId, T0), curve: [], learner: [], evaluations: [], alerts: [], truncated: false, error: null, ...extra };
}

const metric = (id: string) => data.METRICS.find((m) => m.id === id)!;

test('the selection: ids in the order named, each once, names that are no id apart; an unknown x is env steps', () => {
  assert.deepEqual(data.parseSelection('runs=b,a,b&x=wallTime'), { runIds: ['b', 'a'], x: 'wallTime', invalid: [] });
  assert.deepEqual(data.parseSelection('runs=a,x%20y,,%27q&x=steps'), { runIds: ['a'], x: 'envSteps', invalid: ['x y', "'q"] });
  assert.deepEqual(data.parseSelection(''), { runIds: [], x: data.DEFAULT_X, invalid: [] });
});

test('the hash written is the hash read: ids with / and : survive, the axis too', () => {
  const selection = { runIds: ['run-7/g1', 'a:b.c_d', 'x'], x: 'policyVersion' as const };
  const hash = data.selectionHash(selection);
  assert.equal(hash, '#/compare?runs=run-7%2Fg1,a%3Ab.c_d,x&x=policyVersion');
  assert.deepEqual(data.parseSelection(hash.slice(hash.indexOf('?') + 1)), { ...selection, invalid: [] });
});

test('the id grammar is the API’s, and there is a colour for every run the page takes', () => {
  assert.equal(data.ID_PATTERN.source, API_ID_PATTERN.source);
  assert.equal(new Set(data.RUN_COLORS).size, data.MAX_RUNS);
  assert.deepEqual(data.X_AXES, ['envSteps', 'policyVersion', 'wallTime']);
});

test('between MIN_RUNS and MAX_RUNS runs: fewer or more is refused with a message naming how many', () => {
  assert.deepEqual([data.MIN_RUNS, data.MAX_RUNS], [2, 8]);
  assert.match(data.countProblem([]) ?? '', /at least 2 .* names none/);
  assert.match(data.countProblem(['a']) ?? '', /names one/);
  assert.equal(data.countProblem(['a', 'b']), null);
  assert.equal(data.countProblem(Array.from({ length: 8 }, (_, i) => `r${i}`)), null);
  assert.match(data.countProblem(Array.from({ length: 9 }, (_, i) => `r${i}`)) ?? '', /At most 8 .* names 9/);
  assert.deepEqual(
    [0, 1, 2, 8, 9].map((n) => data.selectionNote(n).ok),
    [false, false, true, true, false],
  );
  assert.match(data.selectionNote(9).text, /9 runs ticked: at most 8/);
});

test('a row on each axis: env steps and policy version as the API gave them, wall time from the run’s start', () => {
  const progress = { envSteps: 640, policyVersion: 3, timeMs: T0 + 90_000 };
  assert.equal(data.xOf('envSteps', progress, T0), 640);
  assert.equal(data.xOf('policyVersion', progress, T0), 3);
  assert.equal(data.xOf('wallTime', progress, T0), 90);
  assert.equal(data.xOf('wallTime', progress, null), null);
  assert.equal(data.runStartMs(run('a')), T0, "the run's first event as GET /v1/runs saw it");
  assert.equal(data.runStartMs(run('a', { run: null, learner: [step(T0 + 5000, 1, 0, 1)], curve: [point(T0 + 7000, 1, 0, 0)] })), T0 + 5000, 'else the earliest row');
  assert.equal(data.runStartMs(run('a', { run: null })), null);
});

test("each chart's rows: curve points by their cumulative env steps, learner steps by theirs, evaluations by the steps they were trained on", () => {
  const d = run('a', {
    curve: [point(T0 + 1000, 100, 0, 0.2), point(T0 + 2000, 250, 1, null), point(T0 + 3000, null, 1, 0.6)],
    learner: [step(T0 + 1500, 100, 0, 1.2), step(T0 + 2500, 250, 1, 1.1)],
    evaluations: [evaluation(0, -1, 0.05, T0 + 1800), evaluation(1, 200, 0.4, T0 + 2800)],
  });
  assert.deepEqual(data.metricPoints(metric('reward'), d, 'envSteps'), { points: [[100, 0.2]], leftOut: 1 }, 'no reward: skipped; no env steps: left out');
  assert.deepEqual(data.metricPoints(metric('reward'), d, 'policyVersion').points, [
    [0, 0.2],
    [1, 0.6],
  ]);
  assert.deepEqual(data.metricPoints(metric('entropy'), d, 'wallTime').points, [
    [1.5, 1.2],
    [2.5, 1.1],
  ]);
  assert.deepEqual(data.metricPoints(metric('held-out'), d, 'envSteps'), { points: [[200, 0.4]], leftOut: 1 }, 'an evaluation that reports no env steps (-1) is left out');
  assert.deepEqual(
    data.METRICS.map((m) => m.id),
    ['reward', 'success', 'held-out', 'entropy', 'kl', 'in-group-std'],
  );
});

test('alignment: one x array (the union, in order), one column per run, the mean where a run has several points at one x', () => {
  const { xs, columns } = data.alignSeries([
    [
      [0, 1],
      [2, 3],
      [2, 5],
    ],
    [
      [1, 10],
      [2, 20],
    ],
    [],
  ]);
  assert.deepEqual(xs, [0, 1, 2]);
  assert.deepEqual(columns, [
    [1, null, 4],
    [null, 10, 20],
    [null, null, null],
  ]);
  assert.deepEqual(data.alignSeries([]), { xs: [], columns: [] });
});

test("alerts: each in its run's colour at its place on the axis; those without one are listed but not drawn", () => {
  const a = run('a', { color: '#1f6feb', alerts: [alert('a2', T0 + 4000, 300, 2), alert('a1', T0 + 2000, null, 1)] });
  const b = run('b', { color: '#d1242f', alerts: [alert('b1', T0 + 1000, 50, 0)] });
  const rows = data.alertRows([a, b], 'envSteps');
  assert.deepEqual(
    rows.map((r) => [r.runId, r.alert.alertId, r.x, r.color]),
    [
      ['a', 'a2', 300, '#1f6feb'],
      ['a', 'a1', null, '#1f6feb'],
      ['b', 'b1', 50, '#d1242f'],
    ],
  );
  assert.deepEqual(
    data.alertMarkers([a, b], 'envSteps').map((m) => m.alert.alertId),
    ['a2', 'b1'],
  );
  assert.deepEqual(
    data.alertMarkers([a, b], 'wallTime').map((m) => [m.alert.alertId, m.x]),
    [
      ['a1', 2],
      ['a2', 4],
      ['b1', 1],
    ],
  );
});

test('the shared x range: every x, padded; half a version either side on the version axis; [0, 1] with nothing', () => {
  assert.deepEqual(data.sharedRange([], 'envSteps'), [0, 1]);
  assert.deepEqual(data.sharedRange([0, 100, 50], 'envSteps'), [-2, 102]);
  assert.deepEqual(data.sharedRange([3, 1], 'policyVersion'), [0.5, 3.5]);
  assert.deepEqual(data.sharedRange([10], 'wallTime'), [9, 11]);
});

test('axis labels: env steps compact, versions whole, wall time as m:ss or h:mm:ss', () => {
  assert.deepEqual([0, 950, 1000, 12_500, 123_456, 2_500_000].map(data.compactCount), ['0', '950', '1k', '12.5k', '123k', '2.5M']);
  assert.deepEqual([0, 59.6, 61, 3599, 3600, 3725].map(data.formatDuration), ['0:00', '1:00', '1:01', '59:59', '1:00:00', '1:02:05']);
  assert.equal(data.formatX('policyVersion', 7), 'v7');
  assert.equal(data.formatX('policyVersion', 7.5), '', 'no tick between versions');
  assert.equal(data.formatX('envSteps', 48_000), '48k');
  assert.equal(data.formatX('wallTime', 90), '1:30');
});

test("the legend's line: a run that failed, one that does not exist, one with nothing to draw, and one with its counts", () => {
  assert.deepEqual(data.runSummary(run('a', { error: 'ClickHouse is unavailable' }), 'envSteps'), {
    state: 'error',
    text: 'Could not load this run: ClickHouse is unavailable',
  });
  assert.equal(data.runSummary(run('a', { run: null }), 'envSteps').state, 'missing');
  assert.match(data.runSummary(run('a'), 'envSteps').text, /^FrozenLake v1; no rollout batches, learner steps or evaluations yet/);
  const full = run('a', {
    curve: [point(T0 + 1000, null, 0, 0.2)],
    learner: [step(T0 + 1500, 100, 0, 1.2)],
    alerts: [alert('x', T0, 1, 0)],
    truncated: true,
  });
  const summary = data.runSummary(full, 'envSteps');
  assert.equal(summary.state, 'ok');
  assert.match(summary.text, /^FrozenLake v1; 1 curve point · 1 learner step · 0 evaluations · 1 alert \(/);
  assert.match(summary.text, /the first are shown; 3 values without an env-step count left out\)\.$/);
  assert.doesNotMatch(data.runSummary(full, 'policyVersion').text, /left out/);
  const learnerSide = run('a', { run: { ...runView('a', T0), envName: null, envVersion: null }, evaluations: [{ ...evaluation(0, 0, 0.1, T0), envName: 'Sokoban' }] });
  assert.match(data.runSummary(learnerSide, 'envSteps').text, /^Sokoban; /, 'the environment of its evaluations when no step names one');
  assert.match(data.runSummary(run('a', { run: null, learner: [step(T0, 1, 0, 1)] }), 'envSteps').text, /^environment not recorded; /);
});

// Unit: the run page's data decisions (web/static/run-data.js), run in node as the browser runs the module: a live
// event into the state, the series kept in order and trimmed, the time range the charts share, and where the live
// stream starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AlertView, CurvePoint, EvaluationView, LearnerMetricsView, LiveEvent, RolloutStatsView } from '../../web/static/types.js';

interface RunState {
  curve: CurvePoint[];
  bucketMs: number | null;
  learner: LearnerMetricsView[];
  alerts: AlertView[];
  evaluations: EvaluationView[];
}

/** The module's exports used here, as its JSDoc declares them (web/static/tsconfig.json checks the module against those). */
interface RunData {
  readonly STREAM_OVERLAP_MS: number;
  readonly MAX_POINTS: number;
  emptyRunState(): RunState;
  pointOfBatch(row: RolloutStatsView): CurvePoint;
  applyLiveEvent(state: RunState, event: LiveEvent): boolean;
  keepNewest(state: RunState): void;
  timeRange(state: RunState, nowMs: number): [number, number];
  streamStart(state: RunState, nowMs: number): number;
  templateScores(step: LearnerMetricsView): { time: number; mi: number; retrieval: number | null; chance: number | null } | null;
  sortedKs(points: readonly CurvePoint[], field: 'passAtK' | 'passHatK'): string[];
}

// The page's module is plain JavaScript without a declaration file: imported by URL, typed by RunData.
const data = (await import(new URL('../../web/static/run-data.js', import.meta.url).href)) as RunData;

const batch = (batchId: string, eventTimeMs: number, extra: Partial<RolloutStatsView> = {}): RolloutStatsView => ({
  runId: 'r',
  scope: 'batch',
  batchId,
  groupId: null,
  groups: 2,
  trajectories: 8,
  rewardMean: 0.5,
  rewardStd: 0.25,
  meanInGroupRewardStd: 0.1,
  successRate: 0.5,
  passAtK: {},
  passHatK: {},
  meanLength: 2.5,
  invalidActionRate: 0,
  incomplete: 0,
  droppedGroups: 0,
  droppedByReason: {},
  closedBy: { full: 1, timeout: 1 },
  eventTimeMs,
  ...extra,
});
const learnerStep = (step: number, eventTimeMs: number, metrics: Record<string, number | null> = {}) => ({ step, eventTimeMs, metrics }) as unknown as LearnerMetricsView;
const alert = (alertId: string, eventTimeMs: number) => ({ alertId, eventTimeMs, severity: 'warning' }) as unknown as AlertView;
const evaluation = (policyVersion: number, eventTimeMs: number) => ({ policyVersion, eventTimeMs }) as unknown as EvaluationView;

test('a live batch is one curve point: mean ± std as the band, env steps from the mean length, groups by close reason', () => {
  const point = data.pointOfBatch(batch('b1', 5000));
  assert.deepEqual(
    [point.timeMs, point.batches, point.rewardLow, point.rewardHigh, point.envSteps, point.closedFull, point.closedTimeout, point.closedIdle],
    [5000, 1, 0.25, 0.75, 20, 1, 1, 0],
  );
  assert.equal(data.pointOfBatch(batch('b2', 1, { rewardStd: null })).rewardLow, null);
});

test('a live batch joins a per-batch curve (once per batch id), not a bucketed one; either way it asks for a refetch', () => {
  const state = data.emptyRunState();
  assert.equal(data.applyLiveEvent(state, ['rollout-stats', batch('b1', 1000)]), true);
  assert.equal(data.applyLiveEvent(state, ['rollout-stats', batch('b1', 1000, { rewardMean: 1 })]), true);
  assert.deepEqual(
    state.curve.map((p) => [p.batchId, p.rewardMean]),
    [['b1', 1]],
  );
  state.bucketMs = 60_000;
  assert.equal(data.applyLiveEvent(state, ['rollout-stats', batch('b2', 2000)]), true);
  assert.equal(state.curve.length, 1);
});

test('learner steps, alerts and evaluations replace the one with their key or are added, without a refetch', () => {
  const state = data.emptyRunState();
  assert.equal(data.applyLiveEvent(state, ['learner-step', learnerStep(1, 10)]), false);
  data.applyLiveEvent(state, ['learner-step', learnerStep(1, 11)]);
  data.applyLiveEvent(state, ['alert', alert('a', 12)]);
  data.applyLiveEvent(state, ['evaluation', evaluation(3, 13)]);
  data.applyLiveEvent(state, ['evaluation', evaluation(3, 14)]);
  assert.deepEqual([state.learner.map((s) => s.eventTimeMs), state.alerts.length, state.evaluations.map((e) => e.eventTimeMs)], [[11], 1, [14]]);
});

test('each series is put in order and keeps its newest points', () => {
  const state = data.emptyRunState();
  state.learner = Array.from({ length: data.MAX_POINTS + 2 }, (_, i) => learnerStep(data.MAX_POINTS + 1 - i, i));
  state.evaluations = [evaluation(2, 0), evaluation(1, 0)];
  state.curve = [data.pointOfBatch(batch('b', 30)), data.pointOfBatch(batch('a', 10))];
  data.keepNewest(state);
  assert.equal(state.learner.length, data.MAX_POINTS);
  assert.deepEqual([state.learner[0]?.step, state.learner.at(-1)?.step], [2, data.MAX_POINTS + 1]);
  assert.deepEqual(
    state.evaluations.map((e) => e.policyVersion),
    [1, 2],
  );
  assert.deepEqual(
    state.curve.map((p) => p.batchId),
    ['a', 'b'],
  );
});

test('the shared time range spans every series, padded; the last hour while there is nothing', () => {
  const state = data.emptyRunState();
  assert.deepEqual(data.timeRange(state, 7_200_000), [3600, 7200]);
  state.learner = [learnerStep(1, 100_000)];
  state.alerts = [alert('a', 200_000)];
  assert.deepEqual(data.timeRange(state, 0), [97, 203]);
  state.alerts = [];
  assert.deepEqual(data.timeRange(state, 0), [99, 101], 'at least a second either side');
});

test('the stream starts an overlap before the oldest of the newest rows of each kind, or before now', () => {
  const state = data.emptyRunState();
  assert.equal(data.streamStart(state, 1_000_000), 1_000_000 - data.STREAM_OVERLAP_MS);
  state.learner = [learnerStep(1, 500_000), learnerStep(2, 900_000)];
  state.alerts = [alert('newest', 800_000), alert('older', 100_000)];
  state.evaluations = [evaluation(1, 950_000), evaluation(2, 700_000)];
  assert.equal(data.streamStart(state, 0), 800_000 - data.STREAM_OVERLAP_MS);
});

test('template scores: MI over its bound, only for steps the cross-scoring measured', () => {
  assert.equal(data.templateScores(learnerStep(1, 1000, {})), null);
  assert.equal(data.templateScores(learnerStep(1, 1000, { 'template.mi': 0.5, 'template.miUpperBound': 0 })), null);
  assert.deepEqual(data.templateScores(learnerStep(1, 2000, { 'template.mi': 0.5, 'template.miUpperBound': 2, 'template.chance': 0.25 })), {
    time: 2,
    mi: 0.25,
    retrieval: null,
    chance: 0.25,
  });
});

test('the ks of pass maps in numeric order', () => {
  const points = [data.pointOfBatch(batch('a', 1, { passAtK: { '16': 1, '2': 0.5 } })), data.pointOfBatch(batch('b', 2, { passAtK: { '4': 0.7 } }))];
  assert.deepEqual(data.sortedKs(points, 'passAtK'), ['2', '4', '16']);
  assert.deepEqual(data.sortedKs(points, 'passHatK'), []);
});

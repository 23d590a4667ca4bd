// Unit: `bench queries`' pure parts (bench/queries-endpoints.ts, bench/queries.ts) — the endpoints the web UI asks for,
// an endpoint's median, max and verdict, the run and episode timed, and the layout's reported figures.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { endpointResult, endpoints, TARGET_MS } from '../../bench/queries-endpoints.js';
import { layoutFigures, timedEpisode } from '../../bench/queries.js';
import { planLayout } from '../../bench/queries-data.js';

test("the endpoints: the UI's paths for one run and episode, each counting its response's rows", () => {
  const list = endpoints('run/1', 'run/1/g2/e3');
  assert.equal(list.length, 10);
  assert.deepEqual(
    list.map((e) => e.path),
    [
      '/v1/runs?limit=200',
      '/v1/runs/run%2F1/curve?limit=1000',
      '/v1/runs/run%2F1/rollout-stats?limit=1000',
      '/v1/runs/run%2F1/learner-metrics?order=desc&limit=1000',
      '/v1/runs/run%2F1/alerts?order=desc&limit=500',
      '/v1/runs/run%2F1/pass-at-k?limit=1000',
      '/v1/runs/run%2F1/trajectories?limit=50',
      '/v1/runs/run%2F1/trajectories/run%2F1%2Fg2%2Fe3',
      '/v1/trajectories/run%2F1%2Fg2%2Fe3',
      '/v1/dead-letters?limit=200',
    ],
  );
  const rows = (name: string, body: Record<string, unknown>) => list.find((e) => e.name === name)!.rows(body);
  assert.equal(rows('runs', { count: 7 }), 7);
  assert.equal(rows('runs', { count: [1, 2] }), 2);
  assert.equal(rows('pass-at-k', { overTime: { points: [1, 2, 3] } }), 3);
  assert.equal(rows('trajectory', { steps: [1] }), 1);
  assert.equal(rows('curve', {}), 0);
});

test("an endpoint's result: the median and max, times to a tenth of a ms, PASS under the target with every answer 200", () => {
  const endpoint = { name: 'runs', path: '/v1/runs' };
  const result = endpointResult(endpoint, { times: [12.34, 40.06, 20], statuses: [200, 200, 200], rows: 5, bytes: 900 });
  assert.deepEqual(result, {
    name: 'runs',
    path: '/v1/runs',
    statuses: [200, 200, 200],
    timesMs: [12.3, 40.1, 20],
    medianMs: 20,
    maxMs: 40.06,
    rows: 5,
    bytes: 900,
    pass: true,
  });
  assert.equal(endpointResult(endpoint, { times: [TARGET_MS, TARGET_MS], statuses: [200, 200], rows: 0, bytes: 0 }).pass, false);
  assert.equal(endpointResult(endpoint, { times: [1], statuses: [500], rows: 0, bytes: 0 }).pass, false);
});

test('the run in the middle of the layout and an episode in the middle of it; the layout figures reported', () => {
  const layout = planLayout(100_000, 4, Date.UTC(2026, 0, 1));
  const { runId, episodeId } = timedEpisode(layout);
  assert.equal(runId, layout.runIds[2]);
  assert.equal(episodeId, `${runId}/g${Math.floor(layout.groupsPerRun / 2)}/e3`);
  assert.deepEqual(layoutFigures(layout), {
    requestedRows: layout.requestedRows,
    runs: layout.runs,
    groupsPerRun: layout.groupsPerRun,
    batchesPerRun: layout.batchesPerRun,
    steps: layout.steps,
    episodes: layout.episodes,
  });
});

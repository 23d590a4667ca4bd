// Unit: GET /v1/runs/:runId/episode-outcomes' query (storage/query/episode-outcomes.ts): parameters read strictly,
// the SQL bounded by the run and the window, the rows turned into counts; the gateway's env version is the one the
// gateway writes. The query against ClickHouse: test/api/read.int.spec.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HttpProblem } from '../../../core/problem.js';
import { ENV_VERSION } from '../../../gateway/record.js';
import { episodeOutcomesSql, episodeOutcomesView, GATEWAY_ENV_VERSION, parseEpisodeOutcomesQuery } from '../../../storage/query/episode-outcomes.js';

const NOW = 1_764_400_000_000;

test('parameters: a window, nothing else; an unknown parameter is a 400 naming it', () => {
  const q = parseEpisodeOutcomesQuery('run-7', { sinceMs: '1000', untilMs: '2000' }, NOW);
  assert.deepEqual(q, { runId: 'run-7', sinceMs: 1000, untilMs: 2000 });
  assert.throws(
    () => parseEpisodeOutcomesQuery('run-7', { limit: '5' }, NOW),
    (error: unknown) => error instanceof HttpProblem && error.status === 400 && error.problem.field === 'limit',
  );
});

test("the SQL reads one run's trajectories and the gateway's ends of its steps, inside the window", () => {
  const sql = episodeOutcomesSql({ runId: 'run-7', sinceMs: 1000, untilMs: 2000 });
  assert.equal(sql.match(/run_id = 'run-7'/g)?.length, 2, 'both parts are bounded by the run');
  assert.match(sql, /last_event_time_ms >= 1000 AND last_event_time_ms < 2000/);
  assert.match(sql, /event_time_ms >= 1000 AND event_time_ms < 2000/);
  assert.match(sql, /env_version = 'openai-gateway-v1'/);
  assert.match(sql, /uniqExact\(episode_id\)/, 'distinct episodes: a row stored twice counts once');
});

test('rows become counts; missing names are 0; the gateway writes the env version the query looks for', () => {
  assert.equal(GATEWAY_ENV_VERSION, ENV_VERSION);
  const view = episodeOutcomesView([
    { source: 'trajectory', name: 'terminated', episodes: '7' },
    { source: 'trajectory', name: 'truncated', episodes: 3 },
    { source: 'gateway', name: 'finish', episodes: '5' },
    { source: 'gateway', name: 'timeout', episodes: '2' },
  ]);
  assert.deepEqual(view, { trajectories: { terminated: 7, truncated: 3, incomplete: 0 }, gateway: { finished: 5, timedOut: 2 } });
  assert.deepEqual(episodeOutcomesView([]), { trajectories: { terminated: 0, truncated: 0, incomplete: 0 }, gateway: { finished: 0, timedOut: 0 } });
});

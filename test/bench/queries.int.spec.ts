// Integration (real ClickHouse, real Kafka): `bench queries` end to end at a tiny size, on a database of its
// own. The first call generates the data (server-side) and keeps it; the second reuses it and drops it. Every
// read endpoint must answer 200 with the rows the layout implies, and no request may log a server error.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../core/config.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { measureQueries, type QueriesBenchResult } from '../../bench/queries.js';
import { DEAD_LETTERS, EPISODE_LENGTHS, GROUP_SIZE, STEPS_PER_GROUP } from '../../bench/queries-data.js';

const base = loadConfig();
const database = `test_bench_queries_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const ROWS = 20_000;
const RUNS = 4;

after(async () => {
  await clickHouseClient(base, null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

const databaseExists = async (): Promise<boolean> =>
  Number((await clickHouseClient(base, null).query(`SELECT count() FROM system.databases WHERE name = '${database}'`)).trim()) > 0;

function checkEndpoints(result: QueriesBenchResult): void {
  const { layout } = result;
  const byName = new Map(result.endpoints.map((e) => [e.name, e]));
  assert.deepEqual(
    [...byName.keys()],
    ['runs', 'curve', 'rollout-stats', 'learner-metrics', 'alerts', 'pass-at-k', 'trajectories', 'trajectory', 'trajectory, run looked up', 'dead-letters'],
  );
  for (const endpoint of result.endpoints) {
    assert.deepEqual(endpoint.statuses, [200], `${endpoint.path} answers 200`);
    assert.ok(endpoint.rows > 0, `${endpoint.path} holds rows`);
    assert.equal(endpoint.timesMs.length, 1);
    assert.ok(endpoint.medianMs > 0 && endpoint.maxMs >= endpoint.medianMs);
  }
  const rows = (name: string): number => byName.get(name)!.rows;
  assert.equal(rows('runs'), RUNS);
  for (const name of ['curve', 'rollout-stats', 'learner-metrics', 'pass-at-k']) assert.equal(rows(name), layout.batchesPerRun, `${name}: one row per batch`);
  assert.ok(rows('alerts') >= 1 && rows('alerts') <= layout.batchesPerRun);
  assert.equal(rows('trajectories'), 50, 'the limit the dashboard asks for');
  assert.ok((EPISODE_LENGTHS as readonly number[]).includes(rows('trajectory')), 'the episode turn by turn: 5 to 10 steps');
  assert.equal(rows('trajectory, run looked up'), rows('trajectory'));
  assert.equal(rows('dead-letters'), Math.min(200, DEAD_LETTERS));
  assert.match(result.episodeId, new RegExp(`^${result.runId}/g\\d+/e\\d$`));
  assert.deepEqual(result.serverErrors, []);
}

test('bench queries: generates the tables server-side, times every read endpoint, reuses a kept database, drops it', { timeout: 60_000 }, async () => {
  const first = await measureQueries({ rows: ROWS, runs: RUNS, repeat: 1, keep: true, database, config: base });
  assert.equal(first.database, database);
  assert.equal(first.generation.reused, false);
  assert.equal(first.layout.steps, first.layout.groupsPerRun * RUNS * STEPS_PER_GROUP);
  assert.ok(first.layout.steps >= ROWS && first.layout.steps < ROWS + RUNS * STEPS_PER_GROUP);
  const generated = new Map(first.generation.tables.map((t) => [t.table, t.rows]));
  assert.equal(generated.get('steps'), first.layout.steps);
  assert.equal(generated.get('trajectories'), first.layout.episodes);
  assert.equal(generated.get('samples'), first.layout.episodes);
  assert.equal(first.layout.episodes, (first.layout.steps / STEPS_PER_GROUP) * GROUP_SIZE);
  assert.equal(generated.get('learner_steps'), RUNS * first.layout.batchesPerRun);
  assert.equal(generated.get('rollout_stats'), RUNS * (first.layout.groupsPerRun + first.layout.batchesPerRun), 'a row per group and per batch');
  assert.match(first.clickhouseVersion, /^\d+\.\d+/);
  checkEndpoints(first);
  assert.ok(await databaseExists(), '--keep keeps the database');

  const second = await measureQueries({ rows: ROWS, runs: RUNS, repeat: 1, keep: false, database, config: base });
  assert.equal(second.generation.reused, true);
  assert.deepEqual(second.generation.tables, []);
  checkEndpoints(second);
  assert.equal(await databaseExists(), false, 'dropped without --keep');
});

// The trajectory inspector's samples come from samples_by_episode (migration 0004), a copy of `samples` sorted
// by (run_id, episode_id, sample_id), on real ClickHouse (a database of the test's own, dropped afterwards):
//   1. the migration on a database that already has samples copies them, and the materialized view copies
//      every sample inserted afterwards; the endpoint's query finds the samples of episodes of both kinds;
//   2. the query reads the episode's granules, not the run: ClickHouse's own count of the rows it read
//      (FORMAT JSON's statistics.rows_read) is a fraction of the run's samples, where the former query —
//      `samples FINAL` filtered by episode_id, outside that table's sorting key — read every one of them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig, type TrajflowConfig } from '../../../core/config.js';
import { applyMigrations, listMigrations } from '../../../infra/clickhouse/migrations.js';
import { clickHouseClient, type ClickHouseHttp } from '../../../infra/clickhouse/http.js';
import { episodeSamplesSql, queryEpisode } from '../../../storage/query/trajectories.js';

const RUN = 'run-inspector';
/** Samples of the run before the migration (one per episode), and after it. */
const BEFORE = 60_000;
const AFTER = 500;
/** A fixed time: every row in one monthly partition, as a run's samples of one month are. */
const TIME_MS = 1_764_633_600_000;

const base = loadConfig();
const database = `test_episode_samples_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const config: TrajflowConfig = { ...base, clickhouse: { ...base.clickhouse, database } };
let ch: ClickHouseHttp;

/** Samples `ep-<from>` … `ep-<from + count - 1>` of RUN, one per episode, as the sink writes them. */
const samplesSql = (from: number, count: number) => `INSERT INTO samples (sample_id, run_id, group_id, episode_id, policy_version, reward, estimator,
  group_size, group_reward_mean, group_reward_std, token_count, loss_token_count, event_time_ms, kafka_topic, kafka_partition, kafka_offset)
SELECT concat('ep-', toString(n), '/grpo'), '${RUN}', concat('g-', toString(intDiv(n, 8))), concat('ep-', toString(n)), toInt64(intDiv(n, 128)),
  toFloat64(n % 2), 'grpo', toUInt32(8), 0.5, 0.5, toUInt32(40), toUInt32(20), toInt64(${TIME_MS} + n), 'test.samples', toInt32(0), toInt64(n)
FROM (SELECT number + ${from} AS n FROM numbers(${count}))`;

before(async () => {
  // The database as it was before migration 0004, with samples in it.
  await applyMigrations(config, { migrations: listMigrations().filter((m) => m.version < 4) });
  ch = clickHouseClient(config);
  await ch.exec(samplesSql(0, BEFORE));
});

after(async () => {
  await clickHouseClient(base, null).exec(`DROP DATABASE IF EXISTS ${database}`);
});

const countFinal = async (table: string): Promise<number> => Number((await ch.queryJson<{ n: number }>(`SELECT count() AS n FROM ${table} FINAL`))[0]!.n);

test('migration 0004 copies the samples a database has, the view copies new ones, and the inspector finds both', async () => {
  const report = await applyMigrations(config, { migrations: listMigrations().filter((m) => m.version <= 4) });
  assert.deepEqual(
    report.applied.map((m) => m.name),
    ['samples_by_episode'],
  );
  assert.equal(await countFinal('samples_by_episode'), BEFORE);
  await ch.exec(samplesSql(BEFORE, AFTER));
  assert.equal(await countFinal('samples'), BEFORE + AFTER);
  assert.equal(await countFinal('samples_by_episode'), BEFORE + AFTER, 'inserted after the migration: copied by the view');
  const episodes = [0, 12_345, BEFORE - 1, BEFORE, BEFORE + AFTER - 1];
  // An episode the inspector shows has steps (the other columns as ClickHouse defaults them).
  await ch.exec(
    `INSERT INTO steps (event_id, run_id, episode_id, step_index, event_time_ms) VALUES ${episodes.map((n) => `('ep-${n}/s0', '${RUN}', 'ep-${n}', 0, ${TIME_MS + n})`).join(', ')}`,
  );
  for (const n of episodes) {
    const episode = await queryEpisode(ch, { runId: RUN, episodeId: `ep-${n}` });
    assert.deepEqual(episode.sampleIds, [`ep-${n}/grpo`], `ep-${n}`);
    assert.equal(episode.sample?.policyVersion, Math.floor(n / 128));
    assert.equal(episode.sample?.eventTimeMs, TIME_MS + n);
  }
  await assert.rejects(queryEpisode(ch, { runId: RUN, episodeId: 'ep-none' }), /no episode 'ep-none'/);
});

/** Rows ClickHouse read for a query (FORMAT JSON reports it). */
async function rowsRead(sql: string): Promise<number> {
  const body = JSON.parse(await ch.query(`${sql}\nFORMAT JSON`)) as { statistics: { rows_read: number } };
  return Number(body.statistics.rows_read);
}

test("the inspector's samples query reads the episode's granules, not every sample of the run", async (t) => {
  const total = await countFinal('samples');
  assert.ok(total >= BEFORE);
  const keyed = await rowsRead(episodeSamplesSql(RUN, 'ep-31337'));
  const former = await rowsRead(`SELECT sample_id FROM samples FINAL WHERE run_id = '${RUN}' AND episode_id = 'ep-31337'`);
  t.diagnostic(`rows read for one episode's samples: ${keyed} (samples_by_episode), ${former} (samples FINAL by episode_id), of the run's ${total}`);
  assert.ok(former >= total, `the former query read ${former} of ${total} rows`);
  assert.ok(keyed < total / 4, `the keyed query read ${keyed} rows of the run's ${total}`);
});

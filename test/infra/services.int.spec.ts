// Against the shared services (the default config): `up` is idempotent, status reports both up, migrations
// are idempotent. Nothing here stops or restarts a service.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../core/config.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { applyMigrations, listMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseStatus, stopClickHouse } from '../../infra/clickhouse/server.js';
import { ensureUp } from '../../infra/up.js';
import { createKafka } from '../../streams/kafka-client.js';
import { kafkaStatus, stopKafka } from '../../infra/kafka/server.js';
import { topicSpecs } from '../../infra/topics.js';
import { uniqueSuffix } from './helpers.js';

const config = loadConfig();

test('up twice reuses the same processes', async () => {
  const first = await ensureUp(config);
  const second = await ensureUp(config);
  assert.equal(second.kafka.pid, first.kafka.pid);
  assert.equal(second.clickhouse.pid, first.clickhouse.pid);
  assert.equal(second.kafka.reused, true);
  assert.equal(second.clickhouse.reused, true);
  assert.deepEqual(second.topics.created, []);
  assert.deepEqual(second.migrations.applied, []);
  assert.deepEqual(second.topics.differences, []);
});

test('status reports both services up with pids, versions and log files', async () => {
  const [kafka, clickhouse] = await Promise.all([kafkaStatus(config), clickHouseStatus(config)]);
  assert.equal(kafka.running, true);
  assert.equal(clickhouse.running, true);
  if (config.kafka.managed) {
    assert.ok(kafka.pid);
    assert.equal(kafka.version, config.kafka.version);
    assert.match(kafka.logFile ?? '', /kafka\.log$/);
  }
  if (config.clickhouse.managed) {
    assert.ok(clickhouse.pid);
    assert.match(clickhouse.logFile ?? '', /clickhouse-server\.log$/);
  }
  assert.match(clickhouse.version ?? '', /^\d+\.\d+/);
});

test('migrations create the database, apply once, and a second run changes nothing', async (t) => {
  const database = `trajflow_test_${uniqueSuffix()}`;
  const scoped = { clickhouse: { ...config.clickhouse, database } };
  t.after(() => clickHouseClient(config, null).exec(`DROP DATABASE IF EXISTS ${database}`));
  const first = await applyMigrations(scoped);
  const all = listMigrations().map((m) => m.version);
  assert.deepEqual(
    first.applied.map((m) => m.version),
    all,
  );
  assert.deepEqual(first.versions, all);
  const second = await applyMigrations(scoped);
  assert.deepEqual(second.applied, []);
  assert.deepEqual(second.versions, first.versions);
  const rows = await clickHouseClient(scoped).queryJson<{ version: number; name: string }>('SELECT version, name FROM schema_migrations ORDER BY version');
  assert.deepEqual(
    rows.map((r) => r.version),
    all,
    'each version recorded once',
  );
});

test('the event tables accept rows shaped like the events, and the HTTP client reads them back', async (t) => {
  const database = `trajflow_test_${uniqueSuffix()}`;
  const scoped = { clickhouse: { ...config.clickhouse, database } };
  t.after(() => clickHouseClient(config, null).exec(`DROP DATABASE IF EXISTS ${database}`));
  await applyMigrations(scoped);
  const ch = clickHouseClient(scoped);
  const now = Date.now();
  await ch.insertJsonEachRow('steps', [
    {
      event_id: 'e1',
      run_id: 'r',
      env_name: 'grid',
      env_version: '1',
      group_id: 'g',
      episode_id: 'ep',
      step_index: 0,
      observation: 'obs',
      has_observation_token_ids: 0,
      observation_token_ids: [],
      action: 'up',
      action_token_ids: [1, 2],
      action_log_probs: [-0.5, -1.25],
      policy_version: 3,
      reward: 1.5,
      terminated: 1,
      truncated: 0,
      action_valid: 1,
      state_key: null,
      metrics_keys: ['len'],
      metrics_values: [2],
      info_keys: ['k'],
      info_values: ['v'],
      event_time_ms: now,
      kafka_topic: 'trajflow.env.steps',
      kafka_partition: 2,
      kafka_offset: 41,
    },
  ]);
  await ch.insertJsonEachRow('policy_versions', [
    {
      run_id: 'r',
      version: 1,
      weights_uri: 'file:///w1',
      checksum: 'c',
      parent_version: null,
      learner_step: 0,
      created_at_ms: now,
      kafka_topic: 't',
      kafka_partition: 0,
      kafka_offset: 0,
    },
  ]);
  const steps = await ch.queryJson<{ event_time_ms: number; action_log_probs: number[]; state_key: string | null }>('SELECT event_time_ms, action_log_probs, state_key FROM steps');
  assert.deepEqual(steps, [{ event_time_ms: now, action_log_probs: [-0.5, -1.25], state_key: null }]);
  const versions = await ch.queryJson<{ parent_version: number | null }>('SELECT parent_version FROM policy_versions');
  assert.deepEqual(versions, [{ parent_version: null }]);
});

test('ClickHouse errors carry the server message', async () => {
  await assert.rejects(clickHouseClient(config).query('SELECT no_such_column FROM system.one'), /no_such_column/);
});

test('with external services configured, up starts nothing but still creates topics and tables', async (t) => {
  const suffix = uniqueSuffix();
  const external = loadConfig({
    ...process.env,
    TRAJFLOW_KAFKA_BROKERS: config.kafka.brokers.join(','),
    TRAJFLOW_CLICKHOUSE_URL: config.clickhouse.url,
    TRAJFLOW_TOPIC_PREFIX: `infratest-${suffix}`,
    TRAJFLOW_CLICKHOUSE_DB: `trajflow_test_${suffix}`,
  });
  t.after(async () => {
    await clickHouseClient(config, null).exec(`DROP DATABASE IF EXISTS ${external.clickhouse.database}`);
    const admin = createKafka(config).admin();
    await admin.connect();
    const ours = (await admin.listTopics()).filter((name) => name.startsWith(`${external.topicPrefix}.`));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 });
    await admin.disconnect();
  });
  const report = await ensureUp(external);
  assert.equal(report.kafka.managed, false);
  assert.equal(report.kafka.pid, null);
  assert.equal(report.clickhouse.managed, false);
  assert.equal(report.clickhouse.pid, null);
  assert.equal(report.topics.created.length, topicSpecs.length);
  assert.deepEqual(
    report.migrations.versions,
    listMigrations().map((m) => m.version),
  );
  assert.equal(await stopKafka(external), false, 'never stops a broker it does not own');
  assert.equal(await stopClickHouse(external), false);
  assert.equal((await kafkaStatus(config)).running, true);
});

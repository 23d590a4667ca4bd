// loadConfig's checks: every setting is checked before the brokers and the credentials are read, so the
// mistake reported first does not depend on which others are there too; and what a valid environment gives.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../core/config.js';

function withHome(run: (home: string) => void): void {
  const home = mkdtempSync(join(tmpdir(), 'trajflow-config-'));
  try {
    run(home);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

test('an external Kafka and ClickHouse: brokers listed, the URL without its trailing slash, neither managed', () => {
  withHome((home) => {
    const config = loadConfig({
      TRAJFLOW_HOME: home,
      TRAJFLOW_KAFKA_BROKERS: ' 10.0.0.1:9092, 10.0.0.2:9092 ',
      TRAJFLOW_CLICKHOUSE_URL: 'http://10.0.0.3:8123/',
      TRAJFLOW_CLICKHOUSE_DB: 'runs',
    });
    assert.deepEqual(config.kafka.brokers, ['10.0.0.1:9092', '10.0.0.2:9092']);
    assert.equal(config.kafka.managed, false);
    assert.equal(config.kafka.nodes, 1);
    assert.equal(config.clickhouse.url, 'http://10.0.0.3:8123');
    assert.equal(config.clickhouse.managed, false);
    assert.equal(config.clickhouse.database, 'runs');
    assert.equal(config.logDir, join(home, 'logs'));
  });
});

test('managed services: loopback brokers on the Kafka port, ClickHouse on its HTTP port', () => {
  withHome((home) => {
    const config = loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_PORT: '41092', TRAJFLOW_KAFKA_CONTROLLER_PORT: '41093', TRAJFLOW_CLICKHOUSE_HTTP_PORT: '48123' });
    assert.deepEqual(config.kafka.brokers, ['127.0.0.1:41092']);
    assert.equal(config.kafka.managed, true);
    assert.equal(config.clickhouse.url, 'http://127.0.0.1:48123');
    assert.equal(config.clickhouse.managed, true);
  });
});

test('the settings are checked in order, the broker list last: a bad database is reported before bad brokers', () => {
  withHome((home) => {
    const env = { TRAJFLOW_HOME: home, TRAJFLOW_KAFKA_BROKERS: 'not a broker', TRAJFLOW_CLICKHOUSE_DB: 'no-dashes' };
    assert.throws(() => loadConfig(env), /TRAJFLOW_CLICKHOUSE_DB='no-dashes' must be a plain identifier/);
    assert.throws(() => loadConfig({ ...env, TRAJFLOW_CLICKHOUSE_DB: 'ok' }), /TRAJFLOW_KAFKA_BROKERS has 'not a broker'/);
    assert.throws(() => loadConfig({ ...env, TRAJFLOW_KAFKA_PORT: '41000', TRAJFLOW_KAFKA_CONTROLLER_PORT: '41000' }), /both 41000: the broker needs two different ports/);
    assert.throws(() => loadConfig({ ...env, TRAJFLOW_TOPIC_PREFIX: 'a..b' }), /TRAJFLOW_TOPIC_PREFIX='a\.\.b' is not a valid topic prefix/);
  });
});

test('a ClickHouse URL holding credentials or a path is refused', () => {
  withHome((home) => {
    assert.throws(() => loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_CLICKHOUSE_URL: 'http://user:secret@10.0.0.3:8123' }), /holds a user or password/);
    assert.throws(() => loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_CLICKHOUSE_URL: 'http://10.0.0.3:8123/db' }), /must be an HTTP endpoint/);
    assert.throws(() => loadConfig({ TRAJFLOW_HOME: home, TRAJFLOW_CLICKHOUSE_HTTP_PORT: '41000', TRAJFLOW_CLICKHOUSE_TCP_PORT: '41000' }), /ClickHouse needs two different ports/);
  });
});

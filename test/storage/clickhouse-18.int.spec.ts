// Integration (the local ClickHouse server, 18.16, in a database of its own dropped afterwards): the migrations,
// every read-model query and every SQL cookbook block, with the same assertions as against a current release
// (clickhouse-26.int.spec.ts). The runner must take ALTER TABLE … ADD COLUMN in 18.16's form here, with a column
// already there taken as added.
import { randomBytes } from 'node:crypto';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { clickHouseAuthHeaders, clickHouseClient } from '../../infra/clickhouse/http.js';
import { clickHouseSuite, type ClickHouseUnderTest } from './clickhouse-suite.js';

const base = loadConfig();
const database = `test_clickhouse_18_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
const config: TrajflowConfig = { ...base, clickhouse: { ...base.clickhouse, database } };

/** The server's database behind the suite's surface; inserts post the sink's JSONEachRow bodies byte for byte. */
function serverDatabase(): ClickHouseUnderTest {
  const client = clickHouseClient(config);
  return {
    exec: (sql) => client.exec(sql),
    queryJson: <T>(sql: string) => client.queryJson<T>(sql),
    insertJsonEachRow: async (table, body) => {
      const search = new URLSearchParams({ database, query: `INSERT INTO ${table} FORMAT JSONEachRow` });
      const response = await fetch(`${config.clickhouse.url.replace(/\/$/, '')}/?${search}`, {
        method: 'POST',
        body: typeof body === 'string' ? body : new Uint8Array(body),
        headers: clickHouseAuthHeaders(config.clickhouse.credentials),
      });
      if (!response.ok) throw new Error(`INSERT INTO ${table}: ${(await response.text()).trim()}`);
    },
  };
}

clickHouseSuite({
  open: async () => {
    await clickHouseClient(config, null).exec(`CREATE DATABASE IF NOT EXISTS ${database}`);
    return { target: serverDatabase(), close: () => clickHouseClient(base, null).exec(`DROP DATABASE IF EXISTS ${database}`) };
  },
  version: /^18\.16\./,
  addColumnForm: /ADD COLUMN, a column already there taken as added \(ClickHouse before 19\.1\) for 2 statements$/,
});

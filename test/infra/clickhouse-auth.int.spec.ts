// Integration (the shared ClickHouse that `trajflow up` runs): a user with a password. ClickHouse 18.16 has no
// CREATE USER, so the test adds its user as a users.d/ file beside the server's users.xml, which the server
// merges in and reloads on its own (it checks every few seconds), and removes it after. The right password runs
// queries and the sink's inserts; a wrong one is a ConfigError naming TRAJFLOW_CLICKHOUSE_PASSWORD, and
// `trajflow status` exits 2 with that name and without the password.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { inspect } from 'node:util';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { clickHousePaths } from '../../infra/clickhouse/server.js';
import { Inserter } from '../../storage/sink/inserter.js';
import type { TableName } from '../../storage/sink/rows.js';
import { waitFor } from '../helpers/kafka.js';
import { trajflowStatus } from '../helpers/trajflow-status.js';

const shared = loadConfig();
const user = `test_${randomBytes(4).toString('hex')}`;
const password = `pw-${randomBytes(6).toString('hex')}`;
const wrongPassword = `wrong-${randomBytes(6).toString('hex')}`;
const table = `auth_${user}`;
const userFile = join(dirname(clickHousePaths(shared).usersFile), 'users.d', `${user}.xml`);
const env = (pw: string) => ({ TRAJFLOW_CLICKHOUSE_URL: shared.clickhouse.url, TRAJFLOW_CLICKHOUSE_USER: user, TRAJFLOW_CLICKHOUSE_PASSWORD: pw });
const as = (pw: string): TrajflowConfig => loadConfig({ ...process.env, ...env(pw) });

async function logsIn(config: TrajflowConfig): Promise<boolean> {
  try {
    await clickHouseClient(config).query('SELECT 1');
    return true;
  } catch (error) {
    if (error instanceof ConfigError) return false;
    throw error;
  }
}

before(async () => {
  assert.ok(shared.clickhouse.managed, 'this test adds its user to the ClickHouse trajflow runs (unset TRAJFLOW_CLICKHOUSE_URL)');
  mkdirSync(dirname(userFile), { recursive: true });
  writeFileSync(
    userFile,
    `<?xml version="1.0"?>
<yandex><users><${user}>
  <password_sha256_hex>${createHash('sha256').update(password).digest('hex')}</password_sha256_hex>
  <networks><ip>127.0.0.1</ip><ip>::1</ip></networks>
  <profile>default</profile><quota>default</quota>
  <allow_databases><database>${shared.clickhouse.database}</database></allow_databases>
</${user}></users></yandex>
`,
  );
  await waitFor(() => logsIn(as(password)), `ClickHouse to load user ${user}`, 60_000, 500);
  await clickHouseClient(shared).exec(`CREATE TABLE ${table} (x UInt32) ENGINE = Memory`);
});
after(async () => {
  await clickHouseClient(shared).exec(`DROP TABLE IF EXISTS ${table}`);
  rmSync(userFile, { force: true });
  // The user is gone once the server reloads: its right password no longer logs in.
  await waitFor(async () => !(await logsIn(as(password))), `ClickHouse to drop user ${user}`, 60_000, 500);
});

test('the right password runs queries and the sink inserts; a wrong one is a ConfigError naming the setting', async () => {
  const right = as(password);
  const client = clickHouseClient(right);
  const inserter = new Inserter(right.clickhouse.url, right.clickhouse.database, 30_000, new AbortController().signal, undefined, right.clickhouse.credentials);
  await inserter.insert(table as TableName, { query: `INSERT INTO ${table} FORMAT JSONEachRow`, data: '{"x":7}\n{"x":8}\n' });
  inserter.close();
  assert.deepEqual(await client.queryJson(`SELECT sum(x) AS total FROM ${table}`), [{ total: 15 }]);
  // As whom (18.16 has no currentUser()): the running query as the server lists it.
  assert.deepEqual(await client.queryJson(`SELECT user FROM system.processes WHERE query LIKE '%${table}-whoami%'`), [{ user }]);

  const wrong = as(wrongPassword);
  for (const attempt of [
    () => clickHouseClient(wrong).query('SELECT 1'),
    () =>
      new Inserter(wrong.clickhouse.url, wrong.clickhouse.database, 30_000, new AbortController().signal, undefined, wrong.clickhouse.credentials).insert(table as TableName, {
        query: `INSERT INTO ${table} FORMAT JSONEachRow`,
        data: '{"x":1}\n',
      }),
  ]) {
    await assert.rejects(attempt, (error: unknown) => {
      assert.ok(error instanceof ConfigError, inspect(error));
      assert.match(error.message, new RegExp(`refused the login of user '${user}'.*check TRAJFLOW_CLICKHOUSE_USER and TRAJFLOW_CLICKHOUSE_PASSWORD\\.$`));
      assert.ok(!error.message.includes(wrongPassword));
      return true;
    });
  }
  assert.deepEqual(await client.queryJson(`SELECT count() AS n FROM ${table}`), [{ n: 2 }], 'the refused insert wrote nothing');
});

test('trajflow status: the right password answers (exit 0); a wrong one exits 2 naming TRAJFLOW_CLICKHOUSE_PASSWORD, never printing it', async () => {
  const right = await trajflowStatus(env(password));
  assert.equal(right.code, 0, right.output);
  assert.match(right.output, /clickhouse\s+up .* v\d+\./);
  assert.ok(!right.output.includes(password));

  const wrong = await trajflowStatus(env(wrongPassword));
  assert.equal(wrong.code, 2, wrong.output);
  assert.match(wrong.output, new RegExp(`trajflow status: ClickHouse at .* refused the login of user '${user}'.*TRAJFLOW_CLICKHOUSE_PASSWORD`));
  assert.ok(!wrong.output.includes(wrongPassword));
});

// ClickHouse start/stop rules on a private home and ports, so the shared server is never touched:
// a cold start, reuse, a stale pid file, a port held by someone else, stop.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { after, test } from 'node:test';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { clickHousePaths, clickHouseStatus, startClickHouse, stopClickHouse } from '../../infra/clickhouse/server.js';
import { isAlive, readPidFile, writePidFile } from '../../infra/process.js';
import { deadPid, privateConfig } from './helpers.js';
import { waitFor } from '../helpers/kafka.js';

const config = await privateConfig();
const paths = clickHousePaths(config);

after(async () => {
  await stopClickHouse(config);
  rmSync(config.home, { recursive: true, force: true });
});

test('a cold start answers /ping and writes its pid file and logs', async () => {
  const started = await startClickHouse(config);
  assert.equal(started.reused, false);
  assert.equal(started.running, true);
  assert.equal(readPidFile(paths.pidFile), started.pid);
  assert.equal((await clickHouseClient(config, null).query('SELECT 1')).trim(), '1');
  const status = await clickHouseStatus(config);
  assert.equal(status.pid, started.pid);
});

test('starting again reuses the running server', async () => {
  const before = readPidFile(paths.pidFile);
  const again = await startClickHouse(config);
  assert.equal(again.reused, true);
  assert.equal(again.pid, before);
});

test('a pid file naming a dead process leads to a fresh start, and data survives it', async () => {
  const client = clickHouseClient(config, null);
  await client.exec('CREATE TABLE IF NOT EXISTS default.survives (x UInt8) ENGINE = MergeTree() ORDER BY x');
  await client.exec('INSERT INTO default.survives VALUES (7)');
  const old = readPidFile(paths.pidFile)!;
  process.kill(old, 'SIGKILL');
  while (isAlive(old)) await new Promise((r) => setTimeout(r, 50));
  writePidFile(paths.pidFile, deadPid());
  const restarted = await startClickHouse(config);
  assert.equal(restarted.reused, false);
  assert.notEqual(restarted.pid, old);
  assert.equal((await client.query('SELECT x FROM default.survives')).trim(), '7');
});

test('a server that is alive but does not answer is replaced', async () => {
  const old = readPidFile(paths.pidFile)!;
  process.kill(old, 'SIGSTOP'); // alive, but frozen: /ping times out
  // SIGSTOP reaches every thread asynchronously; until it has, a /ping may still be answered.
  await waitFor(() => stoppedState(old), 'the server to be stopped (state T)', 10000);
  const restarted = await startClickHouse(config);
  assert.equal(restarted.reused, false);
  assert.notEqual(restarted.pid, old);
  // The frozen server was killed; a many-threaded process can take a moment to be fully reaped.
  await waitFor(() => !isAlive(old), 'the frozen server to be gone', 15000);
});

test('a port held by another program is named in the error', async () => {
  await stopClickHouse(config);
  const squatter: Server = createServer();
  await new Promise<void>((resolve) => squatter.listen(config.clickhouse.httpPort, '127.0.0.1', resolve));
  try {
    await assert.rejects(
      startClickHouse(config),
      (e: Error) => e.message.includes(`port ${config.clickhouse.httpPort} is already in use`) && e.message.includes('TRAJFLOW_CLICKHOUSE_HTTP_PORT'),
    );
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});

test('stop stops it and status says so', async () => {
  await startClickHouse(config);
  assert.equal(await stopClickHouse(config), true);
  const status = await clickHouseStatus(config);
  assert.equal(status.running, false);
  assert.equal(status.pid, null);
  assert.equal(await stopClickHouse(config), false, 'stopping twice is fine');
});

/** True when /proc/<pid>/stat shows the process stopped ('T'). */
function stoppedState(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
}

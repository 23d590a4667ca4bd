// End to end: `trajflow train` as a user runs it (tiny settings): every part starts as its own process,
// the learner makes its updates, the dashboard answers while it runs, ClickHouse fills with the run's
// events, and the command exits 0 once the learner is done.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../core/config.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { freePort } from '../../infra/free-port.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';

const cli = fileURLToPath(new URL('../../bin/trajflow.mjs', import.meta.url));
const database = `test_train_${Date.now().toString(36)}`;

after(async () => {
  await clickHouseClient(loadConfig(), null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

test('trajflow train: a few updates end to end, dashboard answering, ClickHouse filling', { timeout: 420_000 }, async () => {
  const prefix = uniqueName('train');
  const runId = uniqueName('run').replace(/\./g, '-');
  const port = await freePort();
  let output = '';
  // The run's size comes from a config file (per-command sections), the rest from flags.
  const configFile = join(mkdtempSync(join(tmpdir(), 'train-e2e-')), 'trajflow.json');
  writeFileSync(configFile, JSON.stringify({ train: { updates: 2, groups: 2, groupSize: 4 }, learner: { minibatches: 1 } }));
  const child = spawn(process.execPath, [cli, 'train', '--run-id', runId, '--config', configFile, '--port', String(port)], {
    env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: prefix, TRAJFLOW_CLICKHOUSE_DB: database },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    let health: { status?: string } = {};
    await waitFor(
      async () => {
        try {
          health = (await (await fetch(`http://127.0.0.1:${port}/health`)).json()) as { status?: string };
          return health.status === 'ok' || health.status === 'degraded';
        } catch {
          return false;
        }
      },
      'the dashboard answers /health',
      180_000,
    );
    const code = await exited;
    assert.equal(code, 0, output.slice(-3000));
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
  assert.match(output, /dashboard on http:\/\/127\.0\.0\.1:/);
  assert.match(output, /learner: update 1 → v2/);
  assert.match(output, /train \S+ {2}\[#+\] {2}100% {2}2\/2 updates .*policy v2/, 'the progress line reaches the updates asked for');
  const ch = clickHouseClient({ ...loadConfig(), clickhouse: { ...loadConfig().clickhouse, database } });
  const count = async (table: string) => Number((await ch.queryJson<{ n: string }>(`SELECT count() AS n FROM ${table} FINAL WHERE run_id = '${runId}'`))[0]!.n);
  const steps = await count('steps');
  const learnerSteps = await count('learner_steps');
  const versions = await count('policy_versions');
  assert.ok(steps > 0, 'step events in ClickHouse');
  // The sink stops with the run, so the very last events may still be on Kafka: at least the first ones are stored.
  assert.ok(learnerSteps >= 1 && learnerSteps <= 2, `learner updates in ClickHouse: ${learnerSteps}`);
  assert.ok(versions >= 1 && versions <= 3, `policy versions in ClickHouse: ${versions}`);
  console.log(`trajflow train e2e: ${steps} step rows, ${learnerSteps} learner steps, ${versions} policy versions in ClickHouse`);
});

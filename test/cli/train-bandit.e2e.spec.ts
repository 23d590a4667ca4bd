// End to end, the real path learning: `trajflow train --env Bandit --updates 10` as a user runs it (every part its
// own process, through Kafka) picks the high-mean arm on held-out tasks — its evaluator's last held-out greedy
// success ≥ 0.9 (the random policy: ≈ 0.44) — with the actors one batch ahead (--max-staleness 1, the
// asynchronous mode; the default 0 is the in-process loop itself) and every update's staleness within that bound.
// Seed 2: its untrained policy's greedy arm is the low-mean one (held-out 0.00 at v0), so the figure is learned;
// on seed 1 the untrained policy already picks the high arm (1.00 at v0) and the test could not fail.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../core/config.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { freePort } from '../../infra/free-port.js';
import { uniqueName } from '../helpers/kafka.js';

const cli = fileURLToPath(new URL('../../bin/trajflow.mjs', import.meta.url));
const database = `test_bandit_${Date.now().toString(36)}`;

after(async () => {
  await clickHouseClient(loadConfig(), null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

test('trajflow train --env Bandit --updates 10 picks the high-mean arm on held-out tasks, staleness ≤ 1 on every update', { timeout: 600_000 }, async () => {
  const runId = uniqueName('bandit').replace(/\./g, '-');
  let output = '';
  const child = spawn(
    process.execPath,
    [
      cli,
      'train',
      '--env',
      'Bandit',
      '--updates',
      '10',
      '--seed',
      '2',
      '--max-staleness',
      '1',
      '--run-id',
      runId,
      '--eval-every',
      '5',
      '--eval-tasks',
      '32',
      '--port',
      String(await freePort()),
    ],
    {
      env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: uniqueName('bandit'), TRAJFLOW_CLICKHOUSE_DB: database },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
  assert.equal(code, 0, output.slice(-3000));
  const updates = [...output.matchAll(/learner: update (\d+) → v\d+ .* staleness [\d.]+ \(max (\d+)\)/g)];
  assert.equal(updates.length, 10, `ten updates logged:\n${output.slice(-3000)}`);
  for (const [line, , max] of updates) assert.ok(Number(max) <= 1, `staleness within the bound: ${line}`);
  const untrained = /evaluator: v0 held-out ([\d.]+)/.exec(output);
  assert.ok(untrained, `the evaluator's v0 line:\n${output.slice(-3000)}`);
  assert.ok(Number(untrained[1]) < 0.5, `the untrained policy's held-out success ${untrained[1]} is low, so what follows is learned`);
  const summary = /trajflow train: run \S+ — held-out success ([\d.]+) \(random policy ([\d.]+)\) at v10, (\d+) env steps/.exec(output);
  assert.ok(summary, `the closing summary line:\n${output.slice(-3000)}`);
  const [, heldOut, random, envSteps] = summary;
  assert.ok(Number(heldOut) >= 0.9, `held-out success ${heldOut} ≥ 0.9 (random ${random})`);
  assert.ok(Number(random) < 0.6, `the random policy's level ${random} is well below`);
  console.log(`train Bandit e2e: held-out ${untrained[1]} at v0 → ${heldOut} (random ${random}) after 10 updates, ${envSteps} env steps`);
});

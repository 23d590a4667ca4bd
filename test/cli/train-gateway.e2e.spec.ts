// End to end: `trajflow train --gateway PORT --actors off` — a run whose every step comes from an LLM agent calling
// the gateway (the example agent on the official `openai` client, examples/agents/openai-agent.ts), none from the
// built-in actors: the gateway part serves the run's own policy, the processors turn the agent's calls into samples,
// the learner makes its update on them and the command exits 0.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../core/config.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { freePort } from '../../infra/free-port.js';
import { runAgent } from '../../examples/agents/openai-agent.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';

const cli = fileURLToPath(new URL('../../bin/trajflow.mjs', import.meta.url));
const database = `test_train_gateway_${Date.now().toString(36)}`;

after(async () => {
  await clickHouseClient(loadConfig(), null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

test("trajflow train --gateway --actors off: an agent's calls through the gateway are the run's steps, and the learner trains on them", { timeout: 300_000 }, async () => {
  const runId = uniqueName('agentrun').replace(/\./g, '-');
  const [dashboard, gatewayPort] = [await freePort(), await freePort()];
  let output = '';
  const child = spawn(
    process.execPath,
    [
      cli,
      'train',
      '--run-id',
      runId,
      '--updates',
      '1',
      '--eval-every',
      '0',
      '--groups',
      '2',
      '--group-size',
      '4',
      '--port',
      String(dashboard),
      '--gateway',
      String(gatewayPort),
      '--actors',
      'off',
    ],
    { env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: uniqueName('traingw'), TRAJFLOW_CLICKHOUSE_DB: database }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const baseURL = `http://127.0.0.1:${gatewayPort}/v1`;
  try {
    await waitFor(
      async () => {
        try {
          return (await fetch(`http://127.0.0.1:${gatewayPort}/health`)).ok;
        } catch {
          return false;
        }
      },
      `the gateway answers /health:\n${output.slice(-2000)}`,
      180_000,
    );
    // Two groups of four episodes: the processors' batch of the run (--groups 2), the learner's one update.
    const success = await runAgent({ baseURL, runId, groups: 2, groupSize: 4 });
    assert.ok(success >= 0 && success <= 1);
    const code = await exited;
    assert.equal(code, 0, output.slice(-3000));
  } finally {
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
  assert.match(output, /OpenAI-compatible gateway on http:\/\/127\.0\.0\.1:\d+\/v1/);
  assert.match(output, /learner: update 0 → v1/);
  assert.doesNotMatch(output, /\[actors\]/, 'no built-in actors ran');
  const ch = clickHouseClient({ ...loadConfig(), clickhouse: { ...loadConfig().clickhouse, database } });
  const rows = await ch.queryJson<{ n: string; envVersions: string[] }>(
    `SELECT count() AS n, groupUniqArray(env_version) AS envVersions FROM steps FINAL WHERE run_id = '${runId}'`,
  );
  console.log(`trajflow train --gateway e2e: ${rows[0]!.n} step rows of env versions ${rows[0]!.envVersions.join(', ')}`);
  // The sink stops with the run, so the last events may still be on Kafka: some of the run's steps are stored, all from the gateway.
  assert.ok(Number(rows[0]!.n) >= 1, 'the agent’s turns are stored');
  assert.deepEqual(rows[0]!.envVersions, ['openai-gateway-v1'], 'every step of the run came through the gateway');
});

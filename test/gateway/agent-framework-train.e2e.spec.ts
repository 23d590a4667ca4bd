// End to end, a framework's agent training trajflow's policy: `trajflow train --env Bandit --gateway PORT --actors
// off` as a user runs it (every part its own process, through Kafka), every step of the run a call of the Vercel AI
// SDK example (examples/agents/vercel-ai-sdk.ts, the Responses API) through the run's gateway. The agent plays one
// batch of groups per policy version — it waits for the learner's update before the next — and the evaluator's
// held-out greedy success at the last version rises above the untrained policy's. Bandit because it learns in a few
// updates (one call per episode); seed 2 because its untrained policy picks the low-mean arm, so the rise is learned.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../core/config.js';
import { taskSeedBase } from '../../envs/seeds.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import { freePort } from '../../infra/free-port.js';
import { runVercelAiAgent } from '../../examples/agents/vercel-ai-sdk.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';

const cli = fileURLToPath(new URL('../../bin/trajflow.mjs', import.meta.url));
const database = `test_agent_framework_train_${Date.now().toString(36)}`;
const UPDATES = 5;
const GROUPS = 8;
const GROUP_SIZE = 8;
const SEED = 2;

after(async () => {
  await clickHouseClient(loadConfig(), null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

/** Starts `trajflow train` with the gateway and no actors; `output` gathers its lines. */
function startTrain(runId: string, dashboard: number, gatewayPort: number) {
  const flags = { '--env': 'Bandit', '--seed': SEED, '--updates': UPDATES, '--groups': GROUPS, '--group-size': GROUP_SIZE, '--max-staleness': 1 };
  const evaluation = { '--eval-every': UPDATES, '--eval-tasks': 32, '--run-id': runId, '--port': dashboard, '--gateway': gatewayPort, '--actors': 'off' };
  const args = Object.entries({ ...flags, ...evaluation }).flatMap(([flag, value]) => [flag, String(value)]);
  const child = spawn(process.execPath, [cli, 'train', ...args], {
    env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: uniqueName('agent-train'), TRAJFLOW_CLICKHOUSE_DB: database },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const run = { child, output: '', exited: new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code))) };
  child.stdout.on('data', (d: Buffer) => (run.output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (run.output += d.toString()));
  return run;
}

test('a Vercel AI SDK agent trains the policy through trajflow train --gateway --actors off: held-out success rises above the untrained policy’s', {
  timeout: 480_000,
}, async () => {
  const runId = uniqueName('aisdk-train').replace(/\./g, '-');
  const gatewayPort = await freePort();
  const train = startTrain(runId, await freePort(), gatewayPort);
  const updates = () => train.output.match(/learner: update \d+ → v\d+/g)?.length ?? 0;
  const rates: number[] = [];
  try {
    await waitFor(
      async () => (await fetch(`http://127.0.0.1:${gatewayPort}/health`).catch(() => null))?.ok === true,
      `the gateway answers /health:\n${train.output.slice(-2000)}`,
      180_000,
      250,
    );
    // One batch (GROUPS tasks of GROUP_SIZE episodes) per version: the next only once the learner has updated.
    for (let round = 0; updates() < UPDATES; round++) {
      await waitFor(() => updates() >= round || train.child.exitCode !== null, `learner update ${round}:\n${train.output.slice(-2000)}`, 180_000, 100);
      if (updates() >= UPDATES || train.child.exitCode !== null) break;
      const firstSeed = taskSeedBase(SEED) + round * GROUPS;
      const summary = await runVercelAiAgent({ baseURL: `http://127.0.0.1:${gatewayPort}/v1`, runId, groups: GROUPS, groupSize: GROUP_SIZE, envName: 'Bandit', firstSeed });
      rates.push(summary.successRate);
    }
    assert.equal(await train.exited, 0, train.output.slice(-3000));
  } finally {
    if (train.child.exitCode === null) train.child.kill('SIGTERM');
    await train.exited;
  }
  assert.doesNotMatch(train.output, /\[actors\]/, 'no built-in actors ran: every step was an agent call');
  const untrained = /evaluator: v0 held-out ([\d.]+)/.exec(train.output);
  assert.ok(untrained, `the evaluator's v0 line:\n${train.output.slice(-3000)}`);
  assert.ok(Number(untrained[1]) < 0.5, `the untrained policy's held-out success ${untrained[1]} is low, so a rise is learned`);
  const summary = new RegExp(`held-out success ([\\d.]+) \\(random policy ([\\d.]+)\\) at v${UPDATES}, (\\d+) env steps`).exec(train.output);
  assert.ok(summary, `the closing summary line:\n${train.output.slice(-3000)}`);
  const [, trained, random, envSteps] = summary;
  assert.ok(Number(trained) > Number(untrained[1]), `held-out success ${trained} at v${UPDATES} above the untrained policy's ${untrained[1]}`);
  const dropped = train.output.match(/learner: dropped \d+ stale samples/g)?.length ?? 0;
  console.log(
    `agent-framework train e2e: held-out ${untrained[1]} at v0 → ${trained} at v${UPDATES} (random ${random}), ${envSteps} env steps, ` +
      `${rates.length} agent batches (success on training tasks ${rates.map((r) => r.toFixed(2)).join(', ')}), ${dropped} stale drops`,
  );
});

// Integration (real Kafka): the two example agents of examples/agents/ — the TypeScript one on the official
// `openai` client and the plain-HTTP Python one — play through a gateway in front of trajflow's own policy, post
// their rewards, and every call and every end is on the steps topic.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../streams/index.js';
import { selectBackend } from '../../learner/backend.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { ownPolicyUpstream } from '../../gateway/own-policy.js';
import { startGateway } from '../../gateway/server.js';
import { runAgent } from '../../examples/agents/openai-agent.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';

const PYTHON_AGENT = fileURLToPath(new URL('../../examples/agents/frozenlake_agent.py', import.meta.url));
let backbone: Backbone;
before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-gateway-examples' });
});
after(async () => {
  await backbone.close();
});

test('the TypeScript and the Python example agents play through the gateway; every call and every end is recorded', { timeout: 180_000 }, async () => {
  const config: TrajflowConfig = { ...loadConfig(), topicPrefix: uniqueName('gateway-examples') };
  const admin = backbone.kafka.admin();
  await admin.connect();
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'env.steps' || s.name === 'policy.versions'),
  );
  const scoped = { ...backbone, config };
  const runId = 'examples';
  const own = await ownPolicyUpstream(scoped, {
    runId,
    envName: 'FrozenLake',
    model: 'trajflow-policy',
    temperature: 1,
    modelSettings: { width: 32, layers: 1, heads: 2, contextLength: 128 },
  });
  const gateway = await startGateway({
    config: loadGatewayConfig({ port: 0, runId, envName: 'FrozenLake' }, {}),
    upstream: own.upstream,
    steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')),
    log: () => undefined,
  });
  try {
    const rate = await runAgent({ baseURL: `${gateway.url}/v1`, runId: 'ts-agent', groups: 1, groupSize: 3 });
    assert.ok(rate >= 0 && rate <= 1);
    const { stdout } = await promisify(execFile)('python3', [PYTHON_AGENT, `${gateway.url}/v1`, '2'], { timeout: 120_000 });
    const finished = JSON.parse(stdout) as Array<{ object: string; steps: number }>;
    assert.deepEqual(
      finished.map((f) => f.object),
      ['episode.finished', 'episode.finished'],
    );
    const health = (await (await fetch(`${gateway.url}/health`)).json()) as { answeredCalls: number; recordedSteps: number; episodesFinished: number };
    assert.equal(health.episodesFinished, 5);
    let steps = await readEvents(backbone, config, 'env.steps', 'step');
    await waitFor(async () => (steps = await readEvents(backbone, config, 'env.steps', 'step')).length >= health.recordedSteps, 'every step', 30_000, 200);
    assert.equal(steps.length, health.answeredCalls + 5);
    assert.equal(steps.filter((s) => s.terminated || s.truncated).length, 5, 'each episode ends once');
    assert.deepEqual([...new Set(steps.map((s) => s.runId))].sort(), ['py-agent', 'ts-agent']);
    assert.ok(steps.filter((s) => s.actionTokenIds.length > 0).every((s) => s.observationTokenIds !== null && s.actionLogProbs.every((lp) => lp <= 0)));
  } finally {
    await gateway.close();
    await own.close();
    await admin.deleteTopics({ topics: (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`)), timeout: 20_000 }).catch(() => undefined);
    await admin.disconnect();
  }
});

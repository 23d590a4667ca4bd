// Integration (real Kafka): the gateway in front of a second, independent OpenAI-compatible server process
// (fixtures/vllm-server-entry.mjs) answering in vLLM's response shape — https://docs.vllm.ai/en/v0.12.0/api/vllm/entrypoints/openai/protocol/
// (`return_tokens_as_token_ids`: logprobs tokens "token_id:<id>"; `return_token_ids`: `token_ids` and
// `prompt_token_ids`). The steps on <prefix>.env.steps must hold exactly the ids and log-probs the upstream
// sampled, checked against the upstream's own record; an upstream that gives no token ids gets the
// documented 502 and nothing is recorded. Each test has its own topic prefix; waits poll.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../streams/index.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { OpenAIUpstream } from '../../gateway/openai-upstream.js';
import { startGateway, type GatewayHandle } from '../../gateway/server.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';
import { startVllmFixture } from './fixtures/vllm-fixture.js';

const base = loadConfig();
let backbone: Backbone;
let admin: Admin;
const prefixes: string[] = [];
const closers: Array<() => Promise<unknown> | undefined> = [];

before(async () => {
  backbone = await connectBackbone(base, { clientId: 'test-gateway-upstream' });
  admin = backbone.kafka.admin();
  await admin.connect();
});

after(async () => {
  for (const close of closers.reverse()) await Promise.resolve(close()).catch(() => undefined);
  const ours = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(`${p}.`)));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
  await admin.disconnect();
  await backbone.close();
});

const startFixture = (...flags: string[]) => startVllmFixture(closers, ...flags);

async function startOn(upstreamUrl: string): Promise<{ gateway: GatewayHandle; config: TrajflowConfig; runId: string }> {
  const config: TrajflowConfig = { ...base, topicPrefix: uniqueName('gateway') };
  prefixes.push(config.topicPrefix);
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'env.steps'),
  );
  const runId = `run-${Date.now().toString(36)}`;
  const gatewayConfig = loadGatewayConfig({ port: 0, upstream: upstreamUrl, models: ['fixture-model'], runId, envName: 'ChatAgent' }, {});
  const gateway = await startGateway({
    config: gatewayConfig,
    upstream: new OpenAIUpstream({ baseUrl: upstreamUrl, models: gatewayConfig.models, timeoutMs: 10_000, policyVersion: 7 }),
    steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')),
    log: () => undefined,
  });
  closers.push(() => gateway.close());
  return { gateway, config, runId };
}

interface RecordEntry {
  promptIds: number[];
  ids: number[];
  logprobs: number[];
}

const chat = (url: string, messages: unknown[], headers: Record<string, string>, extra: Record<string, unknown> = {}) =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'fixture-model', messages, max_tokens: 4, logprobs: true, ...extra }),
  });

test("a vLLM-shaped upstream: every turn's step holds exactly the ids and log-probs the upstream sampled; the second turn records only its new prompt ids", async () => {
  const upstreamUrl = await startFixture();
  const { gateway, config, runId } = await startOn(upstreamUrl);
  const headers = { 'x-trajflow-episode': 'agent-ep-1', 'x-trajflow-group': 'task-1' };
  const first = (await (await chat(gateway.url, [{ role: 'user', content: 'hi' }], headers)).json()) as { choices: Array<{ message: { content: string } }> };
  const reply = first.choices[0]!.message.content;
  const second = await chat(
    gateway.url,
    [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: reply },
      { role: 'user', content: 'more' },
    ],
    headers,
    { stream: true },
  );
  assert.equal(second.status, 200);
  assert.ok((await second.text()).trimEnd().endsWith('data: [DONE]'));
  const text = await fetch(`${gateway.url}/v1/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-trajflow-episode': 'text-ep' },
    body: JSON.stringify({ model: 'fixture-model', prompt: 'Once', max_tokens: 3 }),
  });
  assert.equal(text.status, 200);
  const finished = await fetch(`${gateway.url}/v1/episodes/agent-ep-1/finish`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ reward: 1, success: true }),
  });
  assert.equal(finished.status, 200);

  const record = (await (await fetch(upstreamUrl.replace(/\/v1$/, '/record'))).json()) as RecordEntry[];
  assert.equal(record.length, 3);
  let steps = await readEvents(backbone, config, 'env.steps', 'step');
  await waitFor(async () => (steps = await readEvents(backbone, config, 'env.steps', 'step')).length >= 4, 'four steps', 20_000, 200);
  const turns = steps.filter((s) => s.episodeId === 'agent-ep-1').sort((a, b) => a.stepIndex - b.stepIndex);
  assert.deepEqual(
    turns.map((s) => [s.runId, s.groupId, s.stepIndex, s.terminated, s.policyVersion]),
    [
      [runId, 'task-1', 0, false, 7],
      [runId, 'task-1', 1, false, 7],
      [runId, 'task-1', 2, true, 7],
    ],
  );
  const textStep = steps.find((s) => s.episodeId === 'text-ep')!;
  for (const [step, sampled] of [
    [turns[0]!, record[0]!],
    [turns[1]!, record[1]!],
    [textStep, record[2]!],
  ] as const) {
    assert.deepEqual(step.actionTokenIds, sampled.ids);
    assert.deepEqual(step.actionLogProbs, sampled.logprobs, 'float32 log-probs arrive bit for bit');
    assert.equal(step.action, String.fromCharCode(...sampled.ids));
  }
  assert.deepEqual(turns[0]!.observationTokenIds, record[0]!.promptIds);
  const context = [...record[0]!.promptIds, ...record[0]!.ids];
  assert.deepEqual(turns[1]!.observationTokenIds, record[1]!.promptIds.slice(context.length), 'only what the second prompt adds');
  assert.deepEqual(record[1]!.promptIds.slice(0, context.length), context);
  assert.equal(turns[1]!.observation, 'user: more');
  assert.deepEqual([turns[2]!.reward, turns[2]!.metrics.success], [1, 1]);
});

test('an older vLLM that gives only "token_id:<id>" tokens (no token_ids) is recorded from them', async () => {
  const upstreamUrl = await startFixture('--token-strings-only');
  const { gateway, config } = await startOn(upstreamUrl);
  assert.equal((await chat(gateway.url, [{ role: 'user', content: 'x' }], { 'x-trajflow-episode': 'old' })).status, 200);
  const [sampled] = (await (await fetch(upstreamUrl.replace(/\/v1$/, '/record'))).json()) as RecordEntry[];
  let steps = await readEvents(backbone, config, 'env.steps', 'step');
  await waitFor(async () => (steps = await readEvents(backbone, config, 'env.steps', 'step')).length >= 1, 'the step', 20_000, 200);
  assert.deepEqual([steps[0]!.actionTokenIds, steps[0]!.actionLogProbs, steps[0]!.observationTokenIds], [sampled!.ids, sampled!.logprobs, null]);
});

test('an upstream that gives no token ids: the documented 502 naming the field, and nothing recorded', async () => {
  const upstreamUrl = await startFixture('--no-token-ids');
  const { gateway, config } = await startOn(upstreamUrl);
  const response = await chat(gateway.url, [{ role: 'user', content: 'x' }], { 'x-trajflow-episode': 'none' });
  assert.equal(response.status, 502);
  const { error } = (await response.json()) as { error: { type: string; code: string; message: string } };
  assert.deepEqual([error.type, error.code], ['upstream_error', 'upstream_token_ids_missing']);
  assert.match(error.message, /choices\[0\]\.token_ids is missing/);
  // The upstream did sample (its record has the call); the gateway recorded nothing of it.
  assert.equal(((await (await fetch(upstreamUrl.replace(/\/v1$/, '/record'))).json()) as RecordEntry[]).length, 1);
  const offsets = await admin.fetchTopicOffsets(topicName(config, 'env.steps'));
  assert.equal(
    offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0),
    0,
  );
  const health = (await (await fetch(`${gateway.url}/health`)).json()) as { answeredCalls: number; recordedSteps: number; upstreamFailures: number };
  assert.deepEqual([health.answeredCalls, health.recordedSteps, health.upstreamFailures], [0, 0, 1]);
});

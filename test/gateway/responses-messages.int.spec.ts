// Integration (real Kafka): POST /v1/responses (OpenAI's Responses API) and POST /v1/messages (Anthropic's
// Messages API) through the gateway, in front of the vLLM-shaped fixture server (fixtures/vllm-server-entry.mjs,
// which the gateway asks on /v1/chat/completions) and of trajflow's own policy, streamed and not, with tools,
// function-call outputs and tool results, and through the official clients (`openai`'s responses.create and
// responses.stream, @anthropic-ai/sdk's messages.create and messages.stream). Every answered call's step holds
// exactly the token ids and log-probs the upstream sampled (checked against the upstream's own record), and is
// on the steps topic when the answer's first byte arrives.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Admin } from 'kafkajs';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ResponseOutputMessage } from 'openai/resources/responses/responses';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { createEnv } from '../../envs/registry.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { selectBackend } from '../../learner/backend.js';
import type { StepEvent } from '../../schemas/index.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../streams/index.js';
import { loadGatewayConfig } from '../../gateway/config.js';
import { OpenAIUpstream } from '../../gateway/openai-upstream.js';
import { ownPolicyUpstream } from '../../gateway/own-policy.js';
import { startGateway, type GatewayHandle } from '../../gateway/server.js';
import type { Upstream } from '../../gateway/upstream.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';
import { fixtureRecord, startVllmFixture, type SampledEntry } from './fixtures/vllm-fixture.js';

const base = loadConfig();
let backbone: Backbone;
let admin: Admin;
const prefixes: string[] = [];
const closers: Array<() => Promise<unknown> | undefined> = [];

before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(base, { clientId: 'test-gateway-responses-messages' });
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

async function scopedConfig(name: string, topics: readonly string[]): Promise<TrajflowConfig> {
  const config: TrajflowConfig = { ...base, topicPrefix: uniqueName(name) };
  prefixes.push(config.topicPrefix);
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => topics.includes(s.name)),
  );
  return config;
}

async function gatewayOn(config: TrajflowConfig, upstream: Upstream, runId: string, envName: string): Promise<GatewayHandle> {
  const gateway = await startGateway({
    config: loadGatewayConfig({ port: 0, upstream: 'policy', models: upstream.models(), runId, envName }, {}),
    upstream,
    steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')),
    log: () => undefined,
  });
  closers.push(() => gateway.close());
  return gateway;
}

/** How many steps the topic holds right now. */
async function stepsOnTopic(config: TrajflowConfig): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topicName(config, 'env.steps'));
  return offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
}

/** POSTs a call and, as soon as the answer's status line arrives (before its body is read), counts the steps on the topic. */
async function call(url: string, path: string, body: unknown, headers: Record<string, string>, config: TrajflowConfig) {
  const response = await fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const stepsAtAnswer = await stepsOnTopic(config);
  assert.equal(response.status, 200, await response.clone().text());
  return { response, stepsAtAnswer };
}

/** The data of every event of an SSE body, with its name. */
async function eventsOf(response: Response): Promise<Array<{ type: string; [key: string]: ReturnType<typeof JSON.parse> }>> {
  const text = await response.text();
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [event, data] = block.split('\n');
      const parsed = JSON.parse(data!.slice('data: '.length));
      assert.equal(event, `event: ${parsed.type}`);
      return parsed;
    });
}

async function allSteps(config: TrajflowConfig, count: number): Promise<StepEvent[]> {
  let steps: StepEvent[] = [];
  await waitFor(async () => (steps = await readEvents(backbone, config, 'env.steps', 'step')).length >= count, `${count} steps`, 30_000, 200);
  return steps;
}

/** Each call's step (in call order: episode and step index) holds exactly what the fixture sampled for it, and only the prompt ids it added. */
function assertRecorded(steps: readonly StepEvent[], turns: ReadonlyArray<readonly [string, number]>, record: readonly SampledEntry[]): void {
  assert.equal(record.length, turns.length);
  const context = new Map<string, number[]>();
  turns.forEach(([episodeId, stepIndex], i) => {
    const step = steps.find((s) => s.episodeId === episodeId && s.stepIndex === stepIndex)!;
    const sampled = record[i]!;
    assert.ok(step, `the step of call ${i}`);
    assert.deepEqual(step.actionTokenIds, sampled.ids, `call ${i}: the upstream's token ids`);
    assert.deepEqual(step.actionLogProbs, sampled.logprobs, `call ${i}: the upstream's log-probs, bit for bit`);
    const before = context.get(episodeId) ?? [];
    assert.deepEqual(sampled.promptIds.slice(0, before.length), before, `call ${i}: the prompt extends the episode's context`);
    assert.deepEqual(step.observationTokenIds, sampled.promptIds.slice(before.length), `call ${i}: only the new prompt ids`);
    assert.equal(step.info.promptDrift, undefined);
    context.set(episodeId, [...sampled.promptIds, ...sampled.ids]);
  });
}

const letters = (entry: SampledEntry): string => String.fromCharCode(...entry.ids);
const tool = { type: 'function' as const, name: 'look', description: 'look around', parameters: { type: 'object', properties: { text: { type: 'string' } } } };

/** Three Responses turns of one episode: text (cut at 4 tokens), a forced function call streamed, then its output answered. */
async function responsesTurns(url: string, upstreamUrl: string, config: TrajflowConfig, counted: { n: number }): Promise<void> {
  const headers = { 'x-trajflow-episode': 'resp-ep', 'x-trajflow-group': 'resp-task' };
  const first = await call(
    url,
    '/v1/responses',
    { model: 'fixture-model', instructions: 'be brief', input: 'hi', max_output_tokens: 4, include: ['message.output_text.logprobs'] },
    headers,
    config,
  );
  assert.equal(first.stepsAtAnswer, ++counted.n, 'published before the answer');
  const body = (await first.response.json()) as ReturnType<typeof JSON.parse>;
  const [sampled] = await fixtureRecord(upstreamUrl);
  assert.deepEqual(
    [body.object, body.status, body.incomplete_details, body.output[0].content[0].text],
    ['response', 'incomplete', { reason: 'max_output_tokens' }, letters(sampled!)],
  );
  assert.deepEqual(
    body.output[0].content[0].logprobs.map((l: { logprob: number }) => l.logprob),
    sampled!.logprobs,
  );
  const history = [
    { role: 'user', content: 'hi' },
    { type: 'message', role: 'assistant', id: body.output[0].id, status: 'completed', content: body.output[0].content },
    { role: 'user', content: 'now call' },
  ];
  const second = await call(
    url,
    '/v1/responses',
    { model: 'fixture-model', instructions: 'be brief', input: history, tools: [tool], tool_choice: 'required', stream: true },
    headers,
    config,
  );
  assert.equal(second.stepsAtAnswer, ++counted.n, 'published before the first event');
  const events = await eventsOf(second.response);
  assert.deepEqual([events[0]!.type, events.at(-1)!.type], ['response.created', 'response.completed']);
  const item = events.find((e) => e.type === 'response.output_item.done')!.item;
  assert.deepEqual([item.type, item.name, JSON.parse(item.arguments).text], ['function_call', 'look', letters((await fixtureRecord(upstreamUrl))[1]!)]);
  const output = { type: 'function_call_output', call_id: item.call_id, output: 'a wall' };
  const third = await call(url, '/v1/responses', { model: 'fixture-model', instructions: 'be brief', input: [...history, item, output], max_output_tokens: 3 }, headers, config);
  assert.equal(third.stepsAtAnswer, ++counted.n);
  const sent = (await fixtureRecord(upstreamUrl))[2]!.messages!;
  assert.deepEqual(
    sent.slice(-2).map((m) => [m.role, m.content, (m.tool_calls as unknown[] | undefined)?.length, m.tool_call_id]),
    [
      ['assistant', null, 1, undefined],
      ['tool', 'a wall', undefined, item.call_id],
    ],
    'the function call and its output reached the upstream as chat completions messages',
  );
}

/** Three Messages turns of one episode: text ended by a stop sequence, a forced tool_use streamed, then its result answered streamed. */
async function messagesTurns(url: string, upstreamUrl: string, config: TrajflowConfig, counted: { n: number }): Promise<void> {
  const headers = { 'x-trajflow-episode': 'msg-ep', 'x-api-key': 'unused-on-loopback', 'anthropic-version': '2023-06-01' };
  const request = { model: 'fixture-model', max_tokens: 4, system: 'be brief' };
  const first = await call(url, '/v1/messages', { ...request, messages: [{ role: 'user', content: 'hi' }], stop_sequences: ['END'] }, headers, config);
  assert.equal(first.stepsAtAnswer, ++counted.n, 'published before the answer');
  const message = (await first.response.json()) as ReturnType<typeof JSON.parse>;
  const sampled = (await fixtureRecord(upstreamUrl)).at(-1)!;
  assert.deepEqual([message.type, message.stop_reason, message.stop_sequence, message.content[0].text], ['message', 'stop_sequence', 'END', letters(sampled)]);
  const history = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: message.content },
    { role: 'user', content: [{ type: 'text', text: 'now call' }] },
  ];
  const tools = [{ name: 'look', description: 'look around', input_schema: tool.parameters }];
  const second = await call(url, '/v1/messages', { ...request, messages: history, tools, tool_choice: { type: 'any' }, stream: true }, headers, config);
  assert.equal(second.stepsAtAnswer, ++counted.n, 'published before the first event');
  const events = await eventsOf(second.response);
  assert.deepEqual([events[0]!.type, events.at(-2)!.delta.stop_reason, events.at(-1)!.type], ['message_start', 'tool_use', 'message_stop']);
  const use = events.find((e) => e.type === 'content_block_start' && e.content_block.type === 'tool_use')!.content_block;
  const input = JSON.parse(events.find((e) => e.type === 'content_block_delta' && e.delta.type === 'input_json_delta')!.delta.partial_json);
  assert.equal(input.text, letters((await fixtureRecord(upstreamUrl)).at(-1)!));
  const replay = [...history, { role: 'assistant', content: [{ type: 'tool_use', id: use.id, name: use.name, input }] }];
  const result = { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'a wall' }] };
  const third = await call(url, '/v1/messages', { ...request, messages: [...replay, result], tools, stream: true }, headers, config);
  assert.equal(third.stepsAtAnswer, ++counted.n);
  assert.equal((await eventsOf(third.response)).at(-2)!.delta.stop_reason, 'max_tokens');
  const sent = (await fixtureRecord(upstreamUrl)).at(-1)!.messages!;
  assert.deepEqual(sent[0], { role: 'system', content: 'be brief' });
  assert.deepEqual(sent.at(-1), { role: 'tool', content: 'a wall', tool_call_id: use.id });
}

test('a vLLM-shaped upstream behind /v1/responses and /v1/messages: each call one step with the ids and log-probs it sampled, published before the answer', async () => {
  const upstreamUrl = await startVllmFixture(closers);
  const config = await scopedConfig('gateway-apis', ['env.steps']);
  const runId = `run-${Date.now().toString(36)}`;
  const upstream = new OpenAIUpstream({ baseUrl: upstreamUrl, models: ['fixture-model'], timeoutMs: 10_000, policyVersion: 3 });
  closers.push(() => upstream.close());
  const gateway = await gatewayOn(config, upstream, runId, 'ChatAgent');
  const counted = { n: 0 };
  await responsesTurns(gateway.url, upstreamUrl, config, counted);
  await messagesTurns(gateway.url, upstreamUrl, config, counted);
  const steps = await allSteps(config, 6);
  assert.equal(steps.length, 6);
  const turns: Array<readonly [string, number]> = ['resp-ep', 'msg-ep'].flatMap((episode) => [0, 1, 2].map((i) => [episode, i] as const));
  assertRecorded(steps, turns, await fixtureRecord(upstreamUrl));
  assert.ok(steps.every((s) => s.runId === runId && s.policyVersion === 3 && s.envName === 'ChatAgent'));
  assert.deepEqual([...new Set(steps.filter((s) => s.episodeId === 'resp-ep').map((s) => s.groupId))], ['resp-task']);
  assert.deepEqual(
    turns.map(([episodeId, stepIndex]) => steps.find((s) => s.episodeId === episodeId && s.stepIndex === stepIndex)!.info.finishReason),
    ['length', 'tool_calls', 'length', 'stop', 'tool_calls', 'length'],
  );
});

test('the official openai client: responses.create and responses.stream through the gateway, each call recorded as sampled', async () => {
  const upstreamUrl = await startVllmFixture(closers);
  const config = await scopedConfig('gateway-openai-responses', ['env.steps']);
  const upstream = new OpenAIUpstream({ baseUrl: upstreamUrl, models: ['fixture-model'], timeoutMs: 10_000 });
  closers.push(() => upstream.close());
  const gateway = await gatewayOn(config, upstream, 'sdk-run', 'ChatAgent');
  const client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'unused-on-loopback', maxRetries: 0 });
  const headers = { 'x-trajflow-episode': 'sdk-ep' };
  const created = await client.responses.create({ model: 'fixture-model', input: 'hi', include: ['message.output_text.logprobs'] }, { headers });
  const streamed = client.responses.stream(
    {
      model: 'fixture-model',
      input: [{ role: 'user', content: 'hi' }, ...created.output.filter((item): item is ResponseOutputMessage => item.type === 'message'), { role: 'user', content: 'look' }],
      tools: [{ ...tool, strict: null }],
    },
    { headers },
  );
  const deltas: string[] = [];
  streamed.on('response.output_text.delta', (event) => deltas.push(event.delta));
  const final = await streamed.finalResponse();
  const record = await fixtureRecord(upstreamUrl);
  assert.deepEqual([created.output_text, final.output_text, deltas.join('')], [letters(record[0]!), letters(record[1]!), letters(record[1]!)]);
  assert.equal(created.id.startsWith('resp_'), true);
  const steps = await allSteps(config, 2);
  assertRecorded(
    steps,
    [
      ['sdk-ep', 0],
      ['sdk-ep', 1],
    ],
    record,
  );
});

test('the official Anthropic client: messages.create and messages.stream through the gateway, each call recorded as sampled', async () => {
  const upstreamUrl = await startVllmFixture(closers);
  const config = await scopedConfig('gateway-anthropic-messages', ['env.steps']);
  const upstream = new OpenAIUpstream({ baseUrl: upstreamUrl, models: ['fixture-model'], timeoutMs: 10_000 });
  closers.push(() => upstream.close());
  const gateway = await gatewayOn(config, upstream, 'sdk-run', 'ChatAgent');
  const client = new Anthropic({ baseURL: gateway.url, apiKey: 'unused-on-loopback', maxRetries: 0, defaultHeaders: { 'x-trajflow-episode': 'claude-ep' } });
  const tools = [{ name: 'look', description: 'look around', input_schema: { type: 'object' as const, properties: { text: { type: 'string' } } } }];
  const created = await client.messages.create({
    model: 'fixture-model',
    max_tokens: 4,
    system: 'be brief',
    messages: [{ role: 'user', content: 'hi' }],
    tools,
    tool_choice: { type: 'any' },
  });
  const use = created.content[0]!;
  assert.equal(use.type, 'tool_use');
  const messages: Anthropic.MessageParam[] = [
    { role: 'user', content: 'hi' },
    { role: 'assistant', content: created.content },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.type === 'tool_use' ? use.id : '', content: 'a wall' }] },
  ];
  const final = await client.messages.stream({ model: 'fixture-model', max_tokens: 4, system: 'be brief', messages, tools }).finalMessage();
  const record = await fixtureRecord(upstreamUrl);
  assert.deepEqual(use.type === 'tool_use' && use.input, { text: letters(record[0]!) });
  assert.deepEqual([final.stop_reason, final.content], ['max_tokens', [{ type: 'text', text: letters(record[1]!), citations: null }]]);
  assertRecorded(
    await allSteps(config, 2),
    [
      ['claude-ep', 0],
      ['claude-ep', 1],
    ],
    record,
  );
});

/** The own policy, its answers kept as its own record of what it sampled. */
async function recordingOwnPolicy(config: TrajflowConfig, runId: string) {
  const own = await ownPolicyUpstream(
    { ...backbone, config },
    { runId, envName: 'FrozenLake', model: 'trajflow-policy', temperature: 1, modelSettings: { width: 32, layers: 1, heads: 2, contextLength: 128 } },
  );
  closers.push(() => own.close());
  const record: SampledEntry[] = [];
  const upstream: Upstream = {
    name: own.upstream.name,
    models: () => own.upstream.models(),
    complete: async (request) => {
      const answer = await own.upstream.complete(request);
      for (const choice of answer.choices)
        record.push({ promptIds: [...(answer.promptTokenIds ?? [])], ids: [...choice.tokenIds], logprobs: [...choice.logProbs], messages: null });
      return answer;
    },
  };
  return { upstream, record };
}

test('trajflow’s own policy behind /v1/responses and /v1/messages, streamed and not: each step holds what the policy sampled, published before the answer', {
  timeout: 180_000,
}, async () => {
  const config = await scopedConfig('gateway-apis-policy', ['env.steps', 'policy.versions']);
  const { upstream, record } = await recordingOwnPolicy(config, 'apis-policy');
  const gateway = await gatewayOn(config, upstream, 'apis-policy', 'FrozenLake');
  const env = createEnv('FrozenLake', { slippery: false });
  const observation = env.reset(7).observation;
  const calls: Array<[string, unknown, string]> = [
    ['/v1/responses', { model: 'trajflow-policy', instructions: env.systemPrompt(), input: observation, include: ['message.output_text.logprobs'] }, 'p-resp'],
    ['/v1/responses', { model: 'trajflow-policy', instructions: env.systemPrompt(), input: observation, stream: true }, 'p-resp-s'],
    ['/v1/messages', { model: 'trajflow-policy', max_tokens: 64, system: env.systemPrompt(), messages: [{ role: 'user', content: observation }] }, 'p-msg'],
    ['/v1/messages', { model: 'trajflow-policy', max_tokens: 64, system: env.systemPrompt(), messages: [{ role: 'user', content: observation }], stream: true }, 'p-msg-s'],
  ];
  const texts: string[] = [];
  for (const [i, [path, body, episode]] of calls.entries()) {
    const { response, stepsAtAnswer } = await call(gateway.url, path, body, { 'x-trajflow-episode': episode }, config);
    assert.equal(stepsAtAnswer, i + 1, `${path}: published before the answer`);
    if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
      const events = await eventsOf(response);
      texts.push(
        events
          .filter((e) => e.type === 'response.output_text.delta' || e.delta?.type === 'text_delta')
          .map((e) => e.delta.text ?? e.delta)
          .join(''),
      );
    } else {
      const answer = (await response.json()) as ReturnType<typeof JSON.parse>;
      texts.push(answer.object === 'response' ? answer.output[0].content[0].text : answer.content[0].text);
      if (answer.object === 'response')
        assert.deepEqual(
          answer.output[0].content[0].logprobs.map((l: { logprob: number }) => l.logprob),
          record[i]!.logprobs,
        );
    }
  }
  const steps = await allSteps(config, 4);
  for (const [i, [, , episode]] of calls.entries()) {
    const step = steps.find((s) => s.episodeId === episode)!;
    assert.deepEqual(
      [step.actionTokenIds, step.actionLogProbs, step.observationTokenIds],
      [record[i]!.ids, record[i]!.logprobs, record[i]!.promptIds],
      `${episode}: what the policy sampled`,
    );
    assert.equal(step.action, texts[i], `${episode}: the answer's text is the recorded action`);
    assert.equal(step.observation, observation);
  }
});

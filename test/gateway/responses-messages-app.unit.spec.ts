// Unit: POST /v1/responses and POST /v1/messages through the gateway's HTTP app over fakes (an upstream in
// memory, a publisher that records, or holds its acknowledgement): one step per answered call with the
// upstream's exact ids and log-probs, published before the answer is sent, streamed or not; errors in each
// API's own shape, the field named in the request's own words.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StepEvent } from '../../schemas/index.js';
import { waitFor } from '../helpers/kafka.js';
import { createGatewayApp, type GatewayDeps } from '../../gateway/app.js';
import { loadGatewayConfig, type GatewayConfigInput } from '../../gateway/config.js';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { invalidParam } from '../../gateway/openai-error.js';
import type { Upstream, UpstreamAnswer, UpstreamRequest } from '../../gateway/upstream.js';

const TOKEN = 'k'.repeat(40);
const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

/** One sampled reply per call, its ids and log-probs the upstream's own; `toolCalls` when the test asks for them. */
function fakeUpstream(toolCalls: unknown[] | null = null): Upstream & { calls: UpstreamRequest[] } {
  const calls: UpstreamRequest[] = [];
  return {
    name: 'fake',
    calls,
    models: () => ['m'],
    complete: async (request): Promise<UpstreamAnswer> => {
      calls.push(request);
      return {
        model: 'm',
        policyVersion: 4,
        promptText: 'user: go',
        promptTokenIds: [1, 2, 3],
        promptScope: 'turn',
        choices: [
          {
            text: toolCalls ? '' : 'move',
            tokenIds: [10, 11],
            logProbs: [-0.5, -Math.fround(0.3)],
            tokens: ['mo', 've'],
            topLogProbs: [[], []],
            finishReason: toolCalls ? 'tool_calls' : 'stop',
            toolCalls,
          },
        ],
        usage: { promptTokens: 3, completionTokens: 2 },
        info: {},
      };
    },
  };
}

async function serve(config: GatewayConfigInput = {}, deps: Partial<GatewayDeps> = {}) {
  const published: StepEvent[] = [];
  const app = createGatewayApp({
    config: loadGatewayConfig({ port: 0, runId: 'run-a', envName: 'Chat', ...config }, {}),
    upstream: fakeUpstream(),
    steps: { publishAll: async (steps) => void published.push(...steps) },
    log: () => undefined,
    ...deps,
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, published };
}

const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const responsesBody = (extra: Record<string, unknown> = {}) => ({ model: 'm', input: 'go', include: ['message.output_text.logprobs'], ...extra });
const messagesBody = (extra: Record<string, unknown> = {}) => ({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'go' }], ...extra });

/** What must be equal between two recordings of the same turn (ids, times and the call id differ). */
const essence = (step: StepEvent) => {
  const { eventId: _e, episodeId: _ep, groupId: _g, eventTimeMs: _t, metrics, info, ...rest } = step;
  const { upstreamMs: _u, ...keptMetrics } = metrics;
  const { callId: _c, ...keptInfo } = info;
  return { ...rest, metrics: keptMetrics, info: keptInfo };
};

/** A publisher whose acknowledgement the test releases: nothing may be answered before it. */
function heldPublisher() {
  const published: StepEvent[] = [];
  let release: () => void = () => undefined;
  const acked = new Promise<void>((resolve) => (release = resolve));
  const publishAll = async (steps: readonly StepEvent[]): Promise<void> => {
    published.push(...steps);
    await acked;
  };
  return { published, release, steps: { publishAll } };
}

for (const [path, body] of [
  ['/v1/responses', responsesBody()],
  ['/v1/messages', messagesBody()],
] as const) {
  test(`${path}: answered only after its step's publish was acknowledged`, async () => {
    const held = heldPublisher();
    const { url } = await serve({}, { steps: held.steps });
    let answered = false;
    const response = post(url, path, body, { 'x-trajflow-episode': 'held' }).then((r) => {
      answered = true;
      return r;
    });
    await waitFor(() => held.published.length > 0, 'the step handed to Kafka', 10_000, 10);
    assert.equal(held.published.length, 1, 'one step is handed to Kafka');
    // The publish is held: the answer must still be waiting for it, however long the machine took to get here.
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(answered, false, 'no answer before the acknowledgement');
    held.release();
    assert.equal((await response).status, 200);
    assert.deepEqual(
      [held.published[0]!.actionTokenIds, held.published[0]!.actionLogProbs],
      [
        [10, 11],
        [-0.5, -Math.fround(0.3)],
      ],
    );
  });
}

test('/v1/responses: streamed and not, one step each with the upstream’s ids and log-probs, the answer’s id naming the episode', async () => {
  const { url, published } = await serve();
  const plain = (await (await post(url, '/v1/responses', responsesBody())).json()) as {
    id: string;
    output: Array<{ content: Array<{ text: string; logprobs: Array<{ logprob: number }> }> }>;
  };
  assert.match(plain.id, /^resp_[0-9a-f]{32}$/);
  assert.equal(plain.output[0]!.content[0]!.text, 'move');
  assert.deepEqual(
    plain.output[0]!.content[0]!.logprobs.map((l) => l.logprob),
    published[0]!.actionLogProbs,
  );
  assert.equal(published[0]!.episodeId, plain.id);
  const streamed = await post(url, '/v1/responses', responsesBody({ stream: true }), { 'x-trajflow-episode': 'ep-s' });
  assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
  const text = await streamed.text();
  assert.ok(text.startsWith('event: response.created\ndata: '));
  assert.ok(text.trimEnd().split('\n\n').at(-1)!.startsWith('event: response.completed\n'));
  assert.equal(published.length, 2);
  assert.equal(published[1]!.episodeId, 'ep-s');
  assert.deepEqual(essence(published[1]!), essence(published[0]!));
  assert.equal((await post(url, `/v1/episodes/${plain.id}/finish`, { reward: 1 })).status, 200);
});

test('/v1/messages: streamed and not, one step each; x-api-key is the token; the answer’s id names the episode', async () => {
  const { url, published } = await serve({ tokens: [TOKEN] });
  const key = { 'x-api-key': TOKEN, 'anthropic-version': '2023-06-01' };
  const plain = (await (await post(url, '/v1/messages', messagesBody(), key)).json()) as { id: string; content: Array<{ text: string }>; stop_reason: string };
  assert.match(plain.id, /^msg_[0-9a-f]{32}$/);
  assert.deepEqual([plain.content[0]!.text, plain.stop_reason], ['move', 'end_turn']);
  assert.equal(published[0]!.episodeId, plain.id);
  const streamed = await (await post(url, '/v1/messages', messagesBody({ stream: true }), { ...key, 'x-trajflow-episode': 'ep-m' })).text();
  assert.ok(streamed.startsWith('event: message_start\ndata: '));
  assert.ok(streamed.trimEnd().endsWith('event: message_stop\ndata: {"type":"message_stop"}'));
  assert.deepEqual(essence(published[1]!), essence(published[0]!));
  const bearer = await post(url, '/v1/messages', messagesBody(), { authorization: `Bearer ${TOKEN}` });
  assert.equal(bearer.status, 200, 'authToken (Authorization: Bearer) works too');
});

async function anthropicError(response: Response) {
  const body = (await response.json()) as { type: string; error: { type: string; message: string } };
  assert.equal(body.type, 'error');
  assert.deepEqual(Object.keys(body.error).sort(), ['message', 'type']);
  return { status: response.status, ...body.error };
}

test('/v1/messages errors are Anthropic-shaped, from the parser, the auth, the rate limit, the model check and the body reader', async () => {
  const { url, published } = await serve({ tokens: [TOKEN], burst: 6, callsPerSecond: 0.01 });
  const key = { 'x-api-key': TOKEN };
  const cases: Array<[Promise<Response>, number, string, RegExp]> = [
    [post(url, '/v1/messages', messagesBody({ temperature: 2 }), key), 400, 'invalid_request_error', /^temperature: /],
    [post(url, '/v1/messages', messagesBody({ messages: [{ role: 'user', content: [{ type: 'image' }] }] }), key), 400, 'invalid_request_error', /^messages\[0\]\.content\[0\]: /],
    [post(url, '/v1/messages', messagesBody({ model: 'nope' }), key), 404, 'not_found_error', /model 'nope'/],
    [post(url, '/v1/messages', '{"model": ', key), 400, 'invalid_request_error', /./],
    [post(url, '/v1/messages', messagesBody()), 401, 'authentication_error', /Authorization/],
    [post(url, '/v1/messages', messagesBody(), { 'x-api-key': 'w'.repeat(40) }), 403, 'permission_error', /token/],
    [post(url, '/v1/messages/count_tokens', messagesBody(), key), 404, 'not_found_error', /no route POST \/v1\/messages\/count_tokens/],
  ];
  for (const [response, status, type, message] of cases) {
    const error = await anthropicError(await response);
    assert.deepEqual([error.status, error.type], [status, type], error.message);
    assert.match(error.message, message);
  }
  for (let i = 0; i < 3; i++) await post(url, '/v1/messages', messagesBody(), key);
  const limited = await post(url, '/v1/messages', messagesBody(), key);
  assert.ok(limited.headers.get('retry-after'));
  assert.equal((await anthropicError(limited)).type, 'rate_limit_error');
  assert.equal(published.length, 2, 'only the two answered calls');
});

test('/v1/responses errors are OpenAI-shaped, an upstream refusal naming the field in the request’s own words', async () => {
  const upstream = fakeUpstream();
  const { url, published } = await serve(
    {},
    {
      upstream: {
        ...upstream,
        complete: async () => {
          throw invalidParam('messages', 'the last message must be a user or tool message: the observation the policy acts on');
        },
      },
    },
  );
  const response = await post(url, '/v1/responses', responsesBody());
  const { error } = (await response.json()) as { error: { message: string; type: string; param: string; code: string } };
  assert.deepEqual([response.status, error.type, error.param], [400, 'invalid_request_error', 'input']);
  assert.match(error.message, /^input: the last message/);
  const bad = await post(url, '/v1/responses', responsesBody({ previous_response_id: 'resp_1' }));
  assert.deepEqual([bad.status, ((await bad.json()) as { error: { param: string } }).error.param], [400, 'previous_response_id']);
  assert.equal(published.length, 0);
});

test('an upstream tool call whose arguments are not a JSON object: a 502 on /v1/messages, nothing recorded; /v1/responses passes it on', async () => {
  const calls = [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: 'not json' } }];
  const { url, published } = await serve({}, { upstream: fakeUpstream(calls) });
  const refused = await anthropicError(await post(url, '/v1/messages', messagesBody()));
  assert.deepEqual([refused.status, refused.type], [502, 'api_error']);
  assert.match(refused.message, /tool_calls\[0\]\.function\.arguments is not a JSON object/);
  assert.equal(published.length, 0);
  const passed = (await (await post(url, '/v1/responses', responsesBody())).json()) as { output: Array<{ type: string; arguments: string }> };
  assert.deepEqual(
    passed.output.map((item) => [item.type, item.arguments]),
    [['function_call', 'not json']],
  );
  const health = (await (await fetch(`${url}/health`)).json()) as { upstreamFailures: number; answeredCalls: number };
  assert.deepEqual([health.upstreamFailures, health.answeredCalls], [1, 1]);
});

test('the official openai client reads the answers: responses.create, and responses.stream accumulating the events', async () => {
  const calls = [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } }];
  const { url, published } = await serve({}, { upstream: fakeUpstream(calls) });
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused-on-loopback', maxRetries: 0 });
  const tools = [{ type: 'function' as const, name: 'look', parameters: { type: 'object' }, strict: null }];
  const created = await client.responses.create({ model: 'm', input: 'go', tools });
  assert.deepEqual(
    created.output.map((item) => item.type === 'function_call' && [item.name, item.arguments, item.call_id]),
    [['look', '{"dir":"n"}', 'call_1']],
  );
  const stream = client.responses.stream({ model: 'm', input: 'go', tools, include: ['message.output_text.logprobs'] });
  const types: string[] = [];
  stream.on('event', (event) => types.push(event.type));
  const final = await stream.finalResponse();
  assert.deepEqual([final.id.startsWith('resp_'), final.status, final.output.length], [true, 'completed', 1]);
  assert.equal(types.at(-1), 'response.completed');
  assert.equal(published.length, 2);
});

test('the official Anthropic client reads the answers: messages.create, messages.stream accumulating the events, and its errors', async () => {
  const calls = [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"dir":"n"}' } }];
  const { url, published } = await serve({ tokens: [TOKEN] }, { upstream: fakeUpstream(calls) });
  const client = new Anthropic({ baseURL: url, apiKey: TOKEN, maxRetries: 0 });
  const tools = [{ name: 'look', input_schema: { type: 'object' as const } }];
  const created = await client.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'go' }], tools });
  assert.deepEqual([created.stop_reason, created.content], ['tool_use', [{ type: 'tool_use', id: 'call_1', name: 'look', input: { dir: 'n' } }]]);
  const final = await client.messages.stream({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'go' }], tools }).finalMessage();
  assert.deepEqual([final.id.startsWith('msg_'), final.stop_reason, final.content], [true, 'tool_use', created.content]);
  assert.equal(published.length, 2);
  const wrong = new Anthropic({ baseURL: url, apiKey: 'w'.repeat(40), maxRetries: 0 });
  await assert.rejects(
    wrong.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: 'go' }] }),
    (error: unknown) => error instanceof Anthropic.PermissionDeniedError && (error.error as { error?: { type?: string } }).error?.type === 'permission_error',
  );
  await assert.rejects(
    client.messages.create({ model: 'm', max_tokens: 8, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'url', url: 'https://example.com/x.png' } }] }] }),
    (error: unknown) => error instanceof Anthropic.BadRequestError && /messages\[0\]\.content\[0\]/.test(error.message),
  );
});

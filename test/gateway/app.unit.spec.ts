// Unit: the gateway's HTTP app over fakes (an upstream in memory, a publisher that records or fails): the
// answered ⇒ published rule, streaming and non-streaming recording the same step, finishing and timing out
// episodes, and every refusal in OpenAI's error shape.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { StepEvent } from '../../schemas/index.js';
import { createGatewayApp, type GatewayDeps } from '../../gateway/app.js';
import { parseServerTiming } from '../../gateway/call-timing.js';
import { configFromFlags } from '../../gateway/command.js';
import { loadGatewayConfig, type GatewayConfigInput } from '../../gateway/config.js';
import type { Upstream, UpstreamAnswer, UpstreamRequest } from '../../gateway/upstream.js';
import { tokenIdsMissing } from '../../gateway/vllm-response.js';
import { waitFor } from '../helpers/kafka.js';

const TOKEN = 'c'.repeat(40);
const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

/** Answers every call with the same sampled tokens (seeded by the request's seed), as a real upstream's record would be. */
function fakeUpstream(overrides: Partial<Upstream> = {}): Upstream & { calls: UpstreamRequest[] } {
  const calls: UpstreamRequest[] = [];
  return {
    name: 'fake',
    calls,
    models: () => ['m'],
    complete: async (request): Promise<UpstreamAnswer> => {
      calls.push(request);
      const seed = request.sampling.seed ?? 0;
      return {
        model: 'm',
        policyVersion: 2,
        promptText: 'user: go',
        promptTokenIds: [1, 2, 3],
        promptScope: 'conversation',
        choices: Array.from({ length: request.sampling.n }, (_, i) => ({
          text: `move ${i}`,
          tokenIds: [10 + i, 20 + seed],
          logProbs: [-0.5, -Math.fround(0.1 * (i + 1))],
          tokens: ['move', ` ${i}`],
          topLogProbs: [[{ token: 'move', logprob: -0.5 }], []],
          finishReason: 'stop' as const,
          toolCalls: null,
        })),
        usage: { promptTokens: 3, completionTokens: 2 * request.sampling.n },
        info: {},
      };
    },
    ...overrides,
  };
}

async function serve(config: GatewayConfigInput = {}, deps: Partial<GatewayDeps> = {}) {
  const published: StepEvent[] = [];
  const upstream = fakeUpstream();
  const app = createGatewayApp({
    config: loadGatewayConfig({ port: 0, runId: 'run-u', envName: 'Chat', ...config }, {}),
    upstream,
    steps: { publishAll: async (steps) => void published.push(...steps) },
    log: () => undefined,
    ...deps,
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, published, upstream, app };
}

const post = (url: string, path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) });

const chatBody = (extra: Record<string, unknown> = {}) => ({ model: 'm', messages: [{ role: 'user', content: 'go' }], logprobs: true, ...extra });

async function errorOf(response: Response) {
  const body = (await response.json()) as { error: { message: string; type: string; param: string | null; code: string | null } };
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  return { status: response.status, ...body.error };
}

/** What must be equal between two recordings of the same turn (ids, times and the call id differ). */
const essence = (step: StepEvent) => {
  const { eventId: _e, episodeId: _ep, groupId: _g, eventTimeMs: _t, metrics, info, ...rest } = step;
  const { upstreamMs: _u, ...keptMetrics } = metrics;
  const { callId: _c, ...keptInfo } = info;
  return { ...rest, metrics: keptMetrics, info: keptInfo };
};

test('a chat call is answered in OpenAI shape after its step was published, with the exact ids and log-probs', async () => {
  const { url, published } = await serve();
  const response = await post(url, '/v1/chat/completions', chatBody({ seed: 1 }), { 'x-trajflow-episode': 'ep-1', 'x-trajflow-group': 'grp' });
  assert.equal(response.status, 200);
  const body = (await response.json()) as {
    id: string;
    object: string;
    choices: Array<{ message: { content: string }; logprobs: { content: Array<{ token: string; logprob: number }> } }>;
  };
  assert.equal(body.object, 'chat.completion');
  assert.equal(body.choices[0]!.message.content, 'move 0');
  assert.deepEqual(
    body.choices[0]!.logprobs.content.map((c) => c.logprob),
    [-0.5, -Math.fround(0.1)],
  );
  assert.equal(published.length, 1);
  const step = published[0]!;
  assert.deepEqual([step.runId, step.groupId, step.episodeId, step.stepIndex], ['run-u', 'grp', 'ep-1', 0]);
  assert.deepEqual(
    [step.actionTokenIds, step.actionLogProbs, step.observationTokenIds],
    [
      [10, 21],
      [-0.5, -Math.fround(0.1)],
      [1, 2, 3],
    ],
  );
  assert.equal(step.info.callId, body.id);
  // The next turn of the episode records only the prompt ids its context does not hold yet.
  await post(url, '/v1/chat/completions', chatBody({ seed: 2 }), { 'x-trajflow-episode': 'ep-1' });
  assert.equal(published[1]!.stepIndex, 1);
  assert.deepEqual(published[1]!.observationTokenIds, [1, 2, 3], 'the fake repeats its prompt: not a prefix extension, so drift');
  assert.equal(published[1]!.info.promptDrift, '1');
  // The same request again is a retry: the turn its client never saw answered is named an orphan.
  await post(url, '/v1/chat/completions', chatBody({ seed: 2 }), { 'x-trajflow-episode': 'ep-1' });
  assert.deepEqual([published[2]!.stepIndex, published[2]!.info.orphans], [2, '[1]']);
  assert.equal(published[2]!.info.requestHash, published[1]!.info.requestHash);
});

test('streaming and non-streaming record the same step; the stream is OpenAI chunks ending with [DONE]', async () => {
  const { url, published } = await serve();
  const plain = (await (await post(url, '/v1/chat/completions', chatBody({ seed: 4, n: 2 }), { 'x-trajflow-episode': 'a' })).json()) as {
    choices: Array<{ message: { content: string }; logprobs: unknown; finish_reason: string }>;
  };
  const streamed = await post(url, '/v1/chat/completions', chatBody({ seed: 4, n: 2, stream: true, stream_options: { include_usage: true } }), { 'x-trajflow-episode': 'b' });
  assert.equal(streamed.status, 200);
  assert.match(streamed.headers.get('content-type') ?? '', /^text\/event-stream/);
  const events = (await streamed.text()).split('\n\n').filter((e) => e !== '');
  assert.ok(events.every((e) => e.startsWith('data: ')));
  assert.equal(events.at(-1), 'data: [DONE]');
  const chunks = events.slice(0, -1).map(
    (e) =>
      JSON.parse(e.slice(6)) as {
        object: string;
        choices: Array<{ index: number; delta: { content?: string }; logprobs: unknown; finish_reason: string | null }>;
        usage?: { total_tokens: number };
      },
  );
  assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk'));
  for (const index of [0, 1]) {
    const mine = chunks.flatMap((c) => c.choices.filter((ch) => ch.index === index));
    assert.equal(mine.map((ch) => ch.delta.content ?? '').join(''), plain.choices[index]!.message.content);
    assert.deepEqual(mine.find((ch) => ch.logprobs)?.logprobs, plain.choices[index]!.logprobs);
    assert.equal(mine.at(-1)!.finish_reason, plain.choices[index]!.finish_reason);
  }
  assert.equal(chunks.at(-1)!.usage?.total_tokens, 3 + 4);
  assert.equal(published.length, 4, 'n = 2: two episodes per call');
  assert.deepEqual(
    published.map((s) => s.episodeId),
    ['a', 'a:n1', 'b', 'b:n1'],
  );
  assert.deepEqual(published.slice(2).map(essence), published.slice(0, 2).map(essence));
});

test('a publish that fails makes the call an error: nothing is answered, and the turn index is given back', async () => {
  let fail = true;
  const published: StepEvent[] = [];
  const { url } = await serve({}, { steps: { publishAll: async (steps) => (fail ? Promise.reject(new Error('broker down')) : void published.push(...steps)) } });
  const refused = await errorOf(await post(url, '/v1/chat/completions', chatBody(), { 'x-trajflow-episode': 'p' }));
  assert.equal(refused.status, 503);
  assert.equal(refused.code, 'recording_unavailable');
  fail = false;
  assert.equal((await post(url, '/v1/chat/completions', chatBody(), { 'x-trajflow-episode': 'p' })).status, 200);
  assert.equal(published[0]!.stepIndex, 0);
});

test('a publish that never gets its acknowledgement is an error after the publish timeout', async () => {
  const { url } = await serve({ publishTimeoutMs: 100 }, { steps: { publishAll: () => new Promise<void>(() => undefined) } });
  const started = Date.now();
  assert.equal((await errorOf(await post(url, '/v1/chat/completions', chatBody()))).status, 503);
  assert.ok(Date.now() - started < 3000);
});

test('an upstream without token ids: the documented 502, nothing recorded', async () => {
  const { url, published } = await serve(
    {},
    {
      upstream: fakeUpstream({
        complete: async () => {
          throw tokenIdsMissing(0);
        },
      }),
    },
  );
  const refused = await errorOf(await post(url, '/v1/chat/completions', chatBody()));
  assert.deepEqual([refused.status, refused.type, refused.code], [502, 'upstream_error', 'upstream_token_ids_missing']);
  assert.equal(published.length, 0);
  const health = (await (await fetch(`${url}/health`)).json()) as { upstreamFailures: number; answeredCalls: number };
  assert.deepEqual([health.upstreamFailures, health.answeredCalls], [1, 0]);
});

test('finish publishes the outcome step after the last turn; a second finish, a later call, an unknown episode are refused', async () => {
  const { url, published } = await serve();
  for (let turn = 0; turn < 2; turn++) await post(url, '/v1/chat/completions', chatBody(), { 'x-trajflow-episode': 'f', 'x-trajflow-run': 'run-f' });
  const finished = await post(url, '/v1/episodes/f/finish', { reward: 1, success: true }, { 'x-trajflow-run': 'run-f' });
  assert.equal(finished.status, 200);
  assert.deepEqual(await finished.json(), {
    object: 'episode.finished',
    run_id: 'run-f',
    episode_id: 'f',
    steps: 3,
    reward: 1,
    terminated: true,
    truncated: false,
    trajectories: [{ episode_id: 'f', group_id: 'f', agent: null, steps: 3, reward: 1 }],
  });
  const last = published.at(-1)!;
  assert.deepEqual([last.stepIndex, last.terminated, last.reward, last.metrics.success, last.policyVersion, last.actionTokenIds], [2, true, 1, 1, 2, []]);
  assert.equal((await errorOf(await post(url, '/v1/episodes/f/finish', { reward: 1 }, { 'x-trajflow-run': 'run-f' }))).status, 409);
  assert.equal((await errorOf(await post(url, '/v1/chat/completions', chatBody(), { 'x-trajflow-episode': 'f', 'x-trajflow-run': 'run-f' }))).status, 409);
  assert.equal((await errorOf(await post(url, '/v1/episodes/f/finish', { reward: 1 }))).code, 'episode_not_found', 'another run (the default) has no such episode');
  const bad = await errorOf(await post(url, '/v1/episodes/has%20space/finish', { reward: 1 }));
  assert.deepEqual([bad.status, bad.param], [400, 'id']);
});

test('a call without an episode is an episode of its own, named by the answer id, which finish accepts', async () => {
  const { url, published } = await serve();
  const body = (await (await post(url, '/v1/chat/completions', chatBody())).json()) as { id: string };
  assert.equal(published[0]!.episodeId, body.id);
  assert.equal((await post(url, `/v1/episodes/${body.id}/finish`, { reward: 0.5 })).status, 200);
  assert.equal(published[1]!.reward, 0.5);
});

test('an episode never finished is published truncated after the timeout and counted', async () => {
  const { url, published, app } = await serve({ episodeTimeoutMs: 100 });
  await post(url, '/v1/chat/completions', chatBody(), { 'x-trajflow-episode': 'lost' });
  await waitFor(async () => (await app.recorder.expire()) > 0 || published.length > 1, 'the timeout', 5000, 20);
  const last = published.at(-1)!;
  assert.deepEqual([last.episodeId, last.stepIndex, last.truncated, last.terminated, last.info.gatewayOutcome], ['lost', 1, true, false, 'timeout']);
  const health = (await (await fetch(`${url}/health`)).json()) as { episodesTimedOut: number; openEpisodes: number };
  assert.deepEqual([health.episodesTimedOut, health.openEpisodes], [1, 0]);
});

test('text completions answer in text_completion shape, streamed too', async () => {
  const { url, published } = await serve();
  const body = (await (await post(url, '/v1/completions', { model: 'm', prompt: 'go', logprobs: 1 })).json()) as {
    object: string;
    choices: Array<{ text: string; logprobs: { token_logprobs: number[] } }>;
  };
  assert.equal(body.object, 'text_completion');
  assert.deepEqual(body.choices[0]!.logprobs.token_logprobs, published[0]!.actionLogProbs);
  const streamed = await (await post(url, '/v1/completions', { model: 'm', prompt: 'go', stream: true })).text();
  assert.ok(streamed.trimEnd().endsWith('data: [DONE]'));
  assert.equal(JSON.parse(streamed.split('\n\n')[0]!.slice(6)).choices[0].text, 'move 0');
});

test('bad input gets an OpenAI-shaped 4xx naming the field', async () => {
  const { url, published } = await serve();
  const cases: Array<[Promise<Response>, number, string | null]> = [
    [post(url, '/v1/chat/completions', chatBody({ temperature: 9 })), 400, 'temperature'],
    [post(url, '/v1/chat/completions', chatBody({ model: 'nope' })), 404, 'model'],
    [post(url, '/v1/chat/completions', '{"model": "m", "model": "m"}'), 400, 'model'],
    [post(url, '/v1/chat/completions', '{"model": '), 400, null],
    [fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' }), 415, null],
    [post(url, '/v1/chat/completions', chatBody(), { 'x-trajflow-run': 'bad run' }), 400, 'x-trajflow-run'],
    [fetch(`${url}/v1/nothing`), 404, null],
  ];
  for (const [response, status, param] of cases) {
    const error = await errorOf(await response);
    assert.equal(error.status, status, error.message);
    assert.equal(error.param, param, error.message);
  }
  assert.equal(published.length, 0);
});

test('auth and rate limits as the rest of the API: 401/403 without the token, 429 past the burst', async () => {
  const { url } = await serve({ tokens: [TOKEN], burst: 2, callsPerSecond: 0.01 });
  assert.equal((await errorOf(await fetch(`${url}/v1/models`))).type, 'authentication_error');
  assert.equal((await errorOf(await fetch(`${url}/v1/models`, { headers: { authorization: `Bearer ${'d'.repeat(40)}` } }))).type, 'permission_error');
  const auth = { authorization: `Bearer ${TOKEN}` };
  const models = (await (await fetch(`${url}/v1/models`, { headers: auth })).json()) as { object: string; data: Array<{ id: string }> };
  assert.deepEqual([models.object, models.data.map((m) => m.id)], ['list', ['m']]);
  assert.equal((await post(url, '/v1/chat/completions', chatBody(), auth)).status, 200);
  assert.equal((await post(url, '/v1/chat/completions', chatBody(), auth)).status, 200);
  const limited = await post(url, '/v1/chat/completions', chatBody(), auth);
  assert.ok(limited.headers.get('retry-after'));
  assert.equal((await errorOf(limited)).type, 'rate_limit_error');
});

test("every answer says where its time went (Server-Timing): the read barrier's wait beyond the upstream, and the publish", async () => {
  const sync = { catchUp: () => new Promise<{ watermarksMs: number }>((resolve) => setTimeout(() => resolve({ watermarksMs: 7 }), 40)) };
  const { url } = await serve({}, { sync, steps: { publishAll: () => new Promise<void>((resolve) => setTimeout(resolve, 20)) } });
  const response = await post(url, '/v1/chat/completions', chatBody());
  assert.equal(response.status, 200);
  const timing = parseServerTiming(response.headers.get('server-timing') ?? undefined)!;
  assert.equal(timing.watermarksMs, 7);
  assert.ok(timing.barrierMs >= 35 && timing.barrierWaitMs >= 30 && timing.barrierWaitMs <= timing.barrierMs, JSON.stringify(timing));
  assert.ok(timing.publishMs >= 15 && timing.recordMs >= timing.barrierMs + timing.publishMs - 1, JSON.stringify(timing));
  const alone = await serve();
  const free = parseServerTiming((await post(alone.url, '/v1/chat/completions', chatBody())).headers.get('server-timing') ?? undefined)!;
  assert.ok(free.watermarksMs === 0 && free.barrierWaitMs < 5, `without a read barrier nothing is waited for: ${JSON.stringify(free)}`);
});

test('--single-instance is off unless asked for', () => {
  assert.equal(loadGatewayConfig({}, {}).singleInstance, false);
  const parsed = configFromFlags(['--single-instance']);
  assert.ok(parsed !== 'help' && parsed.config.singleInstance);
});

// Unit (fakes for Kafka and the replay itself): POST /v1/replay checks the selection before starting (a
// bad field is a 400 naming it), needs a token when tokens are configured, answers 202 with an id, and
// GET /v1/replays/:id shows the report once the replay is done.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { EventCodec, SchemaRegistry } from '../../schemas/index.js';
import { createApp } from '../../api/app.js';
import { loadApiConfig } from '../../api/config.js';
import type { ReplayStarter } from '../../api/replay-route.js';
import { buildReplayProcessing, type ReplayProcessingInput } from '../../learner/replay/run-replay.js';
import { waitFor } from '../helpers/kafka.js';

const TOKEN = 'r'.repeat(40);
const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

async function serve(replay: ReplayStarter, tokens: string[] = []) {
  const app = createApp({
    config: loadApiConfig({ port: 0, tokens }, {}),
    codec: new EventCodec(SchemaRegistry.fromSchemasDir()),
    steps: { publishAll: async () => undefined },
    deadLetters: { route: async () => undefined },
    probes: { kafka: async () => ({ ok: true, ms: 1 }), clickhouse: async () => ({ ok: true, ms: 1 }) },
    analytics: { queryJson: async () => [] },
    log: () => undefined,
    replay,
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/replay`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

test('a good request starts the replay (202) and its report is readable when done', async () => {
  const calls: unknown[] = [];
  const url = await serve(async (selection, processing, replayId) => {
    calls.push({ selection, processing, replayId });
    return { replayId, samplesPublished: 8 } as never;
  });
  const response = await post(url, { selection: { runId: 'run-1', success: true }, processing: { estimator: 'grpo' } });
  assert.equal(response.status, 202);
  const { replayId } = (await response.json()) as { replayId: string };
  assert.match(response.headers.get('location') ?? '', new RegExp(`/v1/replays/${replayId}$`));
  let state: { status?: string; report?: { samplesPublished: number } } = {};
  await waitFor(
    async () => {
      state = (await (await fetch(`${url}/v1/replays/${replayId}`)).json()) as typeof state;
      return state.status === 'done';
    },
    'the replay is done',
    5000,
  );
  assert.equal(state.report?.samplesPublished, 8);
  assert.equal(calls.length, 1);
});

test('bad selections are 400s naming the problem, and start nothing', async () => {
  let started = 0;
  const url = await serve(async () => {
    started++;
    return {} as never;
  });
  const missing = await post(url, { processing: {} });
  assert.equal(missing.status, 400);
  assert.equal(((await missing.json()) as { field: string }).field, 'selection');
  const badRun = await post(url, { selection: { runId: "x' OR 1=1 --" } });
  assert.equal(badRun.status, 400);
  assert.match(((await badRun.json()) as { detail: string }).detail, /runId/);
  const extra = await post(url, { selection: { runId: 'run-1' }, sql: 'DROP TABLE steps' });
  assert.equal(extra.status, 400);
  assert.equal(started, 0);
});

test('with tokens configured, a replay needs a valid bearer token', async () => {
  const url = await serve(async (_s, _p, replayId) => ({ replayId }) as never, [TOKEN]);
  assert.equal((await post(url, { selection: { runId: 'run-1' } })).status, 401);
  assert.equal((await post(url, { selection: { runId: 'run-1' } }, { authorization: `Bearer ${'x'.repeat(40)}` })).status, 403);
  assert.equal((await post(url, { selection: { runId: 'run-1' } }, { authorization: `Bearer ${TOKEN}` })).status, 202);
});

test('a body that is not JSON is a 400 problem, not a 500; so are bytes that are not UTF-8 and a key twice; another media type is a 415', async () => {
  let started = 0;
  const url = await serve(async () => {
    started++;
    return {} as never;
  });
  const send = (body: string | Uint8Array<ArrayBuffer>, contentType = 'application/json') =>
    fetch(`${url}/v1/replay`, { method: 'POST', headers: { 'content-type': contentType }, body });
  for (const [what, body] of [
    ['malformed JSON', '{"selection": {"runId": '],
    ['not UTF-8', new Uint8Array([...Buffer.from('{"selection": {"runId": "r'), 0xc3, 0x28, ...Buffer.from('"}}')])],
    ['a key twice', '{"selection": {"runId": "run-1", "runId": "run-2"}}'],
    ['an empty body', ''],
  ] as const) {
    const response = await send(body);
    assert.equal(response.status, 400, what);
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/, what);
    const problem = (await response.json()) as { type: string; detail: string; field?: string };
    assert.equal(problem.type, 'urn:trajflow:problem:invalid-body', what);
    if (what === 'a key twice') assert.equal(problem.field, 'selection.runId');
  }
  const text = await send('{"selection": {"runId": "run-1"}}', 'text/plain');
  assert.equal(text.status, 415);
  assert.equal(text.headers.get('accept-post'), 'application/json');
  assert.equal(started, 0);
});

test("express.json's parse error, wherever a router uses it, is a 400 problem", async () => {
  const app = createApp({
    config: loadApiConfig({ port: 0 }, {}),
    codec: new EventCodec(SchemaRegistry.fromSchemasDir()),
    steps: { publishAll: async () => undefined },
    deadLetters: { route: async () => undefined },
    probes: { kafka: async () => ({ ok: true, ms: 1 }), clickhouse: async () => ({ ok: true, ms: 1 }) },
    analytics: { queryJson: async () => [] },
    log: () => undefined,
    mount: (app) => app.post('/test/json', express.json(), (_req, res) => void res.json({})),
  });
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/test/json`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{nope',
  });
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { type: string }).type, 'urn:trajflow:problem:invalid-body');
});

test('the documented body {"processing": {"estimator": …}} is read: the replay runs with that estimator', async () => {
  const calls: Array<{ processing: ReplayProcessingInput }> = [];
  const url = await serve(async (_selection, processing, replayId) => {
    calls.push({ processing });
    return { replayId } as never;
  });
  const cases: Array<[unknown, string]> = [
    [{ estimator: 'rloo' }, 'rloo'],
    [{ estimator: 'grpo', filters: [{ name: 'dynamic_sampling' }], batchGroups: 4 }, 'grpo'],
    [{ estimator: { name: 'dr_grpo' } }, 'dr_grpo'],
    [{ processing: { estimator: { name: 'gigpo' } }, minGroupSize: 3 }, 'gigpo'],
  ];
  for (const [processing, name] of cases) {
    const response = await post(url, { selection: { runId: 'run-1' }, processing });
    assert.equal(response.status, 202, JSON.stringify(processing));
    assert.equal(calls.at(-1)!.processing.processing?.estimator?.name, name);
    assert.equal(buildReplayProcessing(calls.at(-1)!.processing).processing.estimator.name, name);
  }
  assert.equal(calls[1]!.processing.batchGroups, 4);
  assert.deepEqual(calls[1]!.processing.processing?.filters, [{ name: 'dynamic_sampling' }]);
  assert.equal(calls[3]!.processing.minGroupSize, 3);
});

test('an unknown estimator is a 400 listing the valid ones; unknown fields anywhere are 400s naming them; nothing starts', async () => {
  let started = 0;
  const url = await serve(async () => {
    started++;
    return {} as never;
  });
  const cases: Array<[unknown, string, RegExp]> = [
    [{ estimator: 'ppo' }, 'processing.estimator', /unknown estimator "ppo"; use one of grpo, .*rloo/],
    [{ estimator: { name: 'ppo' } }, 'processing.estimator.name', /use one of grpo/],
    [{ processing: { estimator: { name: 'ppo' } } }, 'processing.processing.estimator.name', /use one of grpo/],
    [{ estimatr: 'grpo' }, 'processing.estimatr', /unknown field "processing.estimatr"; processing takes processing, reward, estimator/],
    [{ estimator: 'grpo', batchGroup: 4, sql: 1 }, 'processing.batchGroup', /unknown fields "processing.batchGroup", "processing.sql"/],
    [{ estimator: { name: 'grpo', optons: {} } }, 'processing.estimator.optons', /unknown field/],
    [{ processing: { estimator: 'grpo', filterz: [] } }, 'processing.processing.filterz', /unknown field/],
    [{ filters: [{ name: 'dynamic_sampling', option: {} }] }, 'processing.filters[0].option', /unknown field/],
    [{ replayId: 'mine' }, 'processing.replayId', /the server names the replay/],
    [{ estimator: 'grpo', processing: { estimator: 'rloo' } }, 'processing.estimator', /not both/],
    ['grpo', 'processing', /must be an object/],
  ];
  for (const [processing, field, detail] of cases) {
    const response = await post(url, { selection: { runId: 'run-1' }, processing });
    assert.equal(response.status, 400, JSON.stringify(processing));
    const problem = (await response.json()) as { field: string; detail: string };
    assert.equal(problem.field, field, JSON.stringify(processing));
    assert.match(problem.detail, detail);
  }
  const topLevel = await post(url, { selection: { runId: 'run-1' }, processnig: {} });
  assert.equal(topLevel.status, 400);
  assert.equal(((await topLevel.json()) as { field: string }).field, 'processnig');
  assert.equal(started, 0);
});

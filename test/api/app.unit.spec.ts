// The express app over fakes (no Kafka, no ClickHouse): the paths that are hard to provoke with real
// services — a publish that never gets an ack, ClickHouse failing a read, a degraded health — and the
// auth rule for reads when the server is bound beyond loopback.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import type { DeadLetterInput } from '../../streams/index.js';
import { ClickHouseError } from '../../infra/clickhouse/http.js';
import { createApp, type ApiDeps } from '../../api/app.js';
import { startHttpServer } from '../../api/server.js';
import { ConfigError } from '../../core/errors.js';
import { loadApiConfig, type ApiConfigOverrides } from '../../api/config.js';
import type { ProbeResult } from '../../api/health-route.js';
import { makeStep } from '../../bench/load/events.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const TOKEN = 'b'.repeat(40);
const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

const up: ProbeResult = { ok: true, ms: 1 };
const down: ProbeResult = { ok: false, ms: 1, detail: 'did not answer' };

async function serve(config: ApiConfigOverrides, deps: Partial<Omit<ApiDeps, 'config'>> = {}) {
  const published: StepEvent[][] = [];
  const letters: DeadLetterInput[] = [];
  const logs: string[] = [];
  const app = createApp({
    config: loadApiConfig({ port: 0, ...config }, {}),
    codec,
    steps: { publishAll: async (steps) => void published.push([...steps]) },
    deadLetters: { route: async (letter) => void letters.push(letter) },
    probes: { kafka: async () => up, clickhouse: async () => up },
    analytics: { queryJson: async () => [] },
    log: (line) => logs.push(line),
    ...deps,
  });
  // Always on loopback here, whatever host the config names: only the app's rules are under test.
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, published, letters, logs, app };
}

const postJson = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/steps`, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8', ...headers }, body: JSON.stringify(body) });

test('a publish Kafka never acknowledges is a 503 after publishTimeoutMs, counted in /health', async () => {
  const { url } = await serve({ publishTimeoutMs: 100 }, { steps: { publishAll: () => new Promise<void>(() => undefined) } });
  const started = Date.now();
  const response = await postJson(url, makeStep());
  assert.equal(response.status, 503);
  assert.ok(Date.now() - started < 2000);
  const body = (await response.json()) as { type: string };
  assert.equal(body.type, 'urn:trajflow:problem:kafka-unavailable');
  const health = (await (await fetch(`${url}/health`)).json()) as { ingest: { publishFailures: number; lastPublishError: string } };
  assert.equal(health.ingest.publishFailures, 1);
  assert.match(health.ingest.lastPublishError, /did not finish within 100 ms/);
});

test('a dead-letter write that fails still answers 400, says so, and logs it', async () => {
  const { url, logs } = await serve({}, { deadLetters: { route: async () => Promise.reject(new Error('broker gone')) } });
  const response = await postJson(url, { ...makeStep(), extra: true });
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { deadLettered: boolean }).deadLettered, false);
  assert.ok(logs.some((line) => /could not dead-letter/.test(line)));
});

test('a refused body whose problem names a lone surrogate is dead-lettered with a well-formed detail', async () => {
  const { url, letters, published } = await serve({});
  const response = await postJson(url, { ...makeStep(), '\ud800': 1 });
  assert.equal(response.status, 400);
  assert.equal(((await response.json()) as { reason: string }).reason, 'unknown-field');
  assert.equal(letters.length, 1);
  // The detail is an Avro string: it must have a UTF-8 encoding.
  assert.doesNotMatch(letters[0]!.detail, /[\uD800-\uDFFF]/u);
  assert.deepEqual(published, []);
});

test('JSON with a charset parameter is accepted; the publisher gets the converted steps', async () => {
  const { url, published } = await serve({});
  const step = makeStep({}, 3);
  assert.equal((await postJson(url, { steps: [step] })).status, 202);
  assert.deepEqual(published, [[step]]);
});

test('/health: ClickHouse down is 200 degraded (ingest still works); Kafka down is 503 fail', async () => {
  const degraded = await serve({}, { probes: { kafka: async () => up, clickhouse: async () => down } });
  const a = await fetch(`${degraded.url}/health`);
  assert.equal(a.status, 200);
  assert.equal(((await a.json()) as { status: string }).status, 'degraded');
  const failing = await serve({}, { probes: { kafka: async () => down, clickhouse: async () => up } });
  const b = await fetch(`${failing.url}/health`);
  assert.equal(b.status, 503);
  assert.equal(((await b.json()) as { status: string }).status, 'fail');
});

test('ClickHouse failing a read is a 503 problem without its message; the log has it', async () => {
  const failing = {
    queryJson: async () => {
      throw new ClickHouseError('ClickHouse: Code: 60, e.displayText() = DB::Exception: Table trajflow.dead_letters does not exist', 404);
    },
  };
  const { url, logs } = await serve({}, { analytics: failing as unknown as ApiDeps['analytics'] });
  const response = await fetch(`${url}/v1/dead-letters`);
  assert.equal(response.status, 503);
  const text = await response.text();
  assert.doesNotMatch(text, /DB::Exception|Code: 60/);
  assert.match(text, /migrations/);
  assert.ok(logs.some((line) => line.includes('GET /v1/dead-letters')));
});

test('reads need a token when the server is bound beyond loopback, and stay open on loopback', async () => {
  const exposed = await serve({ host: '0.0.0.0', tokens: [TOKEN] });
  assert.equal((await fetch(`${exposed.url}/v1/dead-letters`)).status, 401);
  assert.equal((await fetch(`${exposed.url}/v1/dead-letters`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
  assert.equal((await fetch(`${exposed.url}/health`)).status, 200, 'health stays open for probes');
  const local = await serve({ tokens: [TOKEN] });
  assert.equal((await fetch(`${local.url}/v1/dead-letters`)).status, 200);
  assert.equal((await postJson(local.url, makeStep())).status, 401, 'writes still need the token');
});

/** Sends the head of a request and nothing of its body; resolves with what the server answered and whether it closed the connection. */
function headOnly(url: string, head: string, waitMs: number): Promise<{ response: string; closed: boolean }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let response = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ response, closed: false });
    }, waitMs);
    socket.setEncoding('utf8').on('data', (chunk: string) => (response += chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ response, closed: true });
    });
    socket.write(head);
  });
}

test('a declared Content-Length over the limit is a 413 at once, before any of the body is sent, and the connection is closed', async () => {
  const { url, letters, published } = await serve({ maxBodyBytes: 64 * 1024 });
  const host = new URL(url).host;
  for (const [path, type] of [
    ['/v1/steps', 'application/json'],
    ['/v1/replay', 'application/json'],
  ] as const) {
    const started = Date.now();
    const { response, closed } = await headOnly(url, `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: ${type}\r\nContent-Length: 10000000000\r\n\r\n`, 3000);
    assert.match(response, /^HTTP\/1\.1 413 /, `${path}: ${response.slice(0, 80) || 'no answer within 3 s'}`);
    assert.match(response, /application\/problem\+json/);
    assert.match(response, /"limitBytes":\d+/);
    assert.ok(closed, `${path}: the server closed the connection`);
    assert.ok(Date.now() - started < 2000, `${path}: answered in ${Date.now() - started} ms`);
  }
  assert.deepEqual(letters, [], 'not dead-lettered: no body was read');
  assert.deepEqual(published, []);
  // At the limit is read as usual (here: a JSON body that is not a step).
  const { response } = await headOnly(url, `POST /v1/steps HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}`, 3000);
  assert.match(response, /^HTTP\/1\.1 400 /);
});

test('every JSON and problem response carries X-Content-Type-Options: nosniff', async () => {
  const { url } = await serve(
    {},
    {
      mount: (app) =>
        app.get('/test/throws', () => {
          throw new Error('boom');
        }),
    },
  );
  const responses: Array<[string, Response]> = [
    ['200 JSON', await fetch(`${url}/health`)],
    ['200 read', await fetch(`${url}/v1/dead-letters`)],
    ['200 document', await fetch(`${url}/openapi.json`)],
    ['202 ingest', await postJson(url, makeStep())],
    ['400 problem', await postJson(url, { nope: 1 })],
    ['400 query problem', await fetch(`${url}/v1/runs?limit=0`)],
    ['404 problem', await fetch(`${url}/v1/nothing`)],
    ['405 problem', await fetch(`${url}/v1/runs`, { method: 'DELETE' })],
    ['415 problem', await postJson(url, makeStep(), { 'content-type': 'text/plain' })],
    ['500 problem', await fetch(`${url}/test/throws`)],
  ];
  for (const [what, response] of responses) {
    await response.body?.cancel();
    assert.equal(response.headers.get('x-content-type-options'), 'nosniff', what);
  }
});

test('on loopback, a read without a token is served, but one with a wrong token is a 403 (and a malformed header a 401)', async () => {
  const local = await serve({ tokens: [TOKEN] });
  const read = (headers: Record<string, string> = {}) => fetch(`${local.url}/v1/dead-letters`, { headers });
  assert.equal((await read()).status, 200);
  assert.equal((await read({ authorization: `Bearer ${TOKEN}` })).status, 200);
  const wrong = await read({ authorization: `Bearer ${'w'.repeat(40)}` });
  assert.equal(wrong.status, 403);
  assert.match(wrong.headers.get('www-authenticate') ?? '', /invalid_token/);
  assert.equal((await read({ authorization: 'Basic dXNlcjpwdw==' })).status, 401);
  // The event stream too (it answers 403 before opening).
  assert.equal((await fetch(`${local.url}/v1/events?runId=r`, { headers: { authorization: `Bearer ${'w'.repeat(40)}` } })).status, 403);
  // Without configured tokens there is nothing to check a token against: it is ignored.
  const open = await serve({});
  assert.equal((await fetch(`${open.url}/v1/dead-letters`, { headers: { authorization: `Bearer ${'w'.repeat(40)}` } })).status, 200);
});

test('the wrong method on a known path is 405 with Allow', async () => {
  const { url } = await serve({});
  const response = await fetch(`${url}/v1/dead-letters`, { method: 'DELETE' });
  assert.equal(response.status, 405);
  assert.equal(response.headers.get('allow'), 'GET');
});

const fakeServices: Omit<ApiDeps, 'config'> = {
  codec,
  steps: { publishAll: async () => undefined },
  deadLetters: { route: async () => undefined },
  probes: { kafka: async () => up, clickhouse: async () => up },
  analytics: { queryJson: async () => [] },
};

test('startHttpServer refuses a non-loopback host without tokens, and a port in use, with ConfigErrors', async () => {
  await assert.rejects(
    startHttpServer(loadApiConfig({ host: '0.0.0.0', port: 0 }, {}), fakeServices),
    (error: unknown) => error instanceof ConfigError && /TRAJFLOW_DASHBOARD_TOKENS/.test(error.message),
  );
  const first = await startHttpServer(loadApiConfig({ port: 0 }, {}), fakeServices);
  try {
    assert.match(first.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    await assert.rejects(
      startHttpServer(loadApiConfig({ port: first.port }, {}), fakeServices),
      (error: unknown) => error instanceof ConfigError && /already in use.*--port/.test(error.message),
    );
    assert.equal((await fetch(`${first.url}/health`)).status, 200);
  } finally {
    await first.close();
  }
  await assert.rejects(fetch(`${first.url}/health`), 'closed servers accept nothing');
});

// Unit (fakes, a real HTTP server on loopback): DNS rebinding and cross-site requests (api/host-check.ts).
// A page whose name was made to resolve to 127.0.0.1 reaches the server with its own name in Host: refused
// (403 problem, field Host) unless the name is allowed. An Origin that is not an allowed host is refused too.
// Host headers are sent with node:http (fetch does not let a caller set Host).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { createApp } from '../../api/app.js';
import { loadApiConfig, type ApiConfigOverrides } from '../../api/config.js';
import { parseAllowedHost } from '../../api/host-check.js';
import { makeStep } from '../../bench/load/events.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const TOKEN = 'h'.repeat(40);
const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

async function serve(config: ApiConfigOverrides = {}) {
  const published: StepEvent[][] = [];
  const app = createApp({
    config: loadApiConfig({ port: 0, ...config }, {}),
    codec,
    steps: { publishAll: async (steps) => void published.push([...steps]) },
    deadLetters: { route: async () => undefined },
    probes: { kafka: async () => ({ ok: true, ms: 1 }), clickhouse: async () => ({ ok: true, ms: 1 }) },
    analytics: { queryJson: async () => [] },
    log: () => undefined,
  });
  // On loopback whatever host the config names: the config's host decides whether Host is checked.
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => server.close());
  return { port: (server.address() as AddressInfo).port, published };
}

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly json: Record<string, unknown> | null;
}

function send(port: number, path: string, headers: Record<string, string>, method = 'GET', body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method, headers: { connection: 'close', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
      res.on('end', () => {
        let json: Record<string, unknown> | null = null;
        try {
          json = JSON.parse(text) as Record<string, unknown>;
        } catch {
          // the dashboard's HTML
        }
        resolve({ status: res.statusCode!, headers: res.headers, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

function refused(answer: Answer, field: 'Host' | 'Origin', what: string): void {
  assert.equal(answer.status, 403, what);
  assert.match(String(answer.headers['content-type']), /^application\/problem\+json/, what);
  assert.equal(answer.headers['x-content-type-options'], 'nosniff', what);
  assert.equal(answer.json?.type, 'urn:trajflow:problem:host-not-allowed', what);
  assert.equal(answer.json?.field, field, what);
}

test('bound to loopback: localhost, 127.0.0.1 and [::1] with the server port are answered; any other Host is a 403, on every path', async () => {
  const { port, published } = await serve();
  for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `LOCALHOST:${port}`, `[::1]:${port}`, `localhost.:${port}`]) {
    assert.equal((await send(port, '/v1/runs', { host })).status, 200, host);
  }
  for (const [host, path] of [
    [`evil.example:${port}`, '/v1/runs'],
    [`evil.example:${port}`, '/health'],
    [`evil.example:${port}`, '/openapi.json'],
    [`evil.example:${port}`, '/'],
    [`127.0.0.1.evil.example:${port}`, '/v1/dead-letters'],
    ['localhost', '/v1/runs'],
    [`localhost:${port + 1}`, '/v1/runs'],
    ['localhost:18080@evil.example', '/v1/runs'],
  ] as const) {
    refused(await send(port, path, { host }), 'Host', `${host} ${path}`);
  }
  const step = JSON.stringify(makeStep());
  refused(await send(port, '/v1/steps', { host: `rebound.example:${port}`, 'content-type': 'application/json' }, 'POST', step), 'Host', 'a write');
  assert.deepEqual(published, [], 'nothing published for a refused Host');
  assert.equal((await send(port, '/v1/steps', { host: `127.0.0.1:${port}`, 'content-type': 'application/json' }, 'POST', step)).status, 202);
});

test("a browser's cross-site request is refused by its Origin; the server's own origin is fine", async () => {
  const { port, published } = await serve();
  const host = `127.0.0.1:${port}`;
  for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
    assert.equal((await send(port, '/v1/runs', { host, origin })).status, 200, origin);
  }
  for (const origin of ['http://evil.example', `http://evil.example:${port}`, 'null', `http://127.0.0.1:${port + 1}`, `ftp://127.0.0.1:${port}`, `http://127.0.0.1:${port}/path`]) {
    refused(await send(port, '/v1/runs', { host, origin }), 'Origin', origin);
  }
  refused(
    await send(port, '/v1/steps', { host, origin: 'https://evil.example', 'content-type': 'application/json' }, 'POST', JSON.stringify(makeStep())),
    'Origin',
    'a cross-site write',
  );
  assert.deepEqual(published, []);
});

test('configured names are answered too: a name for any port, name:port for one; * turns the Host check off', async () => {
  const { port } = await serve({ allowedHosts: ['dash.example.com', 'other.example:8443'] });
  assert.equal((await send(port, '/v1/runs', { host: 'dash.example.com' })).status, 200);
  assert.equal((await send(port, '/v1/runs', { host: 'dash.example.com:443', origin: 'https://dash.example.com' })).status, 200);
  assert.equal((await send(port, '/v1/runs', { host: 'other.example:8443' })).status, 200);
  refused(await send(port, '/v1/runs', { host: 'other.example' }), 'Host', 'the wrong port of a name:port entry');
  assert.equal((await send(port, '/v1/runs', { host: `localhost:${port}` })).status, 200, 'loopback names stay allowed');
  const off = await serve({ allowedHosts: null });
  assert.equal((await send(off.port, '/v1/runs', { host: 'anything.example' })).status, 200);
});

test("bound beyond loopback with nothing configured: Host is not checked (reads need a token there), an Origin must be the request's own host", async () => {
  const { port } = await serve({ host: '0.0.0.0', tokens: [TOKEN] });
  const auth = { authorization: `Bearer ${TOKEN}` };
  assert.equal((await send(port, '/v1/runs', { host: 'dash.internal:18080', ...auth })).status, 200);
  assert.equal((await send(port, '/v1/runs', { host: 'dash.internal:18080', origin: 'http://dash.internal:18080', ...auth })).status, 200);
  refused(await send(port, '/v1/runs', { host: 'dash.internal:18080', origin: 'http://evil.example', ...auth }), 'Origin', 'another site');
});

test('allowed-host entries: names, addresses and [IPv6] with an optional port; nothing else', () => {
  assert.deepEqual(parseAllowedHost('Dash.Example.com'), { name: 'dash.example.com', port: null });
  assert.deepEqual(parseAllowedHost('dash.example.com:8443'), { name: 'dash.example.com', port: 8443 });
  assert.deepEqual(parseAllowedHost('[::1]:18080'), { name: '[::1]', port: 18080 });
  assert.deepEqual(parseAllowedHost('10.0.0.7'), { name: '10.0.0.7', port: null });
  for (const bad of ['::1', 'http://dash.example.com', 'dash.example.com/x', 'a b', 'dash:0', 'dash:70000', '']) assert.equal(parseAllowedHost(bad), undefined, bad);
});

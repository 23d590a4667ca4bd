// GET /v1/events over a fake ClickHouse: rows that appear after `ready` are pushed once each, heartbeats
// flow, a client that goes away frees its slot, the stream limit is a 503, a ClickHouse failure is a 503
// before the stream opens and a `problem` event after, and closing the server ends open streams at once.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { get as httpGet } from 'node:http';
import { EventCodec, SchemaRegistry } from '../../schemas/index.js';
import { ClickHouseError } from '../../infra/clickhouse/http.js';
import { loadApiConfig } from '../../api/config.js';
import { startHttpServer, type HttpServerHandle } from '../../api/server.js';
import type { ApiDeps } from '../../api/app.js';
import type { EventStreamOptions } from '../../api/events-route.js';
import { waitFor } from '../helpers/kafka.js';
import { openSse, type SseClient } from './sse.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const servers: HttpServerHandle[] = [];
const clients: SseClient[] = [];
const closers: Array<() => void> = [];
after(async () => {
  clients.forEach((client) => client.close());
  closers.forEach((close) => close());
  for (const server of servers) await server.close(100);
});

/** A fake ClickHouse holding alert rows; it answers the event queries by their WHERE clause's lower bound. */
class FakeStore {
  alerts: Array<Record<string, unknown>> = [];
  failing = false;
  queries = 0;
  async queryJson<T>(sql: string): Promise<T[]> {
    this.queries++;
    if (this.failing) throw new ClickHouseError('ClickHouse: Code: 81, DB::Exception: Database gone', 404);
    if (!/FROM collapse_alerts/.test(sql)) return [];
    const from = Number(/event_time_ms >= (\d+)/.exec(sql)![1]);
    return this.alerts.filter((row) => Number(row.event_time_ms) >= from) as T[];
  }
}

const alertRow = (id: string, time: number) => ({
  key: id,
  alert_id: id,
  run_id: 'run-1',
  kind: 'entropy_collapse',
  severity: 'warning',
  learner_step: 3,
  policy_version: 2,
  value: 0.1,
  threshold: 0.2,
  message: 'entropy fell',
  event_time_ms: time,
  evidence_keys: ['window'],
  evidence_values: [0.15],
});

async function serve(store: FakeStore, events: EventStreamOptions = {}) {
  const logs: string[] = [];
  const deps: Omit<ApiDeps, 'config'> = {
    codec,
    steps: { publishAll: async () => undefined },
    deadLetters: { route: async () => undefined },
    probes: { kafka: async () => ({ ok: true, ms: 1 }), clickhouse: async () => ({ ok: true, ms: 1 }) },
    analytics: store,
    events: { pollMs: 30, heartbeatMs: 100, ...events },
    log: (line) => logs.push(line),
  };
  const server = await startHttpServer(loadApiConfig({ port: 0 }, {}), deps);
  servers.push(server);
  return { server, logs };
}

async function open(url: string, headers: Record<string, string> = {}): Promise<SseClient> {
  const client = await openSse(url, headers);
  clients.push(client);
  return client;
}

test('rows already there are not replayed; new rows are pushed once each, in time order, with heartbeats', async () => {
  const store = new FakeStore();
  store.alerts.push(alertRow('old', Date.now() - 1000));
  const { server } = await serve(store);
  const client = await open(`${server.url}/v1/events?runId=run-1&types=alert`);
  assert.equal(client.status, 200);
  assert.match(client.headers.get('content-type') ?? '', /^text\/event-stream/);
  const ready = await client.next((e) => e.event === 'ready', 'ready');
  assert.deepEqual(JSON.parse(ready.data), { runId: 'run-1', types: ['alert'], sinceMs: null });
  const now = Date.now();
  store.alerts.push(alertRow('b', now + 2), alertRow('a', now + 1));
  const b = await client.next((e) => e.event === 'alert' && JSON.parse(e.data).alertId === 'b', 'alert b');
  assert.equal(b.id, String(now + 2));
  await waitFor(() => client.comments.some((c) => c.startsWith('heartbeat')), 'a heartbeat', 5000, 20);
  const alerts = client.events.filter((e) => e.event === 'alert').map((e) => JSON.parse(e.data) as { alertId: string; evidence: Record<string, number> });
  assert.deepEqual(
    alerts.map((a) => a.alertId),
    ['a', 'b'],
    'oldest first, the old one not replayed, nothing twice',
  );
  assert.deepEqual(alerts[0]!.evidence, { window: 0.15 });
});

test('sinceMs replays from that time; a client that leaves frees its slot; the limit is a 503', async () => {
  const store = new FakeStore();
  store.alerts.push(alertRow('x', 5000));
  const { server } = await serve(store, { maxStreams: 1 });
  const first = await open(`${server.url}/v1/events?runId=run-1&types=alert&sinceMs=0`);
  await first.next((e) => e.event === 'alert', 'the replayed alert');
  const second = await open(`${server.url}/v1/events?runId=run-1`);
  assert.equal(second.status, 503);
  assert.equal(JSON.parse(second.text).type, 'urn:trajflow:problem:too-many-streams');
  assert.equal(server.app.openStreams(), 1);
  first.close();
  await waitFor(() => server.app.openStreams() === 0, 'the stream to close after the client left', 5000, 20);
  const queries = store.queries;
  await new Promise((resolve) => setTimeout(resolve, 150));
  assert.equal(store.queries, queries, 'no polling after the client left');
  const third = await open(`${server.url}/v1/events?runId=run-1&types=alert`);
  assert.equal(third.status, 200);
});

/** GET over node:http from a given loopback source address (127.0.0.0/8 is all this machine): another client. */
function getFrom(localAddress: string, url: string): Promise<{ status: number; retryAfter: string | undefined; body: string; close(): void }> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { localAddress, headers: { accept: 'text/event-stream' } }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      const close = () => request.destroy();
      closers.push(close);
      if (response.statusCode === 200) {
        // A stream: resolve once the server said it is ready.
        response.on('data', (chunk: string) => {
          body += chunk;
          if (body.includes('event: ready')) resolve({ status: 200, retryAfter: undefined, body, close });
        });
      } else {
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'] as string | undefined, body, close }));
      }
    });
    request.on('error', reject);
  });
}

test('one client cannot take every stream: past its own limit it gets a 503 with Retry-After, while other clients still get theirs', async () => {
  const { server } = await serve(new FakeStore(), { maxStreams: 3, maxStreamsPerClient: 2 });
  const url = `${server.url}/v1/events?runId=run-1&types=alert`;
  assert.equal((await getFrom('127.0.0.1', url)).status, 200);
  assert.equal((await getFrom('127.0.0.1', url)).status, 200);
  const greedy = await getFrom('127.0.0.1', url);
  assert.equal(greedy.status, 503, 'the third stream of one client');
  assert.equal(greedy.retryAfter, '10');
  assert.equal(JSON.parse(greedy.body).type, 'urn:trajflow:problem:too-many-streams');
  assert.match(JSON.parse(greedy.body).detail, /this client has 2 event streams open/);
  const other = await getFrom('127.0.0.2', url);
  assert.equal(other.status, 200, 'another client still gets a stream');
  // The server's limit still holds for everyone.
  const third = await getFrom('127.0.0.3', url);
  assert.equal(third.status, 503);
  assert.match(JSON.parse(third.body).detail, /3 event streams are open/);
  assert.equal(server.app.openStreams(), 3);
  // A stream that ends frees its client's slot.
  other.close();
  await waitFor(() => server.app.openStreams() === 2, 'the stream to close after its client left', 5000, 20);
  assert.equal((await getFrom('127.0.0.3', url)).status, 200);
});

test('bad parameters are 400 problems before any stream opens', async () => {
  const { server } = await serve(new FakeStore());
  for (const [query, field] of [
    ['', 'runId'],
    ["runId=x'%20OR%201=1", 'runId'],
    ['runId=r&types=steps', 'types'],
    ['runId=r&sinceMs=-5', 'sinceMs'],
    ['runId=r&limit=5', 'limit'],
  ] as const) {
    const client = await open(`${server.url}/v1/events?${query}`);
    assert.equal(client.status, 400, query);
    assert.equal(JSON.parse(client.text).field, field, query);
  }
  assert.equal(server.app.openStreams(), 0);
});

test('ClickHouse failing: a 503 before the stream opens, a problem event (once) after, and recovery', async () => {
  const store = new FakeStore();
  store.failing = true;
  const { server, logs } = await serve(store);
  const refused = await open(`${server.url}/v1/events?runId=run-1`);
  assert.equal(refused.status, 503);
  assert.doesNotMatch(refused.text, /DB::Exception/);
  store.failing = false;
  const client = await open(`${server.url}/v1/events?runId=run-1&types=alert`);
  await client.next((e) => e.event === 'ready', 'ready');
  store.failing = true;
  const problem = await client.next((e) => e.event === 'problem', 'a problem event');
  assert.equal(JSON.parse(problem.data).status, 503);
  assert.doesNotMatch(problem.data, /DB::Exception/);
  assert.ok(logs.some((line) => /ClickHouse failed/.test(line)));
});

test('closing the server ends open streams at once', async () => {
  const { server } = await serve(new FakeStore());
  const client = await open(`${server.url}/v1/events?runId=run-1`);
  await client.next((e) => e.event === 'ready', 'ready');
  const started = Date.now();
  await server.close(5000);
  assert.ok(Date.now() - started < 1000, `closed in ${Date.now() - started} ms`);
  await waitFor(() => client.ended(), 'the client to see the end', 2000, 20);
});

// Integration (real Kafka, real ClickHouse): POST /v1/steps over HTTP into Kafka, and every way a request
// is refused. Each test starts its own API server (port 0) whose steps and dead-letter topics are new
// topics under a unique prefix, so what a test reads back is exactly what it sent. Waits poll, never sleep.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { randomBytes } from 'node:crypto';
import { lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import type { Admin } from 'kafkajs';
import type { Express } from 'express';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient } from '../../infra/clickhouse/http.js';
import type { DeadLetterEvent, StepEvent } from '../../schemas/index.js';
import {
  classifyDecodeError,
  connectBackbone,
  createKafka,
  createReplay,
  DeadLetterRoute,
  eventDecoder,
  EventProducer,
  StepPublisher,
  type Backbone,
  type Envelope,
} from '../../streams/index.js';
import { startSink } from '../../storage/sink/sink.js';
import { loadApiConfig, type ApiConfigOverrides } from '../../api/config.js';
import { startHttpServer } from '../../api/server.js';
import { createApiServices, type ApiServices } from '../../api/services.js';
import { HTTP_SOURCE_TOPIC } from '../../api/steps-route.js';
import { makeStep } from '../../bench/load/events.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';

const base = loadConfig();
const TOKEN_A = randomBytes(24).toString('hex');
const TOKEN_B = randomBytes(24).toString('hex');
const AVRO = 'application/vnd.trajflow.avro';

let backbone: Backbone;
let admin: Admin;
const prefixes: string[] = [];
const databases: string[] = [];
const closers: Array<() => Promise<void>> = [];

before(async () => {
  backbone = await connectBackbone(base, { clientId: 'test-dashboard-ingest' });
  admin = backbone.kafka.admin();
  await admin.connect();
});

after(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  const ours = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(`${p}.`)));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
  await admin.disconnect();
  await backbone.close();
  const server = clickHouseClient(base, null);
  for (const database of databases) await server.exec(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
});

interface Api {
  readonly url: string;
  readonly config: TrajflowConfig;
  readonly stepsTopic: string;
  readonly deadLetterTopic: string;
  /** Lines the server logged (instead of printing them). */
  readonly logs: string[];
}

interface ApiOptions {
  readonly dashboard?: ApiConfigOverrides;
  /** Replace services (a publisher on a dead broker, …). */
  readonly services?: (api: { stepsTopic: string; deadLetterTopic: string; services: ApiServices }) => Partial<ApiServices>;
  readonly mount?: (app: Express) => void;
  /** Use this backbone (own prefix, own ClickHouse database) instead of the shared one. */
  readonly backbone?: Backbone;
}

/** Creates the steps and dead-letter topics under a new prefix and starts an API server on them. */
async function startApi(options: ApiOptions = {}): Promise<Api> {
  const owner = options.backbone ?? backbone;
  const config: TrajflowConfig = options.backbone ? owner.config : { ...base, topicPrefix: uniqueName('api') };
  prefixes.push(config.topicPrefix);
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'env.steps' || s.name === 'deadletter'),
  );
  const stepsTopic = topicName(config, 'env.steps');
  const deadLetterTopic = topicName(config, 'deadletter');
  const services = createApiServices(owner);
  const logs: string[] = [];
  const server = await startHttpServer(loadApiConfig({ port: 0, ...options.dashboard }, {}), {
    ...services,
    steps: new StepPublisher(owner.producer, stepsTopic),
    deadLetters: new DeadLetterRoute(owner.producer, deadLetterTopic),
    ...options.services?.({ stepsTopic, deadLetterTopic, services }),
    log: (line, error) => logs.push(`${line}${error instanceof Error ? `\n${error.stack}` : ''}`),
    ...(options.mount ? { mount: options.mount } : {}),
  });
  closers.push(
    () => services.close(),
    () => server.close(),
  );
  return { url: server.url, config, stepsTopic, deadLetterTopic, logs };
}

interface PostOptions {
  readonly token?: string;
  readonly contentType?: string | null;
}

async function post(api: Api, body: unknown, options: PostOptions = {}): Promise<{ status: number; headers: Headers; json: Record<string, unknown>; text: string }> {
  const headers: Record<string, string> = {};
  const contentType = options.contentType === undefined ? (Buffer.isBuffer(body) ? AVRO : 'application/json') : options.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  const payload = Buffer.isBuffer(body) ? new Uint8Array(body) : typeof body === 'string' ? body : JSON.stringify(body);
  const response = await fetch(`${api.url}/v1/steps`, { method: 'POST', headers, body: payload });
  const text = await response.text();
  return { status: response.status, headers: response.headers, json: JSON.parse(text) as Record<string, unknown>, text };
}

/** Everything in a topic now, decoded. */
async function readAll<N extends 'step' | 'dead_letter'>(topic: string, event: N): Promise<Envelope<N extends 'step' ? StepEvent : DeadLetterEvent>[]> {
  const replay = await createReplay(backbone.kafka, { topic, decode: eventDecoder(backbone.codec, event), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))) as Envelope<N extends 'step' ? StepEvent : DeadLetterEvent>[];
}

async function messageCount(topic: string): Promise<number> {
  const offsets = await admin.fetchTopicOffsets(topic);
  return offsets.reduce((n, p) => n + Number(p.high) - Number(p.low), 0);
}

/** Fixture steps with ids unique to this run, in several groups. */
function steps(n: number, seed = 0): StepEvent[] {
  const run = randomBytes(4).toString('hex');
  return Array.from({ length: n }, (_, i) => makeStep({ eventId: `${run}-${i}`, groupId: `group-${run}-${i % 3}` }, seed + i));
}

/** The step as JSON, its observation two bytes that are not UTF-8 (C3 starts a character, 28 cannot continue it). */
function utf8Broken(step: StepEvent): Buffer {
  const json = JSON.stringify({ ...step, observation: 'MARK' });
  const at = json.indexOf('MARK');
  return Buffer.concat([Buffer.from(json.slice(0, at)), Buffer.from([0xc3, 0x28]), Buffer.from(json.slice(at + 4))]);
}

function assertProblem(response: { status: number; headers: Headers; json: Record<string, unknown>; text: string }, status: number): void {
  assert.equal(response.status, status, response.text);
  assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  for (const member of ['type', 'title', 'status', 'detail']) assert.ok(member in response.json, `problem has ${member}`);
  assert.equal(response.json.status, status);
  assert.doesNotMatch(response.text, /\bat .+\.(ts|js):\d+/, 'no stack trace in a response');
}

test('one JSON step → 202 after the ack, and it is in Kafka exactly as sent, keyed by its group', async () => {
  const api = await startApi();
  const [step] = steps(1);
  const response = await post(api, step);
  assert.equal(response.status, 202, response.text);
  assert.deepEqual(response.json, { accepted: 1 });
  const stored = await readAll(api.stepsTopic, 'step');
  assert.equal(stored.length, 1);
  assert.deepEqual(stored[0]!.value, step);
  assert.equal(stored[0]!.key?.toString(), step!.groupId);
});

test('a JSON batch → 202 {accepted: n}, every step in Kafka as sent', async () => {
  const api = await startApi();
  const batch = steps(7, 10);
  const response = await post(api, { steps: batch });
  assert.equal(response.status, 202, response.text);
  assert.deepEqual(response.json, { accepted: 7 });
  const stored = (await readAll(api.stepsTopic, 'step')).map((e) => e.value).sort((a, b) => a.eventId.localeCompare(b.eventId));
  assert.deepEqual(
    stored,
    [...batch].sort((a, b) => a.eventId.localeCompare(b.eventId)),
  );
});

test('a JSON step without its optional fields is stored with null token ids, null state key and empty maps', async () => {
  const api = await startApi();
  const [step] = steps(1);
  const { observationTokenIds: _o, stateKey: _s, metrics: _m, info: _i, ...minimal } = step!;
  assert.equal((await post(api, minimal)).status, 202);
  const [stored] = await readAll(api.stepsTopic, 'step');
  assert.deepEqual(stored!.value, { ...step!, observationTokenIds: null, stateKey: null, metrics: {}, info: {} });
});

test('an Avro single-object step → 202, and the same event arrives', async () => {
  const api = await startApi();
  const [step] = steps(1, 40);
  const response = await post(api, backbone.codec.encode('step', step!));
  assert.equal(response.status, 202, response.text);
  const stored = await readAll(api.stepsTopic, 'step');
  assert.deepEqual(
    stored.map((e) => e.value),
    [step],
  );
});

test('bad steps are 400s naming the field, are dead-lettered with the reason, and publish nothing', async () => {
  const api = await startApi();
  const [step] = steps(1);
  const { reward: _r, ...missingReward } = step!;
  const cases: Array<[string, unknown, string | undefined, string, string]> = [
    ['wrong type', { ...step, policyVersion: 'v3' }, undefined, 'policyVersion', 'invalid-value'],
    ['missing field', missingReward, undefined, 'reward', 'invalid-value'],
    ['unknown field', { ...step, stateKye: 'pos=3' }, undefined, 'stateKye', 'unknown-field'],
    ['broken rule (positive log-prob)', { ...step, actionLogProbs: step!.actionLogProbs.map(() => 0.5) }, undefined, 'actionLogProbs[0]', 'invalid-value'],
    // Below float32: it would be -Infinity on the wire, and every consumer would dead-letter it.
    ['a log-prob float32 cannot hold', { ...step, actionLogProbs: step!.actionLogProbs.map((lp, i) => (i === 1 ? -1e39 : lp)) }, undefined, 'actionLogProbs[1]', 'invalid-value'],
    // A lone UTF-16 surrogate (JSON's "\ud800"): UTF-8 cannot encode it; avsc wrote bytes strict decoders refuse.
    ['a lone surrogate in the text', { ...step, observation: `${step!.observation}\ud800` }, undefined, 'observation', 'invalid-value'],
    ['a lone surrogate in an info key', { ...step, info: { 'ok\udc00': 'x' } }, undefined, 'info', 'invalid-value'],
    // Ids the read API would refuse (a quote, a space, over 256 characters): such a run could never be read back.
    ['a run id with a quote and a space', { ...step, runId: "run '1" }, undefined, 'runId', 'invalid-value'],
    ['an episode id of 257 characters', { ...step, episodeId: 'e'.repeat(257) }, undefined, 'episodeId', 'invalid-value'],
    ['not JSON', '{"eventId": ', undefined, '', 'bad-json'],
    // Bytes that are not UTF-8 (C3 28) used to become U+FFFD silently: the step stored was not the one sent.
    ['not UTF-8', utf8Broken(step!), 'application/json', '', 'bad-json'],
    // JSON.parse keeps the last of two values, other readers the first: such a body is ambiguous.
    ['a key twice', JSON.stringify(step).replace(/^\{/, '{"reward": 5, '), undefined, 'reward', 'duplicate-key'],
    ['a key twice in a batch', `{"steps": [${JSON.stringify(step)}, ${JSON.stringify(step).replace(/^\{/, '{"runId": "x", ')}]}`, undefined, 'steps[1].runId', 'duplicate-key'],
    ['not an Avro event', Buffer.from('plainly not avro'), AVRO, '', 'bad-marker'],
  ];
  const bodies: Buffer[] = [];
  for (const [what, body, contentType, field, reason] of cases) {
    const response = await post(api, body, contentType ? { contentType } : {});
    assertProblem(response, 400);
    assert.equal(response.json.reason, reason, what);
    assert.equal(response.json.deadLettered, true, what);
    if (field) assert.equal(response.json.field, field, what);
    else assert.equal(response.json.field, undefined, what);
    bodies.push(Buffer.isBuffer(body) ? body : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
  }
  assert.equal(await messageCount(api.stepsTopic), 0, 'nothing reached the steps topic');
  const letters = (await readAll(api.deadLetterTopic, 'dead_letter')).map((e) => e.value);
  assert.deepEqual(
    letters.map((l) => l.reason),
    cases.map((c) => c[4]),
  );
  for (const [i, letter] of letters.entries()) {
    assert.equal(letter.sourceTopic, HTTP_SOURCE_TOPIC);
    assert.equal(letter.sourcePartition, -1);
    assert.equal(letter.sourceOffset, -1);
    assert.deepEqual(letter.payload, bodies[i], 'the rejected body is kept byte for byte');
    assert.match(letter.detail, /HTTP caller anonymous/);
  }
});

test('a batch with one bad step is refused whole: 400 with its index, and none of the batch is published', async () => {
  const api = await startApi();
  const batch = steps(4);
  batch[2] = { ...batch[2]!, stepIndex: -1 };
  const response = await post(api, { steps: batch });
  assertProblem(response, 400);
  assert.equal(response.json.index, 2);
  assert.equal(response.json.field, 'stepIndex');
  // A good step after it: once it is acknowledged, anything queued before it would be too.
  const [marker] = steps(1, 99);
  assert.equal((await post(api, marker)).status, 202);
  const stored = await readAll(api.stepsTopic, 'step');
  assert.deepEqual(
    stored.map((e) => e.value.eventId),
    [marker!.eventId],
  );
});

test('a body over the limit is 413, as is a batch with more steps than allowed; neither is dead-lettered', async () => {
  const api = await startApi({ dashboard: { maxBodyBytes: 32 * 1024, maxStepsPerRequest: 3 } });
  const [step] = steps(1);
  const big = await post(api, { ...step, observation: 'x'.repeat(40_000) });
  assertProblem(big, 413);
  assert.equal(big.json.limitBytes, 32 * 1024);
  const many = await post(api, { steps: steps(4) });
  assertProblem(many, 413);
  assert.equal(many.json.field, 'steps');
  assert.equal(await messageCount(api.stepsTopic), 0);
  assert.equal(await messageCount(api.deadLetterTopic), 0);
});

test('a wrong or missing content type is 415 with the accepted types', async () => {
  const api = await startApi();
  const [step] = steps(1);
  for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', null]) {
    const response = await post(api, JSON.stringify(step), { contentType });
    assertProblem(response, 415);
    assert.match(response.headers.get('accept-post') ?? '', /application\/json.*application\/vnd\.trajflow\.avro/);
  }
  assert.equal(await messageCount(api.stepsTopic), 0);
});

test('with tokens configured: no token is 401, a wrong one 403 (both with WWW-Authenticate), a right one 202', async () => {
  const api = await startApi({ dashboard: { tokens: [TOKEN_A, TOKEN_B] } });
  const [step] = steps(1);
  const missing = await post(api, step);
  assertProblem(missing, 401);
  assert.match(missing.headers.get('www-authenticate') ?? '', /^Bearer/);
  const wrong = await post(api, step, { token: 'not-the-token-at-all-1234' });
  assertProblem(wrong, 403);
  assert.match(wrong.headers.get('www-authenticate') ?? '', /^Bearer.*invalid_token/);
  const basic = await fetch(`${api.url}/v1/steps`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Basic dXNlcjpwdw==' }, body: '{}' });
  assert.equal(basic.status, 401);
  assert.equal(await messageCount(api.stepsTopic), 0);
  assert.equal(await messageCount(api.deadLetterTopic), 0, 'unauthenticated bodies are not dead-lettered');
  assert.equal((await post(api, step, { token: TOKEN_B })).status, 202);
});

test('each token has its own step budget: past it, 429 with Retry-After; another token is unaffected', async () => {
  const api = await startApi({ dashboard: { tokens: [TOKEN_A, TOKEN_B], maxStepsPerRequest: 3, rateLimit: { stepsPerSecond: 0.05, burst: 3 } } });
  assert.equal((await post(api, { steps: steps(3) }, { token: TOKEN_A })).status, 202);
  const limited = await post(api, steps(1)[0], { token: TOKEN_A });
  assertProblem(limited, 429);
  const retryAfter = Number(limited.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 20, `Retry-After ${retryAfter}`);
  assert.equal((await post(api, { steps: steps(2) }, { token: TOKEN_B })).status, 202);
  assert.equal(await messageCount(api.stepsTopic), 5);
});

test('a route that throws answers a 500 problem with an error id, never the message or the stack', async () => {
  const api = await startApi({
    mount: (app) => {
      app.get('/test/throws', () => {
        throw new Error('secret internals: password=hunter2');
      });
      app.get('/test/rejects', async () => {
        await Promise.resolve();
        throw new TypeError('secret async internals');
      });
    },
  });
  for (const path of ['/test/throws', '/test/rejects']) {
    const response = await fetch(`${api.url}${path}`);
    const text = await response.text();
    assertProblem({ status: response.status, headers: response.headers, json: JSON.parse(text) as Record<string, unknown>, text }, 500);
    assert.doesNotMatch(text, /secret|hunter2|Error|\.ts/);
    const { errorId } = JSON.parse(text) as { errorId: string };
    assert.ok(
      api.logs.some((line) => line.includes(errorId) && line.includes('secret')),
      'the server log has the error under its id',
    );
  }
  const missing = await fetch(`${api.url}/v1/nothing-here`);
  assert.equal(missing.status, 404);
  assert.equal((await fetch(`${api.url}/v1/steps`)).status, 405);
});

/** A port nothing listens on: bound, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

test('Kafka unavailable → 503 problem with Retry-After and no stack; /health says fail', async () => {
  const deadConfig: TrajflowConfig = { ...base, kafka: { ...base.kafka, brokers: [`127.0.0.1:${await closedPort()}`] } };
  const deadKafka = createKafka(deadConfig, { retries: 0, connectionTimeoutMs: 300, quiet: true });
  const deadProducer = new EventProducer(deadKafka, backbone.codec);
  closers.push(() => deadProducer.disconnect());
  const deadServices = createApiServices({ ...backbone, config: deadConfig, kafka: deadKafka } as Backbone, { probeTimeoutMs: 1000 });
  closers.push(() => deadServices.close());
  const api = await startApi({
    dashboard: { publishTimeoutMs: 3000 },
    services: ({ stepsTopic }) => ({ steps: new StepPublisher(deadProducer, stepsTopic), probes: deadServices.probes }),
  });
  const response = await post(api, steps(1)[0]);
  assertProblem(response, 503);
  assert.equal(response.headers.get('retry-after'), '5');
  assert.doesNotMatch(response.text, /KafkaJS|ECONNREFUSED/);
  const health = await fetch(`${api.url}/health`);
  assert.equal(health.status, 503);
  const body = (await health.json()) as { status: string; checks: { kafka: { ok: boolean }; clickhouse: { ok: boolean } } };
  assert.equal(body.status, 'fail');
  assert.equal(body.checks.kafka.ok, false);
  assert.equal(body.checks.clickhouse.ok, true);
});

test('/health is ok when Kafka and ClickHouse answer', async () => {
  const api = await startApi();
  const response = await fetch(`${api.url}/health`);
  assert.equal(response.status, 200);
  const body = (await response.json()) as { status: string; checks: { kafka: { ok: boolean }; clickhouse: { ok: boolean } } };
  assert.equal(body.status, 'ok');
  assert.equal(body.checks.kafka.ok, true);
  assert.equal(body.checks.clickhouse.ok, true);
});

test('a rejected body reaches ClickHouse through the sink, and GET /v1/dead-letters shows it', async () => {
  const database = `test_api_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  databases.push(database);
  const config: TrajflowConfig = { ...base, topicPrefix: uniqueName('api-dlq'), clickhouse: { ...base.clickhouse, database } };
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => ['env.steps', 'deadletter', 'schemas'].includes(s.name)),
  );
  await applyMigrations(config);
  const own = await connectBackbone(config, { clientId: 'test-dashboard-dlq' });
  closers.push(() => own.close());
  const sink = await startSink(own, { events: ['dead_letter'], flushIntervalMs: 50, sessionTimeoutMs: 6000 });
  closers.push(() => sink.close({ drain: false }));
  const api = await startApi({ backbone: own });

  const since = Date.now() - 1000;
  const rejected = await post(api, { ...steps(1)[0], bogus: 1 });
  assertProblem(rejected, 400);
  type Listing = { count: number; deadLetters: Array<{ reason: string; sourceTopic: string; payloadBase64: string; detail: string }> };
  let listing: Listing | undefined;
  await waitFor(
    async () => {
      const response = await fetch(`${api.url}/v1/dead-letters?sinceMs=${since}&limit=10`);
      assert.equal(response.status, 200, await response.clone().text());
      listing = (await response.json()) as Listing;
      return listing.count > 0;
    },
    'the dead letter in ClickHouse',
    20_000,
    100,
  );
  const [letter] = listing!.deadLetters;
  assert.equal(letter!.reason, 'unknown-field');
  assert.equal(letter!.sourceTopic, HTTP_SOURCE_TOPIC);
  assert.match(Buffer.from(letter!.payloadBase64, 'base64').toString(), /"bogus":1/);

  const badQuery = await fetch(`${api.url}/v1/dead-letters?limit=5000`);
  assert.equal(badQuery.status, 400);
  assert.equal(((await badQuery.json()) as { field: string }).field, 'limit');
});

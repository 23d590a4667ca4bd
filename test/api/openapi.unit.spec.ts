// Unit: the OpenAPI document (api/openapi.ts) against the app it describes, over fakes (no Kafka, no ClickHouse).
//   * it is valid OpenAPI 3.1 (swagger-parser validates what GET /openapi.json serves);
//   * its paths × methods are exactly the routes the express app registers (walking the router stacks, nested
//     routers included), less the dashboard's; the comparison is shown to fail both ways;
//   * each operation's query parameters are the ones its handler accepts (the handler's own 400 for an unknown
//     parameter lists them), and each documented parameter is checked by the handler;
//   * `security` says what the server does without a token, bound to loopback and beyond it;
//   * every response the tests provoke has a documented status and media type, and its JSON fits the schema;
//   * the request examples are accepted, and docs/reference/http-api.md is the document rendered.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createServer, request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import express, { type Express } from 'express';
import SwaggerParser from '@apidevtools/swagger-parser';
import { EventCodec, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { ClickHouseError } from '../../infra/clickhouse/http.js';
import { createApp, type ApiDeps } from '../../api/app.js';
import { loadApiConfig, type ApiConfigOverrides } from '../../api/config.js';
import type { ProbeResult } from '../../api/health-route.js';
import { NON_API_PATHS, openApiDocument, type Json, type Method, type OpenApiDocument, type Operation, type Parameter } from '../../api/openapi.js';
import { stepFieldNames } from '../../api/step-json.js';
import type { ReplayReport } from '../../learner/replay/run-replay.js';
import type { AlertRow } from '../../storage/query/alerts.js';
import type { DeadLetterRow } from '../../storage/query/dead-letters.js';
import type { EvaluationRow } from '../../storage/query/evaluations.js';
import type { LagReport } from '../../storage/query/lag.js';
import type { LearnerMetricsRow } from '../../storage/query/learner-metrics.js';
import type { RolloutStatsRow } from '../../storage/query/rollout-stats.js';
import type { RunRow } from '../../storage/query/runs.js';
import type { TrajectoryRow } from '../../storage/query/trajectories.js';
import { openSse } from './sse.js';

const codec = new EventCodec(SchemaRegistry.fromSchemasDir());
const TOKEN = 'c'.repeat(40);
const doc = openApiDocument();
const closers: Array<() => void> = [];
after(() => closers.forEach((close) => close()));

const up: ProbeResult = { ok: true, ms: 1 };

const LAG: LagReport = {
  prefix: 'trajflow',
  truncated: false,
  groups: [
    {
      groupId: 'sink',
      state: 'Stable',
      members: 1,
      lag: 3,
      topics: [{ topic: 'trajflow.env.steps', lag: 3, partitions: [{ partition: 0, committedOffset: 1, lowWatermark: 0, highWatermark: 4, lag: 3 }] }],
    },
  ],
};

const REPORT: ReplayReport = {
  replayId: 'x',
  selection: { runId: 'frozenlake-s1', source: 'clickhouse' },
  runId: 'frozenlake-s1',
  samplesTopic: 'trajflow.samples',
  estimator: 'replay:grpo',
  sampleIdScope: 'replay:x',
  trajectoriesRead: 4,
  trajectoriesSelected: 4,
  rebuiltFromSteps: 0,
  duplicates: 0,
  undecodable: 0,
  unavailable: [],
  groups: 1,
  groupsKept: 1,
  droppedGroups: [],
  droppedByReason: {},
  samplesBuilt: 4,
  samplesPublished: 4,
  policyVersions: { min: 0, max: 0 },
  dryRun: false,
  durationMs: 12,
};

function makeApp(config: ApiConfigOverrides = {}, deps: Partial<Omit<ApiDeps, 'config'>> = {}) {
  return createApp({
    config: loadApiConfig({ port: 0, ...config }, {}),
    codec,
    steps: { publishAll: async () => undefined },
    deadLetters: { route: async () => undefined },
    probes: { kafka: async () => up, clickhouse: async () => up },
    analytics: { queryJson: async () => [] },
    log: () => undefined,
    ...deps,
  });
}

async function serve(config: ApiConfigOverrides = {}, deps: Partial<Omit<ApiDeps, 'config'>> = {}) {
  const app = makeApp(config, deps);
  // Always on loopback, whatever host the config names: the config's host is what the auth rule reads.
  const server = createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  closers.push(() => {
    app.closeStreams();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

// ------------------------------------------------------------------------------------- the app's routes

interface RouterLayer {
  readonly route?: { readonly path: string | RegExp | ReadonlyArray<string | RegExp>; readonly methods: Readonly<Record<string, boolean>> };
  readonly handle: { readonly stack?: readonly RouterLayer[] };
  /** The path given to use()/route() (router 2.x); '/' for use() without one. */
  readonly rawPath?: string | RegExp | ReadonlyArray<string | RegExp>;
}

interface AppRoutes {
  /** `GET /v1/runs/{runId}/curve`: every method registered on a path, OpenAPI-style. */
  readonly operations: Set<string>;
  /** Paths with an all() handler (the 405 fallback). */
  readonly fallbacks: Set<string>;
  /** Where plain middleware (static files) is mounted, other than '/'. */
  readonly mounts: Set<string>;
}

function pathsOf(raw: RouterLayer['rawPath'], what: string): string[] {
  const paths = [raw ?? '/'].flat();
  for (const path of paths) if (typeof path !== 'string') throw new Error(`${what} is a RegExp (${String(path)}): the comparison cannot name it`);
  return paths as string[];
}

/** `/v1/runs/:runId` → `/v1/runs/{runId}`; express 5's wildcards and optional groups cannot be compared, so they throw. */
function openApiPath(prefix: string, path: string): string {
  const full = `${prefix}${path === '/' && prefix !== '' ? '' : path}` || '/';
  if (/[*{}()?+]/.test(full)) throw new Error(`route ${full}: wildcard or optional syntax; extend the comparison`);
  return full.replace(/:([A-Za-z_$][\w$]*)/g, '{$1}');
}

function walk(stack: readonly RouterLayer[], prefix: string, out: AppRoutes): void {
  for (const layer of stack) {
    if (layer.route) {
      for (const path of pathsOf(layer.route.path, 'a route path')) {
        const full = openApiPath(prefix, path);
        for (const [method, on] of Object.entries(layer.route.methods)) {
          if (!on) continue;
          if (method === '_all') out.fallbacks.add(full);
          else out.operations.add(`${method.toUpperCase()} ${full}`);
        }
      }
    } else if (Array.isArray(layer.handle.stack)) {
      for (const mount of pathsOf(layer.rawPath, 'a router mount path')) walk(layer.handle.stack, mount === '/' ? prefix : openApiPath(prefix, mount.replace(/\/$/, '')), out);
    } else {
      for (const mount of pathsOf(layer.rawPath, 'a middleware mount path')) if (mount !== '/') out.mounts.add(openApiPath(prefix, mount));
    }
  }
}

function appRoutes(app: Express): AppRoutes {
  const out: AppRoutes = { operations: new Set(), fallbacks: new Set(), mounts: new Set() };
  walk((app as unknown as { router: { stack: RouterLayer[] } }).router.stack, '', out);
  return out;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function documentOperations(document: Pick<OpenApiDocument, 'paths'>): Set<string> {
  const found = new Set<string>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) if ((item as Record<string, unknown>)[method] !== undefined) found.add(`${method.toUpperCase()} ${path}`);
  }
  return found;
}

/** Both directions, the dashboard's paths left out of the app's side. */
function compareRoutes(routes: AppRoutes, document: Pick<OpenApiDocument, 'paths'>): { notDocumented: string[]; notServed: string[] } {
  const api = [...routes.operations].filter((op) => !NON_API_PATHS.includes(op.slice(op.indexOf(' ') + 1)));
  const documented = documentOperations(document);
  return { notDocumented: api.filter((op) => !documented.has(op)).sort(), notServed: [...documented].filter((op) => !routes.operations.has(op)).sort() };
}

function operations(): Array<{ path: string; method: Method; op: Operation }> {
  return Object.entries(doc.paths).flatMap(([path, item]) => (Object.entries(item) as Array<[Method, Operation]>).map(([method, op]) => ({ path, method, op })));
}

const params = (op: Operation): Parameter[] => (op.parameters ?? []).map((p) => ('$ref' in p ? doc.components.parameters[String(p.$ref).split('/').pop()!]! : (p as Parameter)));

/** The path with each path parameter's example. */
function concrete(path: string, op: Operation): string {
  return path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(String(params(op).find((p) => p.name === name)?.example ?? 'x')));
}

// ------------------------------------------------------------------- a small JSON Schema check (the subset used)

function resolve(schema: Json): Json {
  const target = schema.$ref;
  if (typeof target !== 'string') return schema;
  const [, , kind, name] = target.split('/');
  const found = (doc.components as unknown as Record<string, Record<string, Json>>)[kind!]?.[name!];
  assert.ok(found, `unresolved ${target}`);
  return resolve(found);
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const TYPES: Record<string, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  number: (v) => typeof v === 'number',
  integer: (v) => Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  null: (v) => v === null,
  array: Array.isArray,
  object: isObject,
};

function check(raw: Json, value: unknown, at: string, errors: string[]): void {
  const schema = resolve(raw);
  const sub = (s: Json, v: unknown) => {
    const e: string[] = [];
    check(s, v, at, e);
    return e.length === 0;
  };
  if (Array.isArray(schema.anyOf) && !(schema.anyOf as Json[]).some((s) => sub(s, value))) errors.push(`${at}: matches no anyOf branch`);
  if (Array.isArray(schema.oneOf) && (schema.oneOf as Json[]).filter((s) => sub(s, value)).length !== 1) errors.push(`${at}: does not match exactly one oneOf branch`);
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => e === value)) errors.push(`${at}: ${JSON.stringify(value)} is not in the enum`);
  if (schema.type !== undefined) {
    const types = [schema.type].flat() as string[];
    if (!types.some((t) => TYPES[t]!(value))) {
      errors.push(`${at}: ${JSON.stringify(value)?.slice(0, 60)} is not ${types.join(' or ')}`);
      return;
    }
  }
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) errors.push(`${at}: below ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) errors.push(`${at}: above ${schema.maximum}`);
  }
  if (typeof value === 'string' && typeof schema.pattern === 'string' && !new RegExp(schema.pattern, 'u').test(value)) errors.push(`${at}: does not match ${schema.pattern}`);
  if (Array.isArray(value) && isObject(schema.items)) value.forEach((item, i) => check(schema.items as Json, item, `${at}[${i}]`, errors));
  if (isObject(value)) {
    const properties = (schema.properties ?? {}) as Record<string, Json>;
    for (const name of (schema.required ?? []) as string[]) if (!(name in value)) errors.push(`${at}: lacks ${name}`);
    for (const [name, v] of Object.entries(value)) {
      if (properties[name]) check(properties[name], v, `${at}.${name}`, errors);
      else if (schema.additionalProperties === false && schema.properties) errors.push(`${at}: has ${name}, not in the schema`);
      else if (isObject(schema.additionalProperties)) check(schema.additionalProperties as Json, v, `${at}.${name}`, errors);
    }
  }
}

/** The response is documented (status and media type) and its JSON body fits the schema; returns the body. */
async function conforms(op: Operation, what: string, response: Response): Promise<unknown> {
  const documented = op.responses[String(response.status)];
  assert.ok(documented, `${what}: status ${response.status} is not documented`);
  const spec = resolve(documented as Json);
  const mediaType = (response.headers.get('content-type') ?? '').split(';')[0]!;
  const content = (spec.content ?? {}) as Record<string, { schema: Json }>;
  assert.ok(content[mediaType], `${what}: ${response.status} ${mediaType} is not documented (${Object.keys(content).join(', ')})`);
  const body: unknown = await response.json();
  const errors: string[] = [];
  check(content[mediaType]!.schema, body, 'body', errors);
  assert.deepEqual(errors, [], `${what}: ${response.status} does not fit the schema: ${JSON.stringify(body).slice(0, 300)}`);
  return body;
}

function opOf(method: Method, path: string): Operation {
  const op = doc.paths[path]?.[method];
  assert.ok(op, `${method.toUpperCase()} ${path} is documented`);
  return op;
}

// --------------------------------------------------------------------------------------------------- tests

test('GET /openapi.json serves the document as application/json, and it is valid OpenAPI 3.1 (swagger-parser)', async () => {
  const url = await serve();
  const response = await fetch(`${url}/openapi.json`);
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type')?.split(';')[0], 'application/json');
  const served = (await response.json()) as OpenApiDocument;
  assert.deepEqual(served, JSON.parse(JSON.stringify(doc)));
  assert.equal(served.openapi, '3.1.0');
  // validate() dereferences in place: it gets a copy.
  await SwaggerParser.validate(structuredClone(served) as never);
  const wrong = await fetch(`${url}/openapi.json`, { method: 'PUT' });
  assert.equal(wrong.status, 405);
});

test('the document has exactly the routes the express app registers (the dashboard aside)', () => {
  const routes = appRoutes(makeApp());
  const { notDocumented, notServed } = compareRoutes(routes, doc);
  assert.deepEqual(notDocumented, [], `routes the app serves that the document lacks: ${notDocumented.join(', ')}`);
  assert.deepEqual(notServed, [], `operations of the document that the app does not serve: ${notServed.join(', ')}`);
  // The exclusions are real (a renamed dashboard path would otherwise hide a route), and nothing else is mounted.
  const served = new Set([...[...routes.operations].map((op) => op.slice(op.indexOf(' ') + 1)), ...routes.mounts]);
  for (const path of NON_API_PATHS) assert.ok(served.has(path), `${path} is excluded as the dashboard's, but the app does not serve it`);
  assert.deepEqual(
    [...routes.mounts].filter((m) => !NON_API_PATHS.includes(m)),
    [],
    'middleware mounted on a path is outside the comparison',
  );
  assert.ok(routes.operations.has('GET /v1/runs/{runId}/trajectories/{episodeId}') && routes.operations.has('GET /openapi.json'));
  // The 405 fallback (router.all) and the documented 405 go together.
  for (const { path, method, op } of operations()) {
    assert.equal('405' in op.responses, routes.fallbacks.has(path), `${method.toUpperCase()} ${path}: 405 documented iff the path has a fallback`);
  }
});

test('the comparison fails when the document lacks a route, has one too many, or the app grows a route', () => {
  const routes = appRoutes(makeApp());
  const { '/v1/lag': _dropped, ...fewer } = doc.paths;
  assert.deepEqual(compareRoutes(routes, { paths: fewer }), { notDocumented: ['GET /v1/lag'], notServed: [] });
  const more = { ...doc.paths, '/v1/nothing/{id}': { get: opOf('get', '/v1/lag') } };
  assert.deepEqual(compareRoutes(routes, { paths: more }), { notDocumented: [], notServed: ['GET /v1/nothing/{id}'] });
  const grown = makeApp(
    {},
    {
      mount: (app) => {
        app.delete('/v1/runs/:runId', (_req, res) => void res.end());
        const nested = express.Router();
        nested.get('/inner/:thingId', (_req, res) => void res.end());
        app.use('/v1/outer', nested);
      },
    },
  );
  assert.deepEqual(compareRoutes(appRoutes(grown), doc).notDocumented, ['DELETE /v1/runs/{runId}', 'GET /v1/outer/inner/{thingId}']);
});

test('each operation documents the query parameters its handler accepts, and the handler checks each of them', async () => {
  const url = await serve();
  for (const { path, op } of operations().filter((o) => o.method === 'get')) {
    const what = `GET ${path}`;
    const documented = params(op).filter((p) => p.in === 'query');
    const required = documented.filter((p) => p.required).map((p) => `${p.name}=${encodeURIComponent(String(p.example))}`);
    // An unknown parameter: the handler's 400 lists what it takes; handlers that read no query ignore it.
    const response = await fetch(`${url}${concrete(path, op)}?${[...required, 'zzUnknown=1'].join('&')}`);
    if (response.status === 400) {
      const body = (await conforms(op, what, response)) as { field: string; detail: string };
      assert.equal(body.field, 'zzUnknown', what);
      const takes = /this endpoint takes (.*)$/.exec(body.detail)?.[1];
      assert.ok(takes, `${what}: ${body.detail}`);
      assert.deepEqual(documented.map((p) => p.name).sort(), takes === 'none' ? [] : takes.split(', ').sort(), `${what}: documented vs. accepted query parameters`);
    } else {
      await response.body?.cancel();
      assert.deepEqual(documented, [], `${what} ignores the query but documents parameters`);
    }
    // Each documented parameter, given a value its schema refuses, is a 400 naming it (not an unknown-parameter 400).
    for (const p of documented) {
      const schema = p.schema as { type?: string; enum?: unknown[]; items?: { enum?: unknown[] } };
      // A list of ids (runIds) refuses a space; a list from an enumeration, a name outside it.
      const bad = schema.type === 'array' ? (schema.items?.enum ? 'nope' : 'has space') : schema.enum ? 'nope' : schema.type === 'string' ? 'has space' : 'x1';
      const rest = required.filter((r) => !r.startsWith(`${p.name}=`));
      const refused = await fetch(`${url}${concrete(path, op)}?${[...rest, `${p.name}=${encodeURIComponent(bad)}`].join('&')}`);
      const body = (await conforms(op, `${what}?${p.name}=${bad}`, refused)) as { status: number; field: string; detail: string };
      assert.equal(body.status, 400, `${what}?${p.name}=${bad}`);
      assert.equal(body.field, p.name, `${what}?${p.name}=${bad}: ${body.detail}`);
      assert.doesNotMatch(body.detail, /unknown parameter/, what);
    }
  }
});

test('security matches the server: beyond loopback every secured operation needs the token; on loopback only writes do', async () => {
  const exposed = await serve({ host: '0.0.0.0', tokens: [TOKEN] });
  const local = await serve({ tokens: [TOKEN] });
  const kinds = new Set<string>();
  for (const { path, method, op } of operations()) {
    const kind = op.security.length === 0 ? 'open' : op.security.some((s) => Object.keys(s).length === 0) ? 'read' : 'write';
    kinds.add(kind);
    assert.ok(
      op.security.every((s) => Object.keys(s).every((name) => name in doc.components.securitySchemes)),
      `${path}: security names a scheme`,
    );
    for (const [url, needs] of [
      [exposed, kind !== 'open'],
      [local, kind === 'write'],
    ] as const) {
      const what = `${method.toUpperCase()} ${path} (${url === exposed ? 'exposed' : 'loopback'}, ${kind})`;
      const response = await fetch(`${url}${concrete(path, op)}`, { method: method.toUpperCase() });
      if (needs) {
        assert.equal(response.status, 401, what);
        assert.match(response.headers.get('www-authenticate') ?? '', /^Bearer realm="trajflow"/, what);
        await conforms(op, what, response);
        const forbidden = await fetch(`${url}${concrete(path, op)}`, { method: method.toUpperCase(), headers: { authorization: `Bearer ${'d'.repeat(40)}` } });
        assert.equal(forbidden.status, 403, what);
        await conforms(op, what, forbidden);
      } else {
        assert.notEqual(response.status, 401, what);
        assert.notEqual(response.status, 403, what);
        if ((response.headers.get('content-type') ?? '').includes('json')) await conforms(op, what, response);
        else await response.body?.cancel();
      }
    }
  }
  assert.deepEqual([...kinds].sort(), ['open', 'read', 'write']);
});

/** One request over node:http (fetch cannot set Host), as a fetch Response for conforms(). */
function withHost(url: string, method: string, path: string, host: string): Promise<Response> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${url}${path}`, { method, headers: { host, connection: 'close' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(res.headers)) if (typeof value === 'string') headers.set(name, value);
        resolve(new Response(Buffer.concat(chunks), { status: res.statusCode!, headers }));
      });
    });
    req.on('error', reject);
    req.end();
  });
}

test('every operation documents the 403 a Host the server does not answer for gets (DNS rebinding), and the answer fits it', async () => {
  const url = await serve();
  for (const { path, method, op } of operations()) {
    const what = `${method.toUpperCase()} ${path} (Host evil.example)`;
    const body = (await conforms(op, what, await withHost(url, method.toUpperCase(), concrete(path, op), 'evil.example:18080'))) as { type: string; field: string };
    assert.equal(body.type, 'urn:trajflow:problem:host-not-allowed', what);
    assert.equal(body.field, 'Host', what);
  }
});

test('the JSON responses of the running app fit their schemas', async () => {
  const replays: string[] = [];
  const url = await serve(
    {},
    {
      lag: { report: async () => LAG },
      replay: async (_s, _p, replayId) => {
        replays.push(replayId);
        return { ...REPORT, replayId };
      },
    },
  );
  for (const { path, op } of operations().filter((o) => o.method === 'get' && o.path !== '/v1/events')) {
    const response = await fetch(`${url}${concrete(path, op)}`);
    await conforms(op, `GET ${path}`, response);
  }
  // 503 /health is the health report too; a ClickHouse failure on a read is the documented 503 problem.
  const failing = await serve(
    {},
    {
      probes: { kafka: async () => ({ ok: false, ms: 1, detail: 'down' }), clickhouse: async () => up },
      analytics: { queryJson: async () => Promise.reject(new ClickHouseError('connect ECONNREFUSED', null)) },
    },
  );
  assert.equal(((await conforms(opOf('get', '/health'), 'GET /health (Kafka down)', await fetch(`${failing}/health`))) as { status: string }).status, 'fail');
  const down = (await conforms(opOf('get', '/v1/runs'), 'GET /v1/runs (ClickHouse down)', await fetch(`${failing}/v1/runs`))) as { type: string };
  assert.equal(down.type, 'urn:trajflow:problem:clickhouse-unavailable');
  // Start a replay from the documented example, then read its state.
  const replay = opOf('post', '/v1/replay');
  const example = resolve((replay.requestBody as { content: Record<string, { schema: Json }> }).content['application/json']!.schema).example;
  const started = await fetch(`${url}/v1/replay`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(example) });
  assert.equal(started.status, 202);
  assert.equal(started.headers.get('location'), `/v1/replays/${replays[0]}`);
  await conforms(replay, 'POST /v1/replay', started);
  const state = (await conforms(opOf('get', '/v1/replays/{replayId}'), 'GET /v1/replays/{replayId}', await fetch(`${url}/v1/replays/${replays[0]}`))) as { status: string };
  assert.equal(state.status, 'done');
  // The event stream: documented media type, and the ready event first.
  const events = opOf('get', '/v1/events');
  const stream = await openSse(`${url}/v1/events?runId=frozenlake-s1&types=alert`);
  try {
    assert.equal(stream.status, 200);
    assert.ok(Object.keys(resolve(events.responses['200']!).content as object).includes(stream.headers.get('content-type')!.split(';')[0]!));
    await stream.next((e) => e.event === 'ready', 'the ready event');
  } finally {
    stream.close();
  }
});

// One stored row per list endpoint, as ClickHouse's JSON gives it: its nullable cells null (NaN, ±Infinity), so
// the views' nulls meet the schemas' nullability; the maps non-empty, so their value schemas are used too.
const T = 1_767_225_600_000;
const ROWS: Record<string, readonly object[]> = {
  '/v1/dead-letters': [
    {
      reason: 'invalid-value',
      detail: 'reward: must be finite',
      source_topic: 'http:/v1/steps',
      source_partition: -1,
      source_offset: -1,
      key_is_null: 1,
      key_hex: '',
      payload_bytes: 2,
      payload_head_hex: '7b7d',
      event_time_ms: T,
      kafka_topic: 'trajflow.dead-letters',
      kafka_partition: 0,
      kafka_offset: 7,
    },
  ] satisfies DeadLetterRow[],
  '/v1/runs': [
    {
      run_id: 'frozenlake-s1',
      env_name: '',
      env_version: '',
      first_event_time_ms: T,
      last_event_time_ms: T,
      step_events: 0,
      episodes: 0,
      trajectories: 0,
      successes: 0,
      batches: 0,
      learner_steps: 3,
      latest_policy_version: -1,
    },
  ] satisfies RunRow[],
  '/v1/runs/{runId}/rollout-stats': [
    {
      run_id: 'frozenlake-s1',
      scope: 'batch',
      batch_id: 'batch-0',
      group_id: '',
      groups: 8,
      trajectories: 64,
      reward_mean: null,
      reward_std: null,
      mean_in_group_reward_std: null,
      success_rate: null,
      pass_at_k_keys: ['1', '8'],
      pass_at_k_values: [0.5, null],
      pass_hat_k_keys: ['1'],
      pass_hat_k_values: [null],
      mean_length: null,
      invalid_action_rate: null,
      incomplete: 0,
      dropped_groups: 1,
      dropped_by_reason_keys: ['dynamic_sampling/zero-variance'],
      dropped_by_reason_values: [1],
      closed_by_keys: ['full', 'timeout'],
      closed_by_values: [7, 1],
      event_time_ms: T,
    },
  ] satisfies RolloutStatsRow[],
  '/v1/runs/{runId}/learner-metrics': [
    {
      step: 0,
      policy_version: 1,
      total_loss: null,
      policy_loss: null,
      kl_loss: null,
      entropy_loss: null,
      entropy: null,
      kl: null,
      clip_fraction: null,
      grad_norm_pre_clip: null,
      learning_rate: null,
      staleness_mean: null,
      staleness_max: null,
      duration_ms: null,
      tokens: 512,
      samples: 8,
      event_time_ms: T,
      clip_fraction_low: null,
      backend: 'cpu',
      metrics_keys: ['a'],
      metrics_values: [null],
      has_details: 1,
      non_finite: ['total_loss=nan'],
    },
  ] satisfies LearnerMetricsRow[],
  '/v1/runs/{runId}/alerts': [
    {
      alert_id: 'a-1',
      run_id: 'frozenlake-s1',
      kind: 'entropy_collapse',
      severity: 'warning',
      learner_step: 4,
      policy_version: 4,
      value: null,
      threshold: null,
      message: 'entropy fell',
      event_time_ms: T,
      evidence_keys: ['window'],
      evidence_values: [null],
    },
  ] satisfies AlertRow[],
  '/v1/runs/{runId}/evaluations': [
    {
      run_id: 'frozenlake-s1',
      policy_version: 2,
      trained_iteration: -1,
      env_steps: -1,
      env_name: 'FrozenLake',
      env_options: '{}',
      tasks: 16,
      greedy_success: null,
      mean_reward: null,
      mean_steps: null,
      random_success: null,
      duration_ms: null,
      event_time_ms: T,
    },
  ] satisfies EvaluationRow[],
  '/v1/runs/{runId}/trajectories': [
    {
      run_id: 'frozenlake-s1',
      env_name: 'FrozenLake',
      env_version: 'v1',
      group_id: 'group-0',
      episode_id: 'episode-0',
      outcome: 'terminated',
      step_count: 3,
      total_reward: null,
      success: 1,
      invalid_actions: 0,
      gap_count: 0,
      min_policy_version: 0,
      max_policy_version: 0,
      first_event_time_ms: T,
      last_event_time_ms: T,
      metrics_keys: ['iteration'],
      metrics_values: [0],
    },
  ] satisfies TrajectoryRow[],
};

test('rows with null cells come out as the schemas say (nullable where the views give null)', async () => {
  let rows: readonly object[] = [];
  const url = await serve({}, { analytics: { queryJson: async <R>() => rows as R[] } });
  for (const [path, stored] of Object.entries(ROWS)) {
    const op = opOf('get', path);
    rows = stored;
    const body = (await conforms(op, `GET ${path} (null cells)`, await fetch(`${url}${concrete(path, op)}`))) as { count: number };
    assert.equal(body.count, 1, path);
  }
});

test("ingest: the documented examples are accepted as JSON and as Avro; the step schema has the JSON reader's fields", async () => {
  const published: StepEvent[][] = [];
  const url = await serve({}, { steps: { publishAll: async (steps) => void published.push([...steps]) } });
  const op = opOf('post', '/v1/steps');
  const content = (op.requestBody as { content: Record<string, { schema: Json; examples?: Record<string, { value: unknown }> }> }).content;
  assert.deepEqual(Object.keys(content).sort(), ['application/json', 'application/vnd.trajflow.avro']);
  const examples = Object.values(content['application/json']!.examples ?? {});
  assert.ok(examples.length >= 2);
  for (const { value } of examples) {
    const errors: string[] = [];
    check(content['application/json']!.schema, value, 'example', errors);
    assert.deepEqual(errors, []);
    const response = await fetch(`${url}/v1/steps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(value) });
    await conforms(op, 'POST /v1/steps (JSON)', response);
  }
  const step = published[0]![0]!;
  const avro = await fetch(`${url}/v1/steps`, { method: 'POST', headers: { 'content-type': 'application/vnd.trajflow.avro' }, body: new Uint8Array(codec.encode('step', step)) });
  assert.equal(((await conforms(op, 'POST /v1/steps (Avro)', avro)) as { accepted: number }).accepted, 1);
  const stepSchema = doc.components.schemas.StepEvent as { properties: Record<string, Json>; required: string[] };
  assert.deepEqual(Object.keys(stepSchema.properties), [...stepFieldNames]);
  assert.deepEqual(
    stepSchema.required.filter((f) => ['observationTokenIds', 'stateKey', 'metrics', 'info'].includes(f)),
    [],
    'the fields the reader lets a client leave out',
  );
  // What the schema refuses, the server refuses: an unknown field, a positive log-prob.
  for (const bad of [
    { ...step, stateKye: 'x' },
    { ...step, actionLogProbs: step.actionLogProbs.map(() => 0.5) },
  ]) {
    const errors: string[] = [];
    check(content['application/json']!.schema, bad, 'bad', errors);
    assert.notDeepEqual(errors, []);
    const response = await fetch(`${url}/v1/steps`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(bad) });
    assert.equal(((await conforms(op, 'POST /v1/steps (bad)', response)) as { status: number }).status, 400);
  }
  await conforms(op, 'POST /v1/steps (text)', await fetch(`${url}/v1/steps`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' }));
});

test('docs/reference/http-api.md is the document rendered (else: node --import tsx scripts/docs-openapi.mjs)', () => {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/docs-openapi.mjs', '--check'], { cwd: root, encoding: 'utf8' });
  assert.equal(run.status, 0, `${run.stdout}${run.stderr}`);
});

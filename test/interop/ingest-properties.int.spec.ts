// Property (fast-check, real Kafka and ClickHouse): whatever a client sends, a step is either refused naming
// the field, or every consumer can read it and it is stored. ≥ 5,000 generated step events (schema-steps.ts:
// the odd steps of test/schemas/odd-steps.ts — lone surrogates, astral characters, NUL, long strings, ±1e39,
// subnormals, -0, NaN, ±Infinity, int and long limits, ids on both sides of the read API's grammar — and any
// field a newer step schema adds) go through each of two ways in, each with its own topics, ClickHouse
// database and sink (storage/sink, in process, as `trajflow sink` runs it):
//   * HTTP ingest: POST /v1/steps of the real API server, one step a request, 16 at a time (a batch is
//     refused whole and dead-lettered whole, so batching would say nothing about the other steps of a refused
//     batch and dead-letter each of them again and again), the step as JSON.stringify writes it;
//   * the SDK: StepPublisher.publish, 64 at a time, the step as generated.
// For every step, either
//   * it is refused: HTTP a 4xx whose problem names a field of the step (`field`), the SDK an InvalidEventError
//     naming one — a step over the event size limit is refused for its size (413, OversizeEventError); or
//   * it is accepted (202, or the broker's ack), and then its message on the topic is decoded by Apache Avro's
//     Java library and by Python's avro (one process each for all the messages: decoders.ts) to exactly the
//     values sent (avro-normalize.ts: floats as float32 holds them), and the sink stores it: the steps table has
//     its row, with its strings as sent.
// The counts go to the test's diagnostics. The seed is random unless TRAJFLOW_PROPERTY_SEED is set; a failure
// prints it, so it reproduces. TRAJFLOW_PROPERTY_STEPS sets the number of steps (default 5,000; at least 5,000
// is what the property promises).
import { after, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { lastValueFrom } from 'rxjs';
import { toArray } from 'rxjs/operators';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient, type ClickHouseHttp } from '../../infra/clickhouse/http.js';
import { InvalidEventError, OversizeEventError, SchemaRegistry, type StepEvent } from '../../schemas/index.js';
import { classifyDecodeError, connectBackbone, createKafka, createReplay, StepPublisher, type Backbone } from '../../streams/index.js';
import { startSink, type SinkHandle } from '../../storage/sink/sink.js';
import { loadApiConfig } from '../../api/config.js';
import { startHttpServer } from '../../api/server.js';
import { createApiServices } from '../../api/services.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { normalize, type Normalized } from './avro-normalize.js';
import { decodeStepLines, ensureDecoders, type Decoded } from './decoders.js';
import { distinctSteps, schemaSteps, stepIdentity } from './schema-steps.js';

const STEPS = Number(process.env.TRAJFLOW_PROPERTY_STEPS ?? 5000);
const SEED = Number(process.env.TRAJFLOW_PROPERTY_SEED ?? Math.floor(Math.random() * 2 ** 31));
const HTTP_CONCURRENCY = 16;
const SDK_CONCURRENCY = 64;

const base = loadConfig();
const registry = SchemaRegistry.fromSchemasDir();
const stepSchema = JSON.parse(registry.current('step').schema) as { fields: { name: string; type: never }[] } & Record<string, unknown>;
const FIELDS = new Set(stepSchema.fields.map((field) => field.name));

const prefixes: string[] = [];
const databases: string[] = [];
const closers: Array<() => Promise<void>> = [];
const tmp = mkdtempSync(join(tmpdir(), 'trajflow-ingest-properties-'));

after(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  const admin = createKafka(base, { clientId: 'test-ingest-properties-admin' }).admin();
  await admin.connect();
  const ours = (await admin.listTopics()).filter((t) => prefixes.some((p) => t.startsWith(`${p}.`)));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
  await admin.disconnect();
  const server = clickHouseClient(base, null);
  for (const database of databases) await server.exec(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
  rmSync(tmp, { recursive: true, force: true });
});

/** What became of one step: accepted, or refused naming `field` (undefined: refused for its size). */
type Verdict = { readonly accepted: true } | { readonly accepted: false; readonly field: string | undefined; readonly detail: string };

interface Lane {
  readonly config: TrajflowConfig;
  readonly backbone: Backbone;
  readonly sink: SinkHandle;
  readonly ch: ClickHouseHttp;
  readonly stepsTopic: string;
}

/** Own topics, database and sink, so what the lane reads back is exactly what it sent. */
async function openLane(name: string): Promise<Lane> {
  const database = `test_ingest_props_${name}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  databases.push(database);
  const config: TrajflowConfig = { ...base, topicPrefix: uniqueName(`ingest-props-${name}`), clickhouse: { ...base.clickhouse, database } };
  prefixes.push(config.topicPrefix);
  await ensureTopics(config);
  await applyMigrations(config);
  const backbone = await connectBackbone(config, { clientId: `test-ingest-properties-${name}` });
  closers.push(() => backbone.close());
  const sink = await startSink(backbone, { groupId: `${config.topicPrefix}.sink`, batchRows: 500, flushIntervalMs: 100, sessionTimeoutMs: 6000 });
  closers.push(() => sink.close({ drain: false }));
  return { config, backbone, sink, ch: clickHouseClient(config), stepsTopic: topicName(config, 'env.steps') };
}

/** `fn` over `items`, `width` at a time; results in the items' order. */
async function pool<T, R>(items: readonly T[], width: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!);
      }
    }),
  );
  return out;
}

/**
 * POST /v1/steps with node:http over kept-alive connections: on a busy 2-core machine the HTTP lane is bound by
 * its CPU share, and fetch (undici) cost more CPU per request than the server's whole handling of it.
 */
function postStep(agent: Agent, url: string, json: string): Promise<{ status: number; body: { field?: string; detail?: string; reason?: string } }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      `${url}/v1/steps`,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as { field?: string } }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(json);
  });
}

/** Every message of a topic now, as bytes. */
async function messagesOf(backbone: Backbone, topic: string): Promise<Buffer[]> {
  const replay = await createReplay(backbone.kafka, { topic, decode: (payload) => payload ?? Buffer.alloc(0), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((envelope) => envelope.value);
}

interface StoredStep {
  run_id: string;
  episode_id: string;
  step_index: number;
  event_id: string;
  env_name: string;
  env_version: string;
  observation: string;
  action: string;
  state_key: string | null;
  info_keys: string[];
  info_values: string[];
  metrics_keys: string[];
}

/** The strings of a step as the steps table holds them (the risky part: a repaired string would be U+FFFD). */
function storedStrings(step: StepEvent): Omit<StoredStep, 'run_id' | 'episode_id' | 'step_index' | 'event_id'> {
  const info = Object.entries(step.info).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    env_name: step.envName,
    env_version: step.envVersion,
    observation: step.observation,
    action: step.action,
    state_key: step.stateKey,
    info_keys: info.map(([key]) => key),
    info_values: info.map(([, value]) => value),
    metrics_keys: Object.keys(step.metrics).sort(),
  };
}

function sortedStored(row: StoredStep): ReturnType<typeof storedStrings> {
  const order = row.info_keys.map((_, i) => i).sort((a, b) => (row.info_keys[a]! < row.info_keys[b]! ? -1 : row.info_keys[a]! > row.info_keys[b]! ? 1 : 0));
  return {
    env_name: row.env_name,
    env_version: row.env_version,
    observation: row.observation,
    action: row.action,
    state_key: row.state_key,
    info_keys: order.map((i) => row.info_keys[i]!),
    info_values: order.map((i) => row.info_values[i]!),
    metrics_keys: [...row.metrics_keys].sort(),
  };
}

interface Report {
  lane: string;
  seed: number;
  generated: number;
  refused: number;
  refusedByField: Record<string, number>;
  accepted: number;
  onTopic: number;
  decodedByJava: number;
  decodedByPython: number;
  stored: number;
  acceptedButUnreadable: number;
  acceptedButLost: number;
  /** Sending, reading the topic back and decoding, waiting for the sink and reading ClickHouse. */
  seconds: { send: number; readAndDecode: number; store: number; total: number };
}

/** Checks every verdict and every accepted step (decoded, stored); returns the counts and the first failures. */
const seconds = (since: number): number => Math.round((performance.now() - since) / 100) / 10;

async function check(lane: Lane, name: string, sent: readonly StepEvent[], verdicts: readonly Verdict[], started: number): Promise<{ report: Report; failures: string[] }> {
  const sentAt = performance.now();
  const failures: string[] = [];
  const refusedByField: Record<string, number> = {};
  const accepted = new Map<string, StepEvent>();
  for (const [i, verdict] of verdicts.entries()) {
    if (verdict.accepted) {
      accepted.set(stepIdentity(sent[i]!), sent[i]!);
      continue;
    }
    const top = verdict.field === undefined ? 'size' : /^[A-Za-z]+/.exec(verdict.field)?.[0];
    if (top === undefined || (top !== 'size' && !FIELDS.has(top))) failures.push(`step ${i} refused without naming a field: ${verdict.field} ${verdict.detail}`);
    refusedByField[top ?? '?'] = (refusedByField[top ?? '?'] ?? 0) + 1;
  }
  // Decoded by Java and by Python, each message to the values of the step sent with its identity.
  const messages = await messagesOf(lane.backbone, lane.stepsTopic);
  const dir = mkdtempSync(join(tmp, `${name}-`));
  const { java, python } = await decodeStepLines(registry, messages, dir);
  const unreadable = new Set<number>();
  const decodedBy = (who: string, results: readonly Decoded[]): number => {
    let decoded = 0;
    const seen = new Set<string>();
    for (const [m, result] of results.entries()) {
      if ('error' in result) {
        unreadable.add(m);
        failures.push(`${who} could not decode message ${m}: ${result.error.slice(0, 300)}`);
        continue;
      }
      const value = result.value as Record<string, Normalized>;
      const identity = stepIdentity(value as unknown as StepEvent);
      const step = accepted.get(identity);
      if (step === undefined) failures.push(`${who}: message ${m} is no accepted step (${identity.slice(0, 200)})`);
      else if (seen.has(identity)) failures.push(`${who}: step ${identity.slice(0, 200)} is on the topic twice`);
      else if (!isDeepStrictEqual(value, normalize(stepSchema, step))) {
        unreadable.add(m);
        failures.push(`${who} read other values than were sent for ${identity.slice(0, 200)}`);
      } else decoded++;
      seen.add(identity);
    }
    return decoded;
  };
  const decodedByJava = decodedBy('Java', java);
  const decodedByPython = decodedBy('Python', python);
  const decodeSeconds = seconds(sentAt);
  // Stored: the sink wrote every accepted step, strings as sent. Read without FINAL: the generated event times
  // span centuries, so the steps table (partitioned by month) has a part per step or so, and FINAL's reader per
  // part went past ClickHouse's memory limit. A step the sink inserted twice is two equal rows.
  await waitFor(() => lane.sink.stats.stored >= messages.length, `${messages.length} steps stored`, 120_000, 100).catch(() => undefined);
  // And until ClickHouse shows them: in one CI run the rows of 56 of 561 steps were not yet read back right after the
  // sink counted them stored (not reproduced with the same seed); the check below still fails if they never come.
  const countRows = async (): Promise<number> => Number((await lane.ch.queryJson<{ n: string }>('SELECT count() AS n FROM steps'))[0]?.n ?? 0);
  await waitFor(async () => (await countRows()) >= messages.length, `${messages.length} step rows readable`, 60_000, 250).catch(() => undefined);
  const rows = await lane.ch.queryJson<StoredStep>(
    'SELECT run_id, episode_id, step_index, event_id, env_name, env_version, observation, action, state_key, info_keys, info_values, metrics_keys FROM steps',
  );
  const byIdentity = new Map<string, StoredStep[]>();
  for (const row of rows) {
    const identity = JSON.stringify([row.run_id, row.episode_id, Number(row.step_index), row.event_id]);
    byIdentity.set(identity, [...(byIdentity.get(identity) ?? []), row]);
  }
  let stored = 0;
  for (const [identity, step] of accepted) {
    const copies = byIdentity.get(identity) ?? [];
    if (copies.length === 0) failures.push(`accepted but not stored: ${identity.slice(0, 200)}`);
    else if (!copies.every((row) => isDeepStrictEqual(sortedStored(row), storedStrings(step))))
      failures.push(`stored with other strings than were sent: ${identity.slice(0, 200)}`);
    else stored++;
  }
  if (lane.sink.stats.deadLettered > 0) failures.push(`the sink dead-lettered ${lane.sink.stats.deadLettered} accepted step(s)`);
  const report: Report = {
    lane: name,
    seed: SEED,
    generated: sent.length,
    refused: verdicts.length - accepted.size,
    refusedByField,
    accepted: accepted.size,
    onTopic: messages.length,
    decodedByJava,
    decodedByPython,
    stored,
    acceptedButUnreadable: unreadable.size,
    acceptedButLost: accepted.size - stored + Math.max(0, accepted.size - messages.length),
    seconds: { send: Math.round((sentAt - started) / 100) / 10, readAndDecode: decodeSeconds, store: seconds(sentAt) - decodeSeconds, total: seconds(started) },
  };
  return { report, failures };
}

function assertProperty(t: TestContext, { report, failures }: { report: Report; failures: string[] }): void {
  t.diagnostic(JSON.stringify(report));
  assert.deepEqual(failures.slice(0, 10), [], `${failures.length} failure(s), seed ${SEED} (TRAJFLOW_PROPERTY_SEED=${SEED} reproduces)`);
  assert.ok(report.generated >= 5000 || process.env.TRAJFLOW_PROPERTY_STEPS !== undefined, 'at least 5,000 steps');
  assert.equal(report.onTopic, report.accepted, 'one message per accepted step, and no other');
  assert.equal(report.decodedByJava, report.accepted);
  assert.equal(report.decodedByPython, report.accepted);
  assert.equal(report.stored, report.accepted);
  assert.equal(report.acceptedButUnreadable, 0);
  assert.equal(report.acceptedButLost, 0);
  // Both outcomes common enough for the property to say something.
  assert.ok(report.accepted > report.generated / 20 && report.refused > report.generated / 20, JSON.stringify(report));
}

const steps = distinctSteps(schemaSteps(stepSchema), STEPS, SEED);

test(`property: ${STEPS} generated steps through HTTP ingest are refused naming a field, or decoded by Java and Python as sent and stored`, { timeout: 300_000 }, async (t) => {
  await ensureDecoders();
  const lane = await openLane('http');
  const services = createApiServices(lane.backbone);
  const server = await startHttpServer(loadApiConfig({ port: 0, rateLimit: { stepsPerSecond: 1_000_000, burst: 1_000_000 } }, {}), { ...services, log: () => undefined });
  closers.push(
    () => services.close(),
    () => server.close(),
  );
  const started = performance.now();
  // What a JSON client sends: -0 becomes 0, NaN and ±Infinity null (refused: JSON has no such numbers).
  const sent = steps.map((step) => JSON.parse(JSON.stringify(step)) as StepEvent);
  const agent = new Agent({ keepAlive: true, maxSockets: HTTP_CONCURRENCY });
  closers.push(async () => agent.destroy());
  const verdicts = await pool(sent, HTTP_CONCURRENCY, async (step): Promise<Verdict> => {
    const { status, body } = await postStep(agent, server.url, JSON.stringify(step));
    if (status === 202) return { accepted: true };
    assert.ok(status >= 400 && status < 500, `HTTP ${status}: ${body.detail}`);
    return { accepted: false, field: status === 413 && body.reason === 'oversize' ? undefined : (body.field ?? '(none)'), detail: body.detail ?? '' };
  });
  const result = await check(lane, 'http', sent, verdicts, started);
  // Each 400 also went to the dead-letter topic (a 413 carries no event it could keep).
  const deadLetters = (await messagesOf(lane.backbone, topicName(lane.config, 'deadletter'))).length;
  const refused400 = verdicts.filter((v) => !v.accepted && v.field !== undefined).length;
  assert.equal(deadLetters, refused400, 'every 400 dead-lettered');
  assertProperty(t, result);
});

test(`property: ${STEPS} generated steps through the SDK's StepPublisher are refused naming a field, or decoded by Java and Python as sent and stored`, {
  timeout: 300_000,
}, async (t) => {
  await ensureDecoders();
  const lane = await openLane('sdk');
  const publisher = new StepPublisher(lane.backbone.producer, lane.stepsTopic);
  const started = performance.now();
  const verdicts = await pool(steps, SDK_CONCURRENCY, async (step): Promise<Verdict> => {
    try {
      await publisher.publish(step);
      return { accepted: true };
    } catch (error) {
      if (error instanceof InvalidEventError) return { accepted: false, field: error.field, detail: error.message };
      if (error instanceof OversizeEventError) return { accepted: false, field: undefined, detail: error.message };
      throw error;
    }
  });
  assertProperty(t, await check(lane, 'sdk', steps, verdicts, started));
});

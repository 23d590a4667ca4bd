// The ClickHouse sink on real Kafka and ClickHouse. Each test has its own topic prefix, consumer group and
// ClickHouse database (migrations applied to it), so tests never see each other's events or rows.
//   1. every kind of event in → rows out, equal in number and content (and an undecodable payload ends up
//      as a dead letter row);
//   2. a sink process SIGKILLed mid-stream and a new sink started → every event stored exactly once as
//      seen through FINAL (no duplicates visible, no gaps), although the raw table may hold re-inserted copies;
//   3. ClickHouse unreachable (a proxy in front of the shared server drops every connection: the shared
//      server itself is never stopped) → nothing acked, consumption stops at maxInFlight; reachable again →
//      the sink catches up and every event is stored.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { applyMigrations } from '../../../infra/clickhouse/migrations.js';
import { clickHouseClient, type ClickHouseHttp } from '../../../infra/clickhouse/http.js';
import { ensureTopics } from '../../../infra/topics.js';
import { connectBackbone, type Backbone } from '../../../streams/index.js';
import type { EventName, EventTypes } from '../../../schemas/index.js';
import { makeStep, sampleEvents } from '../../../bench/load/events.js';
import { uniqueName, waitFor } from '../../helpers/kafka.js';
import { startSink } from '../../../storage/sink/sink.js';
import { eventRows, sinkTopics, tableKeys, type TableName } from '../../../storage/sink/rows.js';

const databases: string[] = [];
const closers: Array<() => Promise<void>> = [];

after(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  const server = clickHouseClient(loadConfig(), null);
  for (const database of databases) await server.exec(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
});

async function setup(name: string): Promise<{ config: TrajflowConfig; backbone: Backbone; ch: ClickHouseHttp; groupId: string }> {
  const base = loadConfig();
  const database = `test_sink_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  databases.push(database);
  const config: TrajflowConfig = { ...base, topicPrefix: uniqueName(name), clickhouse: { ...base.clickhouse, database } };
  await ensureTopics(config);
  await applyMigrations(config);
  const backbone = await connectBackbone(config, { clientId: `sink-test-${name}` });
  closers.push(() => backbone.close());
  return { config, backbone, ch: clickHouseClient(config), groupId: `${config.topicPrefix}.sink` };
}

const keyOf: { [N in EventName]: (value: EventTypes[N]) => string | Buffer | null } = {
  step: (v) => v.groupId,
  trajectory: (v) => v.groupId,
  sample: (v) => v.groupId,
  learner_step: (v) => v.runId,
  policy_version: (v) => v.runId,
  collapse_alert: (v) => v.runId,
  rollout_stats: (v) => v.runId,
  evaluation: (v) => v.runId,
  dead_letter: (v) => v.key,
};

async function publish<N extends EventName>(backbone: Backbone, event: N, values: readonly EventTypes[N][]): Promise<void> {
  const topic = topicName(backbone.config, sinkTopics[event]);
  await Promise.all(values.map((value) => backbone.producer.send(topic, event, value, keyOf[event](value))));
}

async function countFinal(ch: ClickHouseHttp, table: TableName): Promise<number> {
  const [row] = await ch.queryJson<{ n: number }>(`SELECT count() AS n FROM ${table} FINAL`);
  return Number(row!.n);
}

const FLOAT32_COLUMNS = new Set(['action_log_probs', 'advantages', 'behaviour_log_probs', 'step_advantages']);
const BINARY_COLUMNS = new Set(['key', 'payload']);

/** A row as compared: without its Kafka position (checked separately), Float32 columns rounded to float32. */
function comparable(row: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [column, value] of Object.entries(row)) {
    if (column === 'kafka_partition' || column === 'kafka_offset' || BINARY_COLUMNS.has(column)) continue;
    out[column] = FLOAT32_COLUMNS.has(column) ? (value as number[]).map((x) => Math.fround(Number(x))) : value;
  }
  return out;
}

const sortKey = (table: TableName) => (row: Record<string, unknown>) => JSON.stringify(tableKeys[table].map((column) => row[column]));

for (const transcodeWorker of [false, true]) {
  test(`every event kind in → rows out, equal in number and content (steps transcoded on the ${transcodeWorker ? 'worker' : 'main'} thread)`, { timeout: 60_000 }, async () => {
    const { backbone, ch, groupId, config } = await setup(transcodeWorker ? 'sink-content-worker' : 'sink-content');
    const s = sampleEvents;
    const events: { [N in EventName]: EventTypes[N][] } = {
      step: Array.from({ length: 300 }, (_, i) => makeStep({}, i)).concat([{ ...makeStep({}, 999), observationTokenIds: null, stateKey: null, metrics: {}, info: {} }]),
      trajectory: [0, 1, 2].map((i) => ({
        ...s.trajectory,
        episodeId: `episode-${i}`,
        outcome: i === 2 ? 'truncated' : 'terminated',
        metrics: i === 1 ? {} : s.trajectory.metrics,
      })),
      sample: [0, 1, 2].map((i) => ({ ...s.sample, sampleId: `sample-${i}`, stepAdvantages: i === 1 ? [0.5, -0.25] : null })),
      learner_step: [0, 1, 2].map((i) => ({ ...s.learner_step, step: 40 + i, policyVersion: 40 + i, clipFractionLow: i === 0 ? null : 0.02 })),
      policy_version: [0, 1, 2].map((i) => ({ ...s.policy_version, version: i, parentVersion: i === 0 ? null : i - 1 })),
      collapse_alert: [0, 1].map((i) => ({ ...s.collapse_alert, alertId: `alert-${i}` })),
      rollout_stats: [s.rollout_stats, { ...s.rollout_stats, scope: 'group', groupId: 'group-0', groups: 1, trajectories: 8 }],
      // Version 0 before any training (-1: no iteration, env steps unknown), then two trained versions.
      evaluation: [
        { ...s.evaluation, policyVersion: 0, trainedIteration: -1, envSteps: -1, greedySuccess: 0 },
        s.evaluation,
        { ...s.evaluation, policyVersion: 43, greedySuccess: 0.7 },
      ],
      dead_letter: [s.dead_letter, { ...s.dead_letter, key: null, sourceOffset: 7 }],
    };
    for (const event of Object.keys(events) as EventName[]) await publish(backbone, event, events[event] as never);
    // Bytes that are no event: the sink dead-letters them, and then stores that dead letter too.
    await backbone.producer.sendRaw(topicName(config, 'env.steps'), { key: 'group-x', value: Buffer.from('not avro at all') });

    const sink = await startSink(backbone, { groupId, batchRows: 64, flushIntervalMs: 50, includeSampleTokens: true, sessionTimeoutMs: 6000, transcodeWorker });
    closers.push(() => sink.close({ drain: false }));

    // Expected rows from the same mapping (its unit test checks it against the schema); Kafka positions apart.
    const expected = new Map<TableName, Record<string, unknown>[]>();
    for (const event of Object.keys(events) as EventName[]) {
      for (const value of events[event]) {
        for (const { table, row } of eventRows(event, value as never, { topic: topicName(config, sinkTopics[event]), partition: 0, offset: '0' }, { includeSampleTokens: true })) {
          expected.set(table, [...(expected.get(table) ?? []), row]);
        }
      }
    }
    const wantDeadLetters = events.dead_letter.length + 1;
    await waitFor(
      async () => {
        for (const [table, rows] of expected) if ((await countFinal(ch, table)) < (table === 'dead_letters' ? wantDeadLetters : rows.length)) return false;
        return true;
      },
      'every row in ClickHouse',
      40_000,
      100,
    );

    for (const [table, rows] of expected) {
      const stored = await ch.queryJson<Record<string, unknown>>(`SELECT * FROM ${table} FINAL`);
      if (table === 'dead_letters') {
        assert.equal(stored.length, wantDeadLetters);
        continue;
      }
      assert.equal(stored.length, rows.length, `${table}: as many rows as events`);
      const byKey = (list: Record<string, unknown>[]) => [...list].sort((a, b) => (sortKey(table)(a) < sortKey(table)(b) ? -1 : 1)).map(comparable);
      assert.deepEqual(byKey(stored), byKey(rows), `${table}: same content`);
      // Every row remembers a distinct Kafka position.
      const [positions] = await ch.queryJson<{ n: number }>(`SELECT uniqExact(kafka_partition, kafka_offset) AS n FROM ${table} FINAL`);
      assert.equal(Number(positions!.n), rows.length);
    }

    // Dead letters keep their bytes exactly; the undecodable payload got its reason.
    const letters = await ch.queryJson<{ reason: string; source_offset: number; key_hex: string; has_key: number; payload_hex: string }>(
      'SELECT reason, source_offset, isNotNull(key) AS has_key, hex(assumeNotNull(key)) AS key_hex, hex(payload) AS payload_hex FROM dead_letters FINAL ORDER BY source_topic, source_offset',
    );
    const hex = (b: Buffer | null) => (b === null ? '' : b.toString('hex').toUpperCase());
    const fromFixture = letters.filter((l) => l.reason === 'unknown-fingerprint');
    assert.deepEqual(
      fromFixture.map((l) => [l.source_offset, l.key_hex, l.has_key, l.payload_hex]),
      [
        [7, '', 0, hex(s.dead_letter.payload)],
        [18_204, hex(s.dead_letter.key), 1, hex(s.dead_letter.payload)],
      ],
    );
    const routed = letters.filter((l) => l.reason !== 'unknown-fingerprint');
    assert.equal(routed.length, 1);
    assert.equal(routed[0]!.reason, 'bad-marker');
    assert.equal(routed[0]!.payload_hex, Buffer.from('not avro at all').toString('hex').toUpperCase());

    await sink.close();
    assert.equal(sink.stats.deadLettered, 1);
    assert.equal(sink.stats.stored + sink.stats.deadLettered, sink.stats.events);
  });
}

const child = fileURLToPath(new URL('./sink-child.ts', import.meta.url));

function startChild(prefix: string, database: string, groupId: string) {
  const proc = spawn(process.execPath, ['--import', 'tsx', child, prefix, database, groupId], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stored = 0;
  createInterface({ input: proc.stdout }).on('line', (line) => {
    stored = (JSON.parse(line) as { stored: number }).stored;
  });
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  closers.push(async () => {
    proc.kill('SIGKILL');
    await exited;
  });
  return { proc, exited, stored: () => stored };
}

test('a sink SIGKILLed mid-stream and restarted stores every event once (count FINAL = events), no gaps', { timeout: 60_000 }, async () => {
  const { backbone, ch, groupId, config } = await setup('sink-crash');
  const total = 4000;
  const steps = Array.from({ length: total }, (_, i) => makeStep({ groupId: `group-${i % 37}` }, i));
  await publish(backbone, 'step', steps);

  const first = startChild(config.topicPrefix, config.clickhouse.database, groupId);
  const rawCount = async () => Number((await ch.queryJson<{ n: number }>('SELECT count() AS n FROM steps'))[0]!.n);
  // Past the first offset commits (every second), so the restart both skips committed events and re-reads some stored ones.
  await waitFor(async () => (await rawCount()) >= 1000 || first.stored() >= 1000, 'the first sink to store 1000 events', 30_000, 10);
  first.proc.kill('SIGKILL');
  await first.exited;
  const atKill = await rawCount();
  assert.ok(atKill < total, `killed mid-stream (${atKill} of ${total} rows inserted)`);

  // The restarted sink (here in this process) resumes from the committed offsets.
  const sink = await startSink(backbone, { groupId, batchRows: 500, flushIntervalMs: 50, sessionTimeoutMs: 6000 });
  closers.push(() => sink.close({ drain: false }));
  await waitFor(async () => (await countFinal(ch, 'steps')) >= total, `${total} distinct steps`, 45_000, 100);
  await sink.close();

  const [check] = await ch.queryJson<{ final: number; distinct: number; raw: number }>(
    `SELECT (SELECT count() FROM steps FINAL) AS final, (SELECT uniqExact(event_id) FROM steps) AS distinct, (SELECT count() FROM steps) AS raw`,
  );
  assert.equal(Number(check!.final), total, 'no duplicates visible through FINAL');
  assert.equal(Number(check!.distinct), total, 'no gaps: every event id is there');
  assert.ok(Number(check!.raw) >= total);
  const [grouped] = await ch.queryJson<{ n: number }>(
    'SELECT count() AS n FROM (SELECT run_id, episode_id, step_index, event_id FROM steps GROUP BY run_id, episode_id, step_index, event_id)',
  );
  assert.equal(Number(grouped!.n), total, 'GROUP BY the key agrees with FINAL');
  console.log(
    `# sink crash: ${atKill} rows inserted when killed, ${Number(check!.raw) - total} extra raw rows at the end (re-inserted copies not yet merged away; FINAL never shows them)`,
  );
});

/** An HTTP proxy to ClickHouse that can be switched off (every connection reset), standing in for an outage. */
async function switchableProxy(target: string): Promise<{ url: string; up: boolean; server: Server }> {
  const state = { up: false, url: '', server: null as unknown as Server };
  state.server = createServer((req, res) => {
    if (!state.up) {
      req.socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        try {
          const answer = await fetch(`${target}${req.url}`, { method: req.method ?? 'POST', body: req.method === 'GET' ? undefined : new Uint8Array(Buffer.concat(chunks)) });
          res.writeHead(answer.status, { 'content-type': 'text/plain' });
          res.end(Buffer.from(await answer.arrayBuffer()));
        } catch {
          req.socket.destroy();
        }
      })();
    });
  });
  await new Promise<void>((resolve) => state.server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}`;
  return state;
}

test('ClickHouse unreachable: nothing acked, consumption stops at maxInFlight; back again: catches up, nothing lost', { timeout: 60_000 }, async () => {
  const { backbone, ch, groupId, config } = await setup('sink-outage');
  const total = 3000;
  const maxInFlight = 500;
  await publish(
    backbone,
    'step',
    Array.from({ length: total }, (_, i) => makeStep({}, i)),
  );
  const proxy = await switchableProxy(config.clickhouse.url);
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        proxy.server.closeAllConnections();
        proxy.server.close(() => resolve());
      }),
  );

  const sink = await startSink(backbone, {
    groupId,
    batchRows: 100,
    flushIntervalMs: 50,
    maxInFlight,
    retryInitialMs: 20,
    retryMaxMs: 100,
    sessionTimeoutMs: 6000,
    clickhouse: { url: proxy.url, database: config.clickhouse.database },
  });
  closers.push(() => sink.close({ drain: false }));
  await waitFor(() => sink.consumer.stats.delivered >= maxInFlight && sink.stats.failedInserts >= 5, 'the sink to fill its in-flight window while inserts fail');
  const failuresBefore = sink.stats.failedInserts;
  await waitFor(() => sink.stats.failedInserts >= failuresBefore + 20, 'twenty more failed attempts');
  assert.equal(sink.consumer.stats.delivered, maxInFlight, 'consumption stopped at maxInFlight');
  assert.equal(sink.stats.stored, 0);
  assert.equal(sink.consumer.stats.acked, 0, 'nothing acked while ClickHouse is unreachable');
  assert.equal(await countFinal(ch, 'steps'), 0);

  proxy.up = true;
  await waitFor(async () => (await countFinal(ch, 'steps')) >= total, 'the sink to catch up', 40_000, 100);
  await sink.close();
  assert.equal(await countFinal(ch, 'steps'), total);
  const [distinct] = await ch.queryJson<{ n: number }>('SELECT uniqExact(event_id) AS n FROM steps');
  assert.equal(Number(distinct!.n), total);
  assert.equal(sink.stats.stored, total);
});

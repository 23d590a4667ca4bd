// The sink's inserts on the real ClickHouse: every table is written as RowBinary (no column type falls back
// to JSONEachRow), and what ClickHouse stores from it is exactly what it stores from JSONEachRow of the same
// rows, also for the awkward values: tabs, newlines, backslashes, quotes, NUL, unicode, NaN and infinities,
// nulls, empty maps and arrays, negative numbers, raw bytes ≥ 0x80. Steps transcoded from their Avro bytes
// (step-transcoder.ts) are stored exactly as their decoded rows.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { loadConfig, type TrajflowConfig } from '../../../core/config.js';
import { applyMigrations } from '../../../infra/clickhouse/migrations.js';
import { clickHouseClient } from '../../../infra/clickhouse/http.js';
import { Inserter, type SinkRow } from '../../../storage/sink/inserter.js';
import { eventRows, jsonEachRowBody, stepRows, tableKeys, type Row, type TableName } from '../../../storage/sink/rows.js';
import { StepChunks } from '../../../storage/sink/step-transcoder.js';
import { eventDecoder } from '../../../streams/event-consumer.js';
import { codec } from '../../schemas/helpers.js';
import type { EventName, EventTypes } from '../../../schemas/index.js';
import { makeStep, sampleEvents } from '../../../bench/load/events.js';

const databases: string[] = [];
after(async () => {
  const server = clickHouseClient(loadConfig(), null);
  for (const database of databases) await server.exec(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
});

async function scratch(label: string): Promise<TrajflowConfig> {
  const base = loadConfig();
  const database = `test_inserter_${label}_${randomBytes(3).toString('hex')}`;
  databases.push(database);
  const config = { ...base, clickhouse: { ...base.clickhouse, database } };
  await applyMigrations(config);
  return config;
}

const awkward = 'tab\there, new\nline, cr\r, back\\slash \\N, \'single\' "double", nul\0, unicode é ✓ 𝄞, \\t literal';
const s = sampleEvents;
const events: { [N in EventName]: EventTypes[N][] } = {
  step: [
    makeStep({}, 1),
    { ...makeStep({}, 2), observation: awkward, action: awkward, stateKey: awkward, info: { [awkward]: awkward, '': '' }, metrics: { a: NaN, b: Infinity, c: -Infinity, d: -0.5 } },
    { ...makeStep({}, 3), observationTokenIds: null, stateKey: null, metrics: {}, info: {}, actionTokenIds: [], actionLogProbs: [], reward: NaN },
    {
      ...makeStep({}, 4),
      actionTokenIds: [0, -1, 2_147_483_647, -2_147_483_648],
      actionLogProbs: [-Infinity, Math.fround(-1e-30), 0, NaN],
      reward: -Infinity,
      policyVersion: 2 ** 40,
    },
  ],
  trajectory: [
    s.trajectory,
    { ...s.trajectory, episodeId: awkward, outcome: 'truncated', totalReward: NaN, metrics: {} },
    { ...s.trajectory, episodeId: 'x', outcome: 'something-new' },
  ],
  sample: [s.sample, { ...s.sample, sampleId: 'other', stepAdvantages: [0.5, NaN], advantages: s.sample.advantages.map(() => Infinity) }],
  learner_step: [s.learner_step, { ...s.learner_step, step: 99, clipFractionLow: null, backend: awkward, kl: NaN }],
  policy_version: [s.policy_version, { ...s.policy_version, version: 7, parentVersion: null, weightsUri: awkward }],
  collapse_alert: [s.collapse_alert, { ...s.collapse_alert, alertId: 'a2', message: awkward, evidence: {} }],
  rollout_stats: [s.rollout_stats, { ...s.rollout_stats, scope: 'group', groupId: awkward, passAtK: {}, rewardStd: NaN }],
  evaluation: [
    s.evaluation,
    { ...s.evaluation, policyVersion: 0, trainedIteration: -1, envSteps: -1, envOptions: JSON.stringify({ note: awkward }), meanReward: -Infinity, durationMs: NaN },
  ],
  dead_letter: [s.dead_letter, { ...s.dead_letter, key: null, sourceOffset: 1, payload: Buffer.from([0xff, 0x00, 0x09, 0x0a, 0x5c, 0x27, 0x80, 0xc3]), detail: awkward }],
};

function rowsByTable(): Map<TableName, Row[]> {
  const tables = new Map<TableName, Row[]>();
  let offset = 0;
  for (const event of Object.keys(events) as EventName[]) {
    for (const value of events[event]) {
      for (const { table, row } of eventRows(event, value as never, { topic: 't', partition: 1, offset: String(2 ** 40 + offset++) }, { includeSampleTokens: true })) {
        tables.set(table, [...(tables.get(table) ?? []), row]);
      }
    }
  }
  return tables;
}

test('RowBinary for every table, stored exactly as JSONEachRow of the same rows is', { timeout: 60_000 }, async () => {
  const binary = await scratch('rb');
  const json = await scratch('json');
  const inserter = new Inserter(binary.clickhouse.url, binary.clickhouse.database, 30_000, new AbortController().signal);
  try {
    const tables = rowsByTable();
    assert.equal(tables.size, 14, 'rows for every table');
    for (const [table, rows] of tables) {
      const body = await inserter.encode(table, rows);
      assert.match(body.query, /FORMAT RowBinary$/, `${table} is written as RowBinary`);
      await inserter.insert(table, body);
      const jsonBody = jsonEachRowBody(rows);
      const response = await fetch(`${json.clickhouse.url}/?${new URLSearchParams({ database: json.clickhouse.database, query: `INSERT INTO ${table} FORMAT JSONEachRow` })}`, {
        method: 'POST',
        body: typeof jsonBody === 'string' ? jsonBody : new Uint8Array(jsonBody),
      });
      assert.equal(response.status, 200, await response.text());
    }
    for (const table of tables.keys()) {
      // TabSeparated output shows every byte (and NaN/inf) unambiguously; hex() for the binary columns too.
      const select = `SELECT * FROM ${table} ORDER BY ${tableKeys[table].join(', ')}, kafka_offset FORMAT TabSeparated`;
      const [fromBinary, fromJson] = await Promise.all([clickHouseClient(binary).query(select), clickHouseClient(json).query(select)]);
      assert.equal(fromBinary, fromJson, `${table}: same content`);
      assert.equal(fromBinary.split('\n').filter((l) => l !== '').length, tables.get(table)!.length, `${table}: every row`);
    }
    const [letter] = await clickHouseClient(binary).queryJson<{ h: string }>('SELECT hex(payload) AS h FROM dead_letters WHERE source_offset = 1');
    assert.equal(letter!.h, 'FF00090A5C2780C3');
    const [step] = await clickHouseClient(binary).queryJson<{ o: string; k: string }>(
      `SELECT observation AS o, state_key AS k FROM steps WHERE step_index = ${events.step[1]!.stepIndex} AND event_id = '${events.step[1]!.eventId}'`,
    );
    assert.equal(step!.o, awkward);
    assert.equal(step!.k, awkward);
  } finally {
    inserter.close();
  }
});

test('a failed insert makes the inserter ask for the columns again; ClickHouse down is a retriable error', { timeout: 30_000 }, async () => {
  const config = await scratch('alter');
  const ch = clickHouseClient(config);
  const inserter = new Inserter(config.clickhouse.url, config.clickhouse.database, 30_000, new AbortController().signal);
  try {
    const rows = rowsByTable().get('steps')!;
    const body = await inserter.encode('steps', rows); // column types cached
    await ch.exec('ALTER TABLE steps DROP COLUMN env_version');
    await assert.rejects(inserter.insert('steps', body), (error: Error) => error.name === 'ClickHouseError' && /env_version/.test(error.message));
    await ch.exec('ALTER TABLE steps ADD COLUMN env_version String AFTER env_name');
    await inserter.insert('steps', await inserter.encode('steps', rows));
    assert.equal(Number((await ch.query('SELECT count() FROM steps')).trim()), rows.length);
  } finally {
    inserter.close();
  }
  const down = new Inserter('http://127.0.0.1:9', config.clickhouse.database, 2_000, new AbortController().signal);
  await assert.rejects(
    down.encode('steps', rowsByTable().get('steps')!),
    (error: Error & { retriable?: boolean }) => error.name === 'ClickHouseError' && /not reachable/.test(error.message),
  );
  down.close();
});

test('steps transcoded from their Avro bytes: on the real table, stored exactly as their decoded rows; decoded when the types differ', { timeout: 60_000 }, async () => {
  const transcodedDb = await scratch('avro');
  const decodedDb = await scratch('decoded');
  const decodeStep = eventDecoder(codec, 'step');
  const chunks = new StepChunks(codec.registry.current('step').header, codec.maxEventBytes);
  const steps = [
    makeStep({}, 11),
    { ...makeStep({}, 12), observation: awkward, action: awkward, stateKey: awkward, info: { note: awkward, '': '' }, metrics: { a: NaN, b: Infinity, c: -Infinity, d: -0.5 } },
    { ...makeStep({}, 13), observationTokenIds: null, stateKey: null, metrics: {}, info: {}, actionTokenIds: [], actionLogProbs: [], reward: -0 },
    { ...makeStep({}, 14), actionTokenIds: [0, 2_147_483_647], actionLogProbs: [Math.fround(-1e-30), 0], policyVersion: 2 ** 40 },
  ];
  const sources = steps.map((_, i) => ({ topic: 'trajflow.env.steps', partition: i, offset: String(2 ** 40 + i) }));
  const avro = steps.map((step, i) => {
    const row = chunks.transcode(codec.encode('step', step), sources[i]!);
    assert.ok(row, `step ${i} is transcoded`);
    return row;
  });
  const select = `SELECT * FROM steps ORDER BY ${tableKeys.steps.join(', ')}, kafka_offset FORMAT TabSeparated`;
  const store = async (config: TrajflowConfig, rows: SinkRow[], transcodes = true) => {
    const inserter = new Inserter(config.clickhouse.url, config.clickhouse.database, 30_000, new AbortController().signal, decodeStep);
    try {
      assert.equal(inserter.transcodesSteps, false, 'not before the types are known');
      await inserter.prepare('steps');
      assert.equal(inserter.transcodesSteps, transcodes);
      const body = await inserter.encode('steps', rows);
      assert.match(body.query, /FORMAT RowBinary$/);
      await inserter.insert('steps', body);
    } finally {
      inserter.close();
    }
    return clickHouseClient(config).query(select);
  };
  const fromAvro = await store(transcodedDb, avro);
  const fromRows = await store(
    decodedDb,
    steps.map((step, i) => stepRows(decodeStep(codec.encode('step', step)), sources[i]!)[0]!.row),
  );
  assert.equal(fromAvro.split('\n').filter((l) => l !== '').length, steps.length);
  assert.equal(fromAvro, fromRows);
  // Rows of both kinds in one batch (a step of an older schema is decoded), and a table whose reward column
  // is another type: the inserter decodes the Avro steps instead of transcoding them.
  await clickHouseClient(transcodedDb).exec('TRUNCATE TABLE steps');
  await clickHouseClient(decodedDb).exec('TRUNCATE TABLE steps');
  const mixed: SinkRow[] = [avro[0]!, stepRows(decodeStep(avro[1]!.avro), sources[1]!)[0]!.row, avro[2]!, avro[3]!];
  assert.equal(await store(transcodedDb, mixed), fromRows);
  await clickHouseClient(decodedDb).exec('ALTER TABLE steps MODIFY COLUMN reward Float32');
  const stored = await store(decodedDb, avro, false);
  assert.equal(stored.split('\n').filter((l) => l !== '').length, steps.length);
  assert.equal(stored, fromRows, 'rewards here are exact in Float32 too');
});

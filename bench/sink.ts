// Sink throughput beside a raw HTTP insert of the same rows, in one run on one machine:
//  - sink: N step events already on the steps topic → `startSink` (consume, decode, map to rows, batch,
//    insert, ack) until every event is stored;
//  - raw: the same rows, built beforehand, inserted with plain JSONEachRow requests of 5,000 rows.
// Each side writes into a database of its own, dropped at the end.
import { randomUUID } from 'node:crypto';
import { loadConfig, topicName, type TrajflowConfig } from '../core/config.js';
import { clickHouseClient } from '../infra/clickhouse/http.js';
import { applyMigrations } from '../infra/clickhouse/migrations.js';
import { ensureTopics } from '../infra/topics.js';
import { eventRows, jsonEachRowBody } from '../analytics/sink/rows.js';
import { startSink } from '../analytics/sink/sink.js';
import { StepPublisher, type Backbone } from '../streams/index.js';
import { makeStep } from '../test/fixtures/events.js';

async function scratch(base: TrajflowConfig, label: string): Promise<TrajflowConfig> {
  const id = randomUUID().replaceAll('-', '').slice(0, 10);
  const config: TrajflowConfig = { ...base, topicPrefix: `bench.sink.${id}`, clickhouse: { ...base.clickhouse, database: `bench_${label}_${id}` } };
  await ensureTopics(config);
  await applyMigrations(config);
  return config;
}

export interface SinkBenchResult {
  readonly events: number;
  readonly sinkRowsPerSec: number;
  readonly rawRowsPerSec: number;
  readonly ratio: number;
}

export async function measureSink(backbone: Backbone, events: number, progress: (line: string) => void): Promise<SinkBenchResult> {
  const base = loadConfig();
  const sinkConfig = await scratch(base, 'sink');
  const rawConfig = await scratch(base, 'raw');
  try {
    const steps = Array.from({ length: events }, (_, i) => makeStep({ eventId: `bench-${i}`, groupId: `g${i % 64}`, stepIndex: i }, i));
    progress(`publishing ${events} step events`);
    await new StepPublisher(backbone.producer, topicName(sinkConfig, 'env.steps')).publishAll(steps);

    progress('raw JSONEachRow inserts');
    const rows = steps.flatMap((step, i) => eventRows('step', step, { topic: 'raw', partition: 0, offset: String(i) }).map((r) => r.row));
    const client = clickHouseClient(rawConfig);
    const rawStart = performance.now();
    for (let at = 0; at < rows.length; at += 5000) {
      const body = jsonEachRowBody(rows.slice(at, at + 5000));
      await fetchInsert(rawConfig, 'steps', body);
    }
    const rawRowsPerSec = rows.length / ((performance.now() - rawStart) / 1000);
    if (Number((await client.query('SELECT count() FROM steps')).trim()) !== rows.length) throw new Error('raw insert lost rows');

    progress('sink: Kafka → ClickHouse');
    const sinkStart = performance.now();
    const sink = await startSink({ ...backbone, config: sinkConfig }, { groupId: `bench-sink-${randomUUID()}`, events: ['step'], clickhouse: sinkConfig.clickhouse });
    while (sink.stats.stored < events) await new Promise((resolve) => setTimeout(resolve, 10));
    const sinkRowsPerSec = events / ((performance.now() - sinkStart) / 1000);
    await sink.close({ drain: false });
    return { events, sinkRowsPerSec, rawRowsPerSec, ratio: sinkRowsPerSec / rawRowsPerSec };
  } finally {
    for (const config of [sinkConfig, rawConfig]) await clickHouseClient(config, null).exec(`DROP DATABASE IF EXISTS ${config.clickhouse.database}`);
  }
}

async function fetchInsert(config: TrajflowConfig, table: string, body: string | Buffer): Promise<void> {
  const url = `${config.clickhouse.url}/?database=${config.clickhouse.database}&query=${encodeURIComponent(`INSERT INTO ${table} FORMAT JSONEachRow`)}`;
  const response = await fetch(url, { method: 'POST', body: typeof body === 'string' ? body : new Uint8Array(body) });
  if (!response.ok) throw new Error(`raw insert failed: ${response.status} ${await response.text()}`);
}

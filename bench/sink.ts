// Sink throughput beside a raw HTTP insert of the same rows, in one run on one machine, round by round:
//  - raw: the rows the sink writes (built beforehand from the events decoded from their Avro bytes, so the
//    values are the sink's), encoded and inserted exactly as the sink does (analytics/sink/inserter.ts:
//    RowBinary, `batchRows` per request, `insertsInFlight` requests at a time); clock from the first
//    encode to the last answer;
//  - sink: N step events already on the steps topic → `startSink` with the same batch size and in-flight
//    bound (consume, check and transcode each step into its row, batch, insert, ack) under a new consumer group; clock from the
//    group joined (joining is reported apart) to the last event stored and acked.
//  - read ceiling: the same topic read by a bare kafkajs consumer (same fetch settings as the sink's,
//    new group, bytes counted and dropped: no decode, no rows, no insert) — what any kafkajs consumer in one
//    process can read here, so the sink's rate is bounded by it whatever the insert path does.
// Rounds alternate which side runs first; the figures are the medians of the rounds. Each side writes into a
// database of its own (tables emptied between rounds), dropped at the end with the run's topics.
import { randomUUID } from 'node:crypto';
import { loadConfig, topicName, type TrajflowConfig } from '../core/config.js';
import { clickHouseClient } from '../infra/clickhouse/http.js';
import { applyMigrations } from '../infra/clickhouse/migrations.js';
import { ensureTopics } from '../infra/topics.js';
import { Inserter } from '../analytics/sink/inserter.js';
import { eventRows, type Row } from '../analytics/sink/rows.js';
import { startSink } from '../analytics/sink/sink.js';
import { eventDecoder, StepPublisher, type Backbone } from '../streams/index.js';
import { makeStep } from '../test/fixtures/events.js';

const BATCH_ROWS = 5000;
const INSERTS_IN_FLIGHT = 2;

export interface SinkBenchRound {
  readonly rawRowsPerSec: number;
  readonly sinkRowsPerSec: number;
  /** A bare kafkajs consumer reading the same events (no decode, no insert). */
  readonly readEventsPerSec: number;
  readonly ratio: number;
  /** startSink → consumer group joined (not in the sink's clock). */
  readonly joinMs: number;
}

export interface SinkBenchResult {
  readonly events: number;
  readonly format: string;
  readonly batchRows: number;
  readonly insertsInFlight: number;
  /** Medians over the rounds. */
  readonly sinkRowsPerSec: number;
  readonly rawRowsPerSec: number;
  readonly readEventsPerSec: number;
  readonly ratio: number;
  readonly rounds: readonly SinkBenchRound[];
}

const median = (xs: readonly number[]): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

async function database(base: TrajflowConfig, prefix: string, label: string): Promise<TrajflowConfig> {
  const config: TrajflowConfig = { ...base, topicPrefix: prefix, clickhouse: { ...base.clickhouse, database: `bench_${label}_${prefix.split('.').pop()}` } };
  await applyMigrations(config);
  return config;
}

/** The rows in `batchRows` requests, `insertsInFlight` at a time, as the sink sends them; rows/s. */
async function rawRound(config: TrajflowConfig, rows: readonly Row[]): Promise<number> {
  const inserter = new Inserter(config.clickhouse.url, config.clickhouse.database, 60_000, new AbortController().signal);
  try {
    await inserter.encode('steps', rows.slice(0, 1)); // column types asked before the clock (the sink asks once, at its first batch)
    const started = performance.now();
    let next = 0;
    const worker = async () => {
      while (next < rows.length) {
        const batch = rows.slice(next, (next += BATCH_ROWS));
        await inserter.insert('steps', await inserter.encode('steps', batch));
      }
    };
    await Promise.all(Array.from({ length: INSERTS_IN_FLIGHT }, worker));
    return rows.length / ((performance.now() - started) / 1000);
  } finally {
    inserter.close();
  }
}

async function sinkRound(backbone: Backbone, config: TrajflowConfig, events: number): Promise<{ rowsPerSec: number; joinMs: number }> {
  const created = performance.now();
  const sink = await startSink({ ...backbone, config }, {
    groupId: `bench-sink-${randomUUID()}`,
    events: ['step'],
    batchRows: BATCH_ROWS,
    insertsInFlight: INSERTS_IN_FLIGHT,
    clickhouse: config.clickhouse,
  });
  try {
    while (sink.consumer.stats.rebalances === 0) await tick();
    const joined = performance.now();
    while (sink.stats.stored < events) await tick();
    return { rowsPerSec: events / ((performance.now() - joined) / 1000), joinMs: joined - created };
  } finally {
    await sink.close({ drain: false });
  }
}

/** A bare kafkajs consumer (the sink consumer's fetch settings) reading `events` messages: events/s from the join. */
async function readRound(backbone: Backbone, config: TrajflowConfig, events: number): Promise<number> {
  const consumer = backbone.kafka.consumer({ groupId: `bench-read-${randomUUID()}`, maxWaitTimeInMs: 200, allowAutoTopicCreation: false });
  let joined = 0;
  let read = 0;
  let bytes = 0;
  consumer.on(consumer.events.GROUP_JOIN, () => void (joined = performance.now()));
  try {
    await consumer.connect();
    await consumer.subscribe({ topics: [topicName(config, 'env.steps')], fromBeginning: true });
    await consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        for (const message of batch.messages) bytes += message.value?.length ?? 0;
        read += batch.messages.length;
      },
    });
    while (read < events) await tick();
    if (bytes === 0) throw new Error('read no bytes');
    return events / ((performance.now() - joined) / 1000);
  } finally {
    await consumer.disconnect();
  }
}

export async function measureSink(backbone: Backbone, events: number, rounds: number, progress: (line: string) => void): Promise<SinkBenchResult> {
  const base = loadConfig();
  const prefix = `bench.sink.${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const sinkConfig = await database(base, prefix, 'sink');
  const rawConfig = await database(base, prefix, 'raw');
  await ensureTopics(sinkConfig);
  try {
    const steps = Array.from({ length: events }, (_, i) => makeStep({ eventId: `bench-${i}`, groupId: `g${i % 64}`, stepIndex: i }, i));
    progress(`publishing ${events} step events`);
    await new StepPublisher(backbone.producer, topicName(sinkConfig, 'env.steps')).publishAll(steps);
    // The values the sink sees are the decoded ones (Avro floats are float32): the raw side uses those too.
    const decode = eventDecoder(backbone.codec, 'step');
    const rows: Row[] = steps.flatMap((step, i) => eventRows('step', decode(backbone.codec.encode('step', step)), { topic: 'raw', partition: 0, offset: String(i) }).map((r) => r.row));

    const prober = new Inserter(rawConfig.clickhouse.url, rawConfig.clickhouse.database, 60_000, new AbortController().signal);
    const probe = await prober.encode('steps', rows.slice(0, 1)).finally(() => prober.close());
    const format = /FORMAT (\w+)$/.exec(probe.query)?.[1] ?? 'unknown';
    const results: SinkBenchRound[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const config of [sinkConfig, rawConfig]) await clickHouseClient(config).exec('TRUNCATE TABLE steps');
      let raw = 0;
      let read = 0;
      let sink = { rowsPerSec: 0, joinMs: 0 };
      for (const side of round % 2 === 0 ? ['raw', 'read', 'sink'] : ['sink', 'read', 'raw']) {
        progress(`round ${round + 1}/${rounds}: ${side}`);
        if (side === 'raw') raw = await rawRound(rawConfig, rows);
        else if (side === 'read') read = await readRound(backbone, sinkConfig, events);
        else sink = await sinkRound(backbone, sinkConfig, events);
      }
      for (const config of [sinkConfig, rawConfig]) {
        const stored = Number((await clickHouseClient(config).query('SELECT count() FROM steps')).trim());
        if (stored < rows.length) throw new Error(`${config.clickhouse.database}: ${stored} of ${rows.length} rows stored`);
      }
      results.push({ rawRowsPerSec: raw, sinkRowsPerSec: sink.rowsPerSec, readEventsPerSec: read, ratio: sink.rowsPerSec / raw, joinMs: sink.joinMs });
    }
    return {
      events,
      format,
      batchRows: BATCH_ROWS,
      insertsInFlight: INSERTS_IN_FLIGHT,
      sinkRowsPerSec: median(results.map((r) => r.sinkRowsPerSec)),
      rawRowsPerSec: median(results.map((r) => r.rawRowsPerSec)),
      readEventsPerSec: median(results.map((r) => r.readEventsPerSec)),
      ratio: median(results.map((r) => r.ratio)),
      rounds: results,
    };
  } finally {
    for (const config of [sinkConfig, rawConfig]) await clickHouseClient(config, null).exec(`DROP DATABASE IF EXISTS ${config.clickhouse.database}`);
    // Only the sink's consumer and this run's producer ever used these topics, and neither sends again.
    const admin = backbone.kafka.admin();
    await admin.connect();
    try {
      const topics = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
      await admin.deleteTopics({ topics }).catch(() => undefined);
    } finally {
      await admin.disconnect();
    }
  }
}

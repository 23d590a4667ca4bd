// Sink throughput beside a raw HTTP insert of the same rows, in one run on one machine, round by round
// (the sides are defined in bench/sink-rounds.ts):
//  - raw: the rows the sink writes, encoded and inserted as the sink does, clock from the first encode;
//  - sink: the step events on the steps topic → `startSink`, clock from the group join (reported apart) to
//    the last event stored and acked;
//  - read ceiling: a bare kafkajs consumer of the same events (no decode, no insert), so the sink's rate is
//    bounded by it whatever the insert path does.
// Each side of each round runs in a fresh process of its own (bench/sink-side.ts), as the sink runs in a
// deployment, so the collections of the side being measured never mark the benchmark's arrays of events and rows
// (what marking them cost: docs/results/sink.md). Rounds alternate which side runs first; the figures
// are the medians of the rounds. Each side writes into a database of its own (tables emptied between
// rounds), dropped at the end with the run's topics.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../core/config.js';
import { clickHouseClient } from '../infra/clickhouse/http.js';
import { applyMigrations } from '../infra/clickhouse/migrations.js';
import { ensureTopics } from '../infra/topics.js';
import { Inserter } from '../storage/sink/inserter.js';
import { StepPublisher, type Backbone } from '../streams/index.js';
import { SINK_DEFAULTS } from '../storage/sink/sink.js';
import { clickHouseCpuMs } from './server-cpu.js';
import { benchRows, benchSteps } from './sink-rounds.js';
import type { SideRequest, SideResult } from './sink-side.js';
import { clickHouseMicrosPerRow, roundFigures, sideOrder, sinkSummary, type Side, type SinkBenchResult, type SinkBenchRound } from './sink-figures.js';

async function database(base: TrajflowConfig, prefix: string, label: string): Promise<TrajflowConfig> {
  const config: TrajflowConfig = { ...base, topicPrefix: prefix, clickhouse: { ...base.clickhouse, database: `bench_${label}_${prefix.split('.').pop()}` } };
  await applyMigrations(config);
  return config;
}

const SIDE = fileURLToPath(new URL('./sink-side.ts', import.meta.url));

/** Runs one side in a fresh process; its last stdout line is the result. */
function runSide(request: SideRequest): Promise<SideResult> {
  // TRAJFLOW_BENCH_SIDE_NODE_ARGS: node flags for the side processes, e.g. `--cpu-prof --cpu-prof-dir=DIR`.
  const nodeArgs = (process.env.TRAJFLOW_BENCH_SIDE_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', SIDE, JSON.stringify(request)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => void (out += chunk.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      if (code === 0 && last.startsWith('{')) resolve(JSON.parse(last) as SideResult);
      else reject(new Error(`bench sink: the ${request.side} side exited with ${code}: ${out.trim().slice(-500)}`));
    });
  });
}

export async function measureSink(
  backbone: Backbone,
  events: number,
  rounds: number,
  progress: (line: string) => void,
  batchRows: number = SINK_DEFAULTS.batchRows,
  transcodeWorker = false,
): Promise<SinkBenchResult> {
  const base = loadConfig();
  const prefix = `bench.sink.${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  const sinkConfig = await database(base, prefix, 'sink');
  const rawConfig = await database(base, prefix, 'raw');
  await ensureTopics(sinkConfig);
  try {
    progress(`publishing ${events} step events`);
    await new StepPublisher(backbone.producer, topicName(sinkConfig, 'env.steps')).publishAll(benchSteps(events));
    const format = await insertFormat(rawConfig);
    const results: SinkBenchRound[] = [];
    for (let round = 0; round < rounds; round++) results.push(await measureRound({ base, sinkConfig, rawConfig, events, batchRows, transcodeWorker, progress }, round, rounds));
    return sinkSummary({ events, format, batchRows, transcodeWorker }, results);
  } finally {
    await dropRun(backbone, prefix, [sinkConfig, rawConfig]);
  }
}

/** The format the sink's inserter writes rows in (the raw side sends the same). */
async function insertFormat(rawConfig: TrajflowConfig): Promise<string> {
  const prober = new Inserter(rawConfig.clickhouse.url, rawConfig.clickhouse.database, 60_000, new AbortController().signal, undefined, rawConfig.clickhouse.credentials);
  const probe = await prober.encode('steps', benchRows(1)).finally(() => prober.close());
  return /FORMAT (\w+)$/.exec(probe.query)?.[1] ?? 'unknown';
}

interface SinkRun {
  readonly base: TrajflowConfig;
  readonly sinkConfig: TrajflowConfig;
  readonly rawConfig: TrajflowConfig;
  readonly events: number;
  readonly batchRows: number;
  readonly transcodeWorker: boolean;
  readonly progress: (line: string) => void;
}

/** One round: the tables emptied, each side in its own process in the round's order, and every row checked stored. */
async function measureRound(run: SinkRun, round: number, rounds: number): Promise<SinkBenchRound> {
  const { base, sinkConfig, rawConfig, events } = run;
  for (const config of [sinkConfig, rawConfig]) await clickHouseClient(config).exec('TRUNCATE TABLE steps');
  const sides: Partial<Record<Side, SideResult>> = {};
  const clickHouseMicros: Partial<Record<Side, number | null>> = {};
  for (const side of sideOrder(round)) {
    run.progress(`round ${round + 1}/${rounds}: ${side}`);
    const before = clickHouseCpuMs(base);
    sides[side] = await runSide({ side, config: side === 'raw' ? rawConfig : sinkConfig, events, batchRows: run.batchRows, transcodeWorker: run.transcodeWorker });
    clickHouseMicros[side] = clickHouseMicrosPerRow(before, clickHouseCpuMs(base), events);
  }
  for (const config of [sinkConfig, rawConfig]) {
    const stored = Number((await clickHouseClient(config).query('SELECT count() FROM steps')).trim());
    if (stored < events) throw new Error(`${config.clickhouse.database}: ${stored} of ${events} rows stored`);
  }
  return roundFigures(sides as Record<Side, SideResult>, clickHouseMicros);
}

/** Drops the run's databases and topics. */
async function dropRun(backbone: Backbone, prefix: string, configs: readonly TrajflowConfig[]): Promise<void> {
  for (const config of configs) await clickHouseClient(config, null).exec(`DROP DATABASE IF EXISTS ${config.clickhouse.database}`);
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

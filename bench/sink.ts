// Sink throughput beside a raw HTTP insert of the same rows, in one run on one machine, round by round
// (the sides are defined in bench/sink-rounds.ts):
//  - raw: the rows the sink writes, encoded and inserted as the sink does, clock from the first encode;
//  - sink: the step events on the steps topic → `startSink`, clock from the group join (reported apart) to
//    the last event stored and acked;
//  - read ceiling: a bare kafkajs consumer of the same events (no decode, no insert), so the sink's rate is
//    bounded by it whatever the insert path does.
// Each side of each round runs in a fresh process of its own (bench/sink-side.ts), as the sink runs in a
// deployment: in one process the benchmark's arrays of 10⁵ events and rows (≈ 900 MB of heap) made every
// collection of the side being measured mark them too. Rounds alternate which side runs first; the figures
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
import { benchRows, benchSteps, INSERTS_IN_FLIGHT, WARM_UP_SHARE } from './sink-rounds.js';
import type { SideRequest, SideResult } from './sink-side.js';
import { median, medianOrNull } from './median.js';

export interface SinkBenchRound {
  /** Steady rates: from the first insert confirmed past WARM_UP_SHARE of the rows to the last (sink-rounds.ts). */
  readonly rawRowsPerSec: number;
  readonly sinkRowsPerSec: number;
  /** Over the whole side, warm-up included (the sink's clock from the group join). */
  readonly rawWholeRowsPerSec: number;
  readonly sinkWholeRowsPerSec: number;
  /** A bare kafkajs consumer reading the same events (no decode, no insert). */
  readonly readEventsPerSec: number;
  readonly ratio: number;
  /** startSink → consumer group joined (not in the sink's clock). */
  readonly joinMs: number;
  /** The sink's mean rows per insert (the raw side sends batchRows each). */
  readonly sinkRowsPerInsert: number;
  /** Event-loop utilisation of each side's main thread over its clock window (1 = never waited). */
  readonly rawEventLoopUtilization: number;
  readonly sinkEventLoopUtilization: number;
  /** CPU per row of the side's own process (clock window), µs. */
  readonly rawCpuMicrosPerRow: number;
  readonly sinkCpuMicrosPerRow: number;
  /** CPU per event of the bare kafkajs reader (group join to last event), µs: what kafkajs' fetch costs alone. */
  readonly readCpuMicrosPerEvent: number;
  /** ClickHouse's CPU per row while each side ran (its whole process lifetime, merges included), µs; null when trajflow did not start ClickHouse. */
  readonly clickHouseMicrosPerRowRaw: number | null;
  readonly clickHouseMicrosPerRowSink: number | null;
}

export interface SinkBenchResult {
  readonly events: number;
  readonly format: string;
  readonly batchRows: number;
  /** Whether the sink transcoded steps on its worker thread. */
  readonly transcodeWorker: boolean;
  readonly insertsInFlight: number;
  /** Medians over the rounds. */
  readonly sinkRowsPerSec: number;
  readonly rawRowsPerSec: number;
  readonly readEventsPerSec: number;
  readonly ratio: number;
  /** The same over whole sides (medians). */
  readonly sinkWholeRowsPerSec: number;
  readonly rawWholeRowsPerSec: number;
  readonly wholeRatio: number;
  readonly warmUpShare: number;
  /** Medians of the rounds' CPU figures (see SinkBenchRound). */
  readonly rawCpuMicrosPerRow: number;
  readonly sinkCpuMicrosPerRow: number;
  readonly readCpuMicrosPerEvent: number;
  readonly clickHouseMicrosPerRowRaw: number | null;
  readonly clickHouseMicrosPerRowSink: number | null;
  readonly rounds: readonly SinkBenchRound[];
}

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
    const prober = new Inserter(rawConfig.clickhouse.url, rawConfig.clickhouse.database, 60_000, new AbortController().signal, undefined, rawConfig.clickhouse.credentials);
    const probe = await prober.encode('steps', benchRows(1)).finally(() => prober.close());
    const format = /FORMAT (\w+)$/.exec(probe.query)?.[1] ?? 'unknown';
    const results: SinkBenchRound[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const config of [sinkConfig, rawConfig]) await clickHouseClient(config).exec('TRUNCATE TABLE steps');
      const sides: Partial<Record<SideRequest['side'], SideResult>> = {};
      const clickHouseMicros: Partial<Record<SideRequest['side'], number | null>> = {};
      for (const side of round % 2 === 0 ? (['raw', 'read', 'sink'] as const) : (['sink', 'read', 'raw'] as const)) {
        progress(`round ${round + 1}/${rounds}: ${side}`);
        const before = clickHouseCpuMs(base);
        sides[side] = await runSide({ side, config: side === 'raw' ? rawConfig : sinkConfig, events, batchRows, transcodeWorker });
        const after = clickHouseCpuMs(base);
        clickHouseMicros[side] = before === null || after === null ? null : ((after - before) * 1000) / events;
      }
      const { raw, read, sink } = sides as Record<SideRequest['side'], SideResult>;
      for (const config of [sinkConfig, rawConfig]) {
        const stored = Number((await clickHouseClient(config).query('SELECT count() FROM steps')).trim());
        if (stored < events) throw new Error(`${config.clickhouse.database}: ${stored} of ${events} rows stored`);
      }
      results.push({
        rawRowsPerSec: raw.steady,
        sinkRowsPerSec: sink.steady,
        rawWholeRowsPerSec: raw.whole,
        sinkWholeRowsPerSec: sink.whole,
        readEventsPerSec: read.whole,
        ratio: sink.steady / raw.steady,
        joinMs: sink.joinMs,
        sinkRowsPerInsert: sink.rowsPerInsert,
        rawEventLoopUtilization: raw.eventLoopUtilization,
        sinkEventLoopUtilization: sink.eventLoopUtilization,
        rawCpuMicrosPerRow: raw.cpuMicrosPerRow,
        sinkCpuMicrosPerRow: sink.cpuMicrosPerRow,
        readCpuMicrosPerEvent: read.cpuMicrosPerRow,
        clickHouseMicrosPerRowRaw: clickHouseMicros.raw ?? null,
        clickHouseMicrosPerRowSink: clickHouseMicros.sink ?? null,
      });
    }
    return {
      events,
      format,
      batchRows,
      transcodeWorker,
      insertsInFlight: INSERTS_IN_FLIGHT,
      sinkRowsPerSec: median(results.map((r) => r.sinkRowsPerSec)),
      rawRowsPerSec: median(results.map((r) => r.rawRowsPerSec)),
      readEventsPerSec: median(results.map((r) => r.readEventsPerSec)),
      ratio: median(results.map((r) => r.ratio)),
      sinkWholeRowsPerSec: median(results.map((r) => r.sinkWholeRowsPerSec)),
      rawWholeRowsPerSec: median(results.map((r) => r.rawWholeRowsPerSec)),
      wholeRatio: median(results.map((r) => r.sinkWholeRowsPerSec / r.rawWholeRowsPerSec)),
      warmUpShare: WARM_UP_SHARE,
      rawCpuMicrosPerRow: median(results.map((r) => r.rawCpuMicrosPerRow)),
      sinkCpuMicrosPerRow: median(results.map((r) => r.sinkCpuMicrosPerRow)),
      readCpuMicrosPerEvent: median(results.map((r) => r.readCpuMicrosPerEvent)),
      clickHouseMicrosPerRowRaw: medianOrNull(results.map((r) => r.clickHouseMicrosPerRowRaw)),
      clickHouseMicrosPerRowSink: medianOrNull(results.map((r) => r.clickHouseMicrosPerRowSink)),
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

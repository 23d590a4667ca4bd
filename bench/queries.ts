// `trajflow bench queries [--rows 10000000] [--runs 20] [--repeat 5] [--keep] [--json]`: the dashboard's read
// queries over a large, realistic ClickHouse database, timed through the real HTTP API (target < 1 s each).
//
//  1. Data: into a database of its own (`<configured database>_bench_queries`, migrations applied), generated
//     server-side by INSERT … SELECT … FROM numbers(N) (bench/queries-data.ts): --rows step rows over --runs
//     runs with their trajectories, samples, rollout stats, learner steps, policy versions, alerts and dead
//     letters. A database kept by --keep with the same layout (and at most 7 days old) is reused.
//  2. The API in-process against that database (connectBackbone, createApiServices, startHttpServer on a free
//     port), and each read endpoint the web UI calls — with the UI's query strings — for a run in the middle,
//     --repeat times in turn: median and max wall time of request + JSON body, the rows in the response.
// The verdict (PASS/FAIL against 1,000 ms) is on the median; the exit code is 0 either way (a benchmark).
// With --json the last line is one JSON object with every figure.
import { cpus, loadavg } from 'node:os';
import { loadConfig, type TrajflowConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { ensureUp } from '../infra/up.js';
import { ClickHouseHttp, clickHouseClient } from '../infra/clickhouse/http.js';
import { applyMigrations } from '../infra/clickhouse/migrations.js';
import { loadApiConfig } from '../api/config.js';
import { startHttpServer } from '../api/server.js';
import { createApiServices } from '../api/services.js';
import { connectBackbone } from '../streams/index.js';
import { fmt, option } from './args.js';
import { DEAD_LETTERS, GROUP_SIZE, generate, deadLettersSql, layoutKey, planLayout, type Layout, type TableTiming } from './queries-data.js';
import { endpoints, TARGET_MS, timeEndpoints, type EndpointResult } from './queries-endpoints.js';
import { emitResult } from './results-file.js';

const META_TABLE = 'bench_queries_meta';
/** A kept database older than this is regenerated (its times would fall out of the dashboard's windows). */
const REUSE_MAX_AGE_MS = 7 * 86_400_000;
/** ClickHouse statements of the generator may run for minutes on a loaded machine. */
const GENERATE_TIMEOUT_MS = 30 * 60_000;
/** Longest wait for background merges after generating, before timing. */
const MERGE_WAIT_MS = 10 * 60_000;

export interface QueriesBenchOptions {
  readonly rows: number;
  readonly runs: number;
  readonly repeat: number;
  /** Keep the database afterwards (a rerun with the same --rows and --runs reuses it). */
  readonly keep: boolean;
  /** Default: `<configured database>_bench_queries`. */
  readonly database?: string;
  /** Default: loadConfig(). */
  readonly config?: TrajflowConfig;
  readonly progress?: (line: string) => void;
}

export interface QueriesBenchResult {
  readonly database: string;
  readonly clickhouseVersion: string;
  readonly layout: Pick<Layout, 'requestedRows' | 'runs' | 'groupsPerRun' | 'batchesPerRun' | 'steps' | 'episodes'>;
  readonly generation: { readonly reused: boolean; readonly ms: number; readonly tables: TableTiming[]; readonly mergeWaitMs: number };
  readonly parts: Array<{ table: string; parts: number; rows: number; bytesOnDisk: number }>;
  readonly runId: string;
  readonly episodeId: string;
  readonly repeat: number;
  readonly targetMs: number;
  readonly endpoints: EndpointResult[];
  readonly serverErrors: string[];
}

interface Meta {
  layout: string;
  generated_at_ms: number;
  generation_ms: number;
}

/** The kept database's layout, when it is complete (the meta row is written last). */
async function readMeta(client: ClickHouseHttp, database: string): Promise<Meta | null> {
  const tables = await client.withDatabase(undefined).queryJson<{ n: number }>(`SELECT count() AS n FROM system.tables WHERE database = '${database}' AND name = '${META_TABLE}'`);
  if (Number(tables[0]?.n ?? 0) === 0) return null;
  const rows = await client.queryJson<Meta>(`SELECT layout, generated_at_ms, generation_ms FROM ${META_TABLE} ORDER BY generated_at_ms DESC LIMIT 1`);
  return rows[0] ?? null;
}

async function waitForMerges(client: ClickHouseHttp, database: string, progress: (line: string) => void): Promise<number> {
  const start = performance.now();
  let reported = 0;
  for (;;) {
    const [row] = await client.queryJson<{ n: number }>(`SELECT count() AS n FROM system.merges WHERE database = '${database}'`);
    const merging = Number(row?.n ?? 0);
    const waited = performance.now() - start;
    if (merging === 0 || waited > MERGE_WAIT_MS) return waited;
    if (waited - reported > 15_000) {
      progress(`waiting for ${merging} background merge(s) to finish (${(waited / 1000).toFixed(0)} s)`);
      reported = waited;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Makes sure `database` holds the layout's data: reuses a kept one, or (re)generates it. */
async function prepare(config: TrajflowConfig, layout: Layout, progress: (line: string) => void): Promise<{ reused: boolean; ms: number; tables: TableTiming[]; layout: Layout }> {
  const database = config.clickhouse.database;
  const client = new ClickHouseHttp({ url: config.clickhouse.url, database, timeoutMs: GENERATE_TIMEOUT_MS, credentials: config.clickhouse.credentials });
  const meta = await readMeta(client, database);
  if (meta !== null && meta.layout === layoutKey(layout) && layout.nowMs - Number(meta.generated_at_ms) < REUSE_MAX_AGE_MS) {
    const steps = Number((await client.query('SELECT count() FROM steps')).trim());
    if (steps >= layout.steps) {
      progress(
        `reusing ${database}: ${fmt(steps)} step rows generated ${((layout.nowMs - Number(meta.generated_at_ms)) / 3_600_000).toFixed(1)} h ago in ${(Number(meta.generation_ms) / 1000).toFixed(0)} s`,
      );
      // A database kept from before a new migration gets it (0004 fills samples_by_episode from samples).
      await applyMigrations(config, { log: progress });
      // The data is anchored to its generation time; the dead letters must be within the last day.
      return { reused: true, ms: 0, tables: [], layout: planLayout(layout.requestedRows, layout.runs, Number(meta.generated_at_ms)) };
    }
  }
  if (meta !== null || (await databaseExists(client, database))) {
    progress(`dropping ${database} (another layout, too old, or incomplete)`);
    await client.withDatabase(undefined).exec(`DROP DATABASE IF EXISTS ${database}`);
  }
  await applyMigrations(config);
  progress(`generating ${fmt(layout.steps)} step rows over ${layout.runs} runs (${fmt(layout.episodes)} episodes, ${fmt(layout.batchesPerRun)} batches a run) in ${database}`);
  const start = performance.now();
  const tables = await generate(client, layout, progress);
  const ms = performance.now() - start;
  await client.exec(`CREATE TABLE IF NOT EXISTS ${META_TABLE} (layout String, generated_at_ms Int64, generation_ms Float64) ENGINE = TinyLog`);
  await client.exec(`INSERT INTO ${META_TABLE} (layout, generated_at_ms, generation_ms) SELECT '${layoutKey(layout)}', ${layout.nowMs}, ${ms.toFixed(0)}`);
  return { reused: false, ms, tables, layout };
}

async function databaseExists(client: ClickHouseHttp, database: string): Promise<boolean> {
  const [row] = await client.withDatabase(undefined).queryJson<{ n: number }>(`SELECT count() AS n FROM system.databases WHERE name = '${database}'`);
  return Number(row?.n ?? 0) > 0;
}

/** Dead letters within the last 20 hours (the dead-letters page shows the last day), added when missing. */
async function freshDeadLetters(client: ClickHouseHttp, nowMs: number): Promise<void> {
  const [row] = await client.queryJson<{ recent: number; next: number }>(
    `SELECT countIf(event_time_ms >= ${nowMs - 20 * 3_600_000}) AS recent, max(kafka_offset) + 1 AS next FROM dead_letters`,
  );
  if (Number(row?.recent ?? 0) >= DEAD_LETTERS) return;
  await client.exec(deadLettersSql(nowMs, Number(row?.next ?? 0)));
}

export async function measureQueries(options: QueriesBenchOptions): Promise<QueriesBenchResult> {
  const progress = options.progress ?? (() => undefined);
  const base = options.config ?? loadConfig();
  const database = options.database ?? `${base.clickhouse.database}_bench_queries`;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) throw new ConfigError(`bench queries: the database name '${database}' must be a plain identifier.`);
  const config: TrajflowConfig = { ...base, clickhouse: { ...base.clickhouse, database } };
  const client = clickHouseClient(config);
  const clickhouseVersion = (await client.withDatabase(undefined).query('SELECT version()')).trim();
  try {
    return await prepareAndTime(config, clickhouseVersion, options, progress);
  } finally {
    // Also after a failure half-way through generating: a partial database is of no use.
    if (!options.keep) await client.withDatabase(undefined).exec(`DROP DATABASE IF EXISTS ${database}`);
  }
}

async function prepareAndTime(config: TrajflowConfig, clickhouseVersion: string, options: QueriesBenchOptions, progress: (line: string) => void): Promise<QueriesBenchResult> {
  const database = config.clickhouse.database;
  const client = clickHouseClient(config);
  const prepared = await prepare(config, planLayout(options.rows, options.runs, Date.now()), progress);
  const { layout } = prepared;
  await freshDeadLetters(client, Date.now());
  const mergeWaitMs = await waitForMerges(client, database, progress);
  const parts = await activeParts(client, database);
  const { runId, episodeId } = timedEpisode(layout);
  const serverErrors: string[] = [];
  const results = await withApiServer(config, serverErrors, (url) => {
    const list = endpoints(runId, episodeId);
    progress(`timing ${list.length} endpoints × ${options.repeat} against ${url} (run ${runId}, episode ${episodeId})`);
    return timeEndpoints(url, list, options.repeat);
  });
  return {
    database,
    clickhouseVersion,
    layout: layoutFigures(layout),
    generation: { reused: prepared.reused, ms: prepared.ms, tables: prepared.tables, mergeWaitMs },
    parts,
    runId,
    episodeId,
    repeat: options.repeat,
    targetMs: TARGET_MS,
    endpoints: results,
    serverErrors,
  };
}

/** The database's active parts per table. */
async function activeParts(client: ClickHouseHttp, database: string): Promise<QueriesBenchResult['parts']> {
  const rows = await client.queryJson<{ table: string; parts: number; rows: number; bytes: number }>(
    `SELECT table, count() AS parts, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts
       WHERE database = '${database}' AND active GROUP BY table ORDER BY table`,
  );
  return rows.map((p) => ({ table: p.table, parts: Number(p.parts), rows: Number(p.rows), bytesOnDisk: Number(p.bytes) }));
}

/** The run in the middle of the layout, and an episode in the middle of that run. */
export function timedEpisode(layout: Pick<Layout, 'runs' | 'runIds' | 'groupsPerRun'>): { runId: string; episodeId: string } {
  const middle = Math.floor(layout.runs / 2);
  const runId = layout.runIds[middle]!;
  return { runId, episodeId: `${runId}/g${Math.floor(layout.groupsPerRun / 2)}/e${GROUP_SIZE / 2 - 1}` };
}

/** The layout's figures the result reports. */
export function layoutFigures(layout: Layout): QueriesBenchResult['layout'] {
  const { requestedRows, runs, groupsPerRun, batchesPerRun, steps, episodes } = layout;
  return { requestedRows, runs, groupsPerRun, batchesPerRun, steps, episodes };
}

/** The API in-process against `config`'s database on a free port, for `use`; the server's log lines go to `serverErrors`. */
async function withApiServer<T>(config: TrajflowConfig, serverErrors: string[], use: (url: string) => Promise<T>): Promise<T> {
  const backbone = await connectBackbone(config, { clientId: 'trajflow-bench-queries' });
  const services = createApiServices(backbone);
  try {
    const server = await startHttpServer(loadApiConfig({ port: 0 }, {}), {
      ...services,
      log: (line, error) => serverErrors.push(`${line}${error instanceof Error ? `: ${error.message}` : ''}`),
    });
    try {
      return await use(server.url);
    } finally {
      await server.close(500);
    }
  } finally {
    await services.close();
    await backbone.close();
  }
}

const FLAGS_WITH_VALUE = new Set(['--rows', '--runs', '--repeat']);
const FLAGS = new Set(['--keep', '--json', '--save']);

const pad = (text: string, width: number, right = false): string => (right ? text.padStart(width) : text.padEnd(width));
const mib = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;

/** The CLI: args after `bench queries`. */
export async function runQueriesBench(args: string[]): Promise<number> {
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (FLAGS_WITH_VALUE.has(arg)) i++;
    else if (!FLAGS.has(arg))
      throw new ConfigError(`bench queries: unknown argument '${arg}'. usage: trajflow bench queries [--rows 10000000] [--runs 20] [--repeat 5] [--keep] [--json]`);
  }
  const rows = option(args, '--rows', 10_000_000);
  const runs = option(args, '--runs', 20);
  const repeat = option(args, '--repeat', 5);
  const config = loadConfig();
  await ensureUp(config);
  const machine = { cpus: cpus().length, cpuModel: cpus()[0]?.model ?? 'unknown', node: process.version, loadAverage1m: Math.round(loadavg()[0]! * 100) / 100 };
  const result = await measureQueries({ rows, runs, repeat, keep: args.includes('--keep'), config, progress: (line) => console.error(`bench: ${line}`) });
  const { layout, generation } = result;

  console.log(`machine: ${machine.cpus} × ${machine.cpuModel}, node ${machine.node}, ClickHouse ${result.clickhouseVersion}; load average ${machine.loadAverage1m} at start`);
  console.log(
    `data: ${fmt(layout.steps)} step rows, ${layout.runs} runs, ${fmt(layout.episodes)} episodes (groups of ${GROUP_SIZE}, 5–10 steps), ${fmt(layout.batchesPerRun)} batches a run; database ${result.database}`,
  );
  if (generation.reused) console.log('generation: reused the kept database');
  else {
    console.log(`generation: ${(generation.ms / 1000).toFixed(1)} s server-side (INSERT … SELECT FROM numbers)`);
    for (const t of generation.tables) console.log(`  ${pad(t.table, 24)} ${pad(fmt(t.rows), 12, true)} rows  ${pad((t.ms / 1000).toFixed(1), 7, true)} s`);
  }
  const steps = result.parts.find((p) => p.table === 'steps');
  if (steps) console.log(`steps table: ${steps.parts} active parts, ${mib(steps.bytesOnDisk)} on disk (waited ${(generation.mergeWaitMs / 1000).toFixed(0)} s for merges)`);
  console.log(
    `endpoints: run ${result.runId}, episode ${result.episodeId}; ${result.repeat} request${result.repeat === 1 ? '' : 's'} each, in turn; target < ${fmt(TARGET_MS)} ms (median)`,
  );
  const width = Math.max(...result.endpoints.map((e) => e.path.length)) + 6;
  console.log(`  ${pad('endpoint', width)}${pad('median ms', 11, true)}${pad('max ms', 9, true)}${pad('rows', 7, true)}  result`);
  for (const e of result.endpoints) {
    const status = e.statuses.every((s) => s === 200) ? '' : ` (HTTP ${[...new Set(e.statuses)].join(', ')})`;
    console.log(`  ${pad(`GET ${e.path}`, width)}${pad(fmt(e.medianMs), 11, true)}${pad(fmt(e.maxMs), 9, true)}${pad(fmt(e.rows), 7, true)}  ${e.pass ? 'PASS' : 'FAIL'}${status}`);
  }
  const failed = result.endpoints.filter((e) => !e.pass).length;
  console.log(
    failed === 0 ? `all ${result.endpoints.length} endpoints under ${fmt(TARGET_MS)} ms` : `${failed} of ${result.endpoints.length} endpoints missed ${fmt(TARGET_MS)} ms`,
  );
  for (const line of result.serverErrors) console.log(`server: ${line}`);
  if (args.includes('--keep')) console.log(`kept ${result.database}; a rerun with the same --rows and --runs reuses it`);
  emitResult(args, { bench: 'queries', machine, ...result });
  return 0;
}

// Starts, stops and reports the ClickHouse server trajflow runs for you: Debian's clickhouse-server with a
// project-local config, data under ${home}/clickhouse, logs in ${logDir}. It runs as whoever runs trajflow
// (root included: 18.16 needs no flag for that, and the data folder is owned by the same user).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, ServiceError } from '../../core/errors.js';
import type { TrajflowConfig } from '../../core/config.js';
import { ensureProcess, stopProcess, type ManagedProcess } from '../managed-process.js';
import { isAlive, livePid, removeFile, spawnDetached, stopProcessGroup, tail, waitUntil, writePidFile } from '../process.js';
import { renderConfigXml, renderUsersXml } from './config-xml.js';
import { clickHouseClient } from './http.js';
import { ensureClickHouse } from './install.js';

const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 30_000;

export interface ClickHousePaths {
  readonly dir: string;
  readonly configFile: string;
  readonly usersFile: string;
  readonly pidFile: string;
  readonly lockFile: string;
  readonly logFile: string;
  readonly errorLogFile: string;
  /** stdout/stderr of the process: errors before its logger starts (bad config) end up here. */
  readonly outputFile: string;
}

export function clickHousePaths(config: Pick<TrajflowConfig, 'home' | 'logDir'>): ClickHousePaths {
  const dir = join(config.home, 'clickhouse');
  return {
    dir,
    configFile: join(dir, 'config.xml'),
    usersFile: join(dir, 'users.xml'),
    pidFile: join(dir, 'clickhouse.pid'),
    lockFile: join(dir, '.lock'),
    logFile: join(config.logDir, 'clickhouse-server.log'),
    errorLogFile: join(config.logDir, 'clickhouse-server.err.log'),
    outputFile: join(config.logDir, 'clickhouse-server.out.log'),
  };
}

export interface ClickHouseStatus {
  readonly running: boolean;
  readonly pid: number | null;
  readonly url: string;
  /** The server's version() when it answers. */
  readonly version: string | null;
  readonly managed: boolean;
  readonly logFile: string | null;
}

export interface ClickHouseStartResult extends ClickHouseStatus {
  readonly reused: boolean;
  readonly elapsedMs: number;
}

async function serverVersion(config: TrajflowConfig): Promise<string | null> {
  try {
    return (await clickHouseClient(config, null).query('SELECT version()')).trim();
  } catch (error) {
    if (error instanceof ConfigError) throw error; // a refused login: /ping needs none, so this is where it shows
    return null;
  }
}

export async function clickHouseStatus(config: TrajflowConfig): Promise<ClickHouseStatus> {
  const paths = clickHousePaths(config);
  const running = await clickHouseClient(config, null).ping();
  return {
    running,
    pid: config.clickhouse.managed ? (livePid(paths.pidFile, paths.configFile) ?? null) : null,
    url: config.clickhouse.url,
    version: running ? await serverVersion(config) : null,
    managed: config.clickhouse.managed,
    logFile: config.clickhouse.managed ? paths.logFile : null,
  };
}

function writeConfigs(config: TrajflowConfig, paths: ClickHousePaths): void {
  for (const sub of ['data', 'tmp', 'user_files', 'format_schemas']) mkdirSync(join(paths.dir, sub), { recursive: true });
  mkdirSync(config.logDir, { recursive: true });
  writeFileSync(
    paths.configFile,
    renderConfigXml({
      dir: paths.dir,
      httpPort: config.clickhouse.httpPort,
      tcpPort: config.clickhouse.tcpPort,
      logFile: paths.logFile,
      errorLogFile: paths.errorLogFile,
      usersFile: paths.usersFile,
    }),
  );
  writeFileSync(paths.usersFile, renderUsersXml());
}

function logTails(paths: ClickHousePaths): string {
  return `--- ${paths.outputFile} (last lines) ---\n${tail(paths.outputFile, 10)}\n--- ${paths.errorLogFile} (last lines) ---\n${tail(paths.errorLogFile, 20)}`;
}

async function launch(config: TrajflowConfig, paths: ClickHousePaths, log: (line: string) => void): Promise<number> {
  const binary = await ensureClickHouse(log);
  writeConfigs(config, paths);
  const pid = spawnDetached({
    command: binary.command,
    // The pid file is written by us from the spawned pid: 18.16 ignores --pid-file (its option is --pidfile),
    // newer releases spell it --pid-file; our way works for both.
    args: [...binary.prefixArgs, `--config-file=${paths.configFile}`],
    cwd: paths.dir,
    outputFile: paths.outputFile,
  });
  writePidFile(paths.pidFile, pid);
  const client = clickHouseClient(config, null);
  const outcome = await waitUntil(() => client.ping(1000), {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 200,
    giveUp: () => (isAlive(pid) ? undefined : 'exited'),
  });
  if (outcome === 'ok') return pid;
  if (outcome === 'timeout') await stopProcessGroup(pid, 5000);
  removeFile(paths.pidFile);
  const what = outcome === 'exited' ? 'exited while starting' : `did not answer /ping within ${START_TIMEOUT_MS / 1000} s and was stopped`;
  throw new ServiceError(`ClickHouse (pid ${pid}) ${what}.\n${logTails(paths)}\nSee ${paths.errorLogFile} and ${paths.outputFile}.`, { retriable: outcome === 'timeout' });
}

/** Makes sure ClickHouse runs and answers /ping; same reuse/stale/port rules as startKafka. */
export async function startClickHouse(config: TrajflowConfig, log: (line: string) => void = () => undefined): Promise<ClickHouseStartResult> {
  const started = Date.now();
  const paths = clickHousePaths(config);
  const client = clickHouseClient(config, null);
  if (!config.clickhouse.managed) {
    if (!(await client.ping(5000))) {
      throw new ServiceError(
        `ClickHouse at TRAJFLOW_CLICKHOUSE_URL=${config.clickhouse.url} does not answer /ping: start it, or unset TRAJFLOW_CLICKHOUSE_URL to let trajflow run one.`,
        { retriable: true },
      );
    }
    return { ...(await clickHouseStatus(config)), reused: true, elapsedMs: Date.now() - started };
  }
  const { pid, reused } = await ensureProcess(clickHouseProcess(config, paths, log), log);
  return {
    running: true,
    pid,
    url: config.clickhouse.url,
    version: await serverVersion(config),
    managed: true,
    logFile: paths.logFile,
    reused,
    elapsedMs: Date.now() - started,
  };
}

/** Stops the server trajflow started (SIGTERM, then SIGKILL after 30 s). Data is kept. Resolves false if none ran. */
export async function stopClickHouse(config: TrajflowConfig): Promise<boolean> {
  if (!config.clickhouse.managed) return false;
  const paths = clickHousePaths(config);
  return stopProcess(clickHouseProcess(config, paths));
}

function clickHouseProcess(config: TrajflowConfig, paths: ClickHousePaths, log: (line: string) => void = () => undefined): ManagedProcess {
  const client = clickHouseClient(config, null);
  return {
    name: 'ClickHouse',
    pidFile: paths.pidFile,
    lockFile: paths.lockFile,
    marker: paths.configFile,
    ports: [
      { port: config.clickhouse.httpPort, setting: 'TRAJFLOW_CLICKHOUSE_HTTP_PORT' },
      { port: config.clickhouse.tcpPort, setting: 'TRAJFLOW_CLICKHOUSE_TCP_PORT' },
    ],
    externalHint: 'To use a server you already run, set TRAJFLOW_CLICKHOUSE_URL instead.',
    startTimeoutMs: START_TIMEOUT_MS,
    stopGraceMs: STOP_GRACE_MS,
    staleAfterMs: 5000,
    probe: () => client.ping(1000),
    launch: () => launch(config, paths, log),
  };
}

// Starts, stops and reports the single-node KRaft broker trajflow runs for you. Everything it writes lives
// under ${home}/kafka (config, data, pid file, cluster id) and ${logDir} (logs); the jars live in the cache.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, ServiceError } from '../../core/errors.js';
import type { TrajflowConfig } from '../../core/config.js';
import { ensureProcess, stopProcess, type ManagedProcess } from '../managed-process.js';
import { commandLine, isAlive, livePid, removeFile, spawnDetached, stopProcessGroup, tail, waitUntil, writePidFile } from '../process.js';
import { probeKafka } from './client.js';
import { fetchKafka, kafkaMajor } from './fetch.js';
import { brokerLogging } from './logging.js';
import { formatProperties, renderServerProperties } from './properties.js';
import { formatStorage, isFormatted } from './storage.js';

/** The main class in the broker's command line, used to recognise our process behind a pid. */
const MAIN_CLASS = 'kafka.Kafka';
const START_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 30_000;

export interface KafkaPaths {
  readonly dir: string;
  readonly serverProperties: string;
  readonly dataDir: string;
  /** The newest release that ran on dataDir: an older major is refused (Kafka upgrades its data, never back). */
  readonly dataVersionFile: string;
  readonly clusterIdFile: string;
  readonly pidFile: string;
  readonly lockFile: string;
  /** The broker's own log (log4j). */
  readonly logFile: string;
  /** The JVM's stdout/stderr: crashes before log4j starts end up here. */
  readonly outputFile: string;
}

export function kafkaPaths(config: Pick<TrajflowConfig, 'home' | 'logDir'>): KafkaPaths {
  const dir = join(config.home, 'kafka');
  return {
    dir,
    serverProperties: join(dir, 'server.properties'),
    dataDir: join(dir, 'data'),
    dataVersionFile: join(dir, 'data-version'),
    clusterIdFile: join(dir, 'cluster-id'),
    pidFile: join(dir, 'kafka.pid'),
    lockFile: join(dir, '.lock'),
    logFile: join(config.logDir, 'kafka.log'),
    outputFile: join(config.logDir, 'kafka.out.log'),
  };
}

export interface KafkaStatus {
  readonly running: boolean;
  /** Pid of the broker trajflow started, null when it runs elsewhere or not at all. */
  readonly pid: number | null;
  readonly brokers: string[];
  /** The running broker's release (from its command line), else the configured one; null for an external broker. */
  readonly version: string | null;
  readonly managed: boolean;
  readonly clusterId: string | null;
  readonly logFile: string | null;
}

export interface KafkaStartResult extends KafkaStatus {
  /** True when an already running broker was reused. */
  readonly reused: boolean;
  readonly elapsedMs: number;
}

export async function kafkaStatus(config: TrajflowConfig): Promise<KafkaStatus> {
  const paths = kafkaPaths(config);
  const info = await probeKafka(config, 3000);
  const pid = config.kafka.managed ? (livePid(paths.pidFile, MAIN_CLASS) ?? null) : null;
  return {
    running: info !== undefined,
    pid,
    brokers: config.kafka.brokers,
    version: config.kafka.managed ? ((pid !== null ? runningVersion(pid) : undefined) ?? config.kafka.version) : null,
    managed: config.kafka.managed,
    clusterId: info?.clusterId ?? null,
    logFile: config.kafka.managed ? paths.logFile : null,
  };
}

function javaCommand(): string {
  return process.env.JAVA_HOME ? join(process.env.JAVA_HOME, 'bin', 'java') : 'java';
}

/** The release a broker process runs, read from the jar folder on its command line (kafka-<version>/libs). */
export function runningVersion(pid: number): string | undefined {
  return /kafka-(\d+\.\d+\.\d+)[/\\]libs/.exec(commandLine(pid))?.[1];
}

/**
 * Refuses to start an older major on data a newer one ran on. A 4.x broker starts on data a 3.x broker formatted
 * (Kafka's upgrade path: its metadata.version stays until raised with kafka-features), so a home made before the
 * default moved to 4.x keeps its topics; going back is not a path Kafka supports.
 */
function checkDataVersion(paths: KafkaPaths, version: string): void {
  const before = existsSync(paths.dataVersionFile) ? readFileSync(paths.dataVersionFile, 'utf8').trim() : '';
  if (isFormatted(paths.dataDir) && /^\d+\.\d+\.\d+$/.test(before) && kafkaMajor(before) > kafkaMajor(version)) {
    throw new ConfigError(
      `TRAJFLOW_KAFKA_VERSION=${version}: Kafka ${before} already ran on ${paths.dataDir} and a ${kafkaMajor(version)}.x broker cannot read its data. Unset TRAJFLOW_KAFKA_VERSION (or set ${before}), use another TRAJFLOW_HOME, or delete ${paths.dataDir} (its topics are lost).`,
    );
  }
  if (!/^\d+\.\d+\.\d+$/.test(before) || kafkaMajor(before) <= kafkaMajor(version)) writeFileSync(paths.dataVersionFile, `${version}\n`);
}

/** Writes server.properties and the logging config (every start, so port changes take effect); returns the JVM's logging option. */
function writeConfigs(config: TrajflowConfig, paths: KafkaPaths, version: string): string {
  mkdirSync(paths.dir, { recursive: true });
  mkdirSync(config.logDir, { recursive: true });
  const properties = renderServerProperties({
    port: config.kafka.port,
    controllerPort: config.kafka.controllerPort,
    dataDir: paths.dataDir,
    logFile: paths.logFile,
  });
  writeFileSync(paths.serverProperties, formatProperties(properties, 'Generated by trajflow (infra/kafka/properties.ts); rewritten on every start.'));
  const logging = brokerLogging(version, paths.logFile);
  const loggingFile = join(paths.dir, logging.fileName);
  writeFileSync(loggingFile, logging.text);
  return logging.jvmOption(loggingFile);
}

function logTails(paths: KafkaPaths): string {
  return `--- ${paths.outputFile} (last lines) ---\n${tail(paths.outputFile, 15)}\n--- ${paths.logFile} (last lines) ---\n${tail(paths.logFile, 25)}`;
}

async function launch(config: TrajflowConfig, paths: KafkaPaths, log: (line: string) => void): Promise<number> {
  const dist = await fetchKafka(config, log);
  const loggingOption = writeConfigs(config, paths, dist.version);
  checkDataVersion(paths, dist.version);
  const java = javaCommand();
  await formatStorage({
    java,
    libs: dist.libs,
    serverProperties: paths.serverProperties,
    loggingOption,
    dataDir: paths.dataDir,
    clusterIdFile: paths.clusterIdFile,
  });
  const pid = spawnDetached({
    command: java,
    args: [
      '-Xms256m',
      '-Xmx1g',
      '-XX:+UseG1GC',
      '-XX:MaxGCPauseMillis=20',
      '-XX:InitiatingHeapOccupancyPercent=35',
      '-Djava.awt.headless=true',
      loggingOption,
      `-Dkafka.logs.dir=${config.logDir}`,
      '-cp',
      join(dist.libs, '*'),
      MAIN_CLASS,
      paths.serverProperties,
    ],
    cwd: paths.dir,
    outputFile: paths.outputFile,
  });
  writePidFile(paths.pidFile, pid);
  const outcome = await waitUntil(async () => (await probeKafka(config, 2000)) !== undefined, {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 300,
    giveUp: () => (isAlive(pid) ? undefined : 'exited'),
  });
  if (outcome === 'ok') return pid;
  if (outcome === 'timeout') await stopProcessGroup(pid, 5000);
  removeFile(paths.pidFile);
  const what = outcome === 'exited' ? 'exited while starting' : `did not answer within ${START_TIMEOUT_MS / 1000} s and was stopped`;
  throw new ServiceError(`the Kafka broker (pid ${pid}) ${what}.\n${logTails(paths)}\nSee ${paths.logFile} and ${paths.outputFile}.`, { retriable: outcome === 'timeout' });
}

/**
 * Makes sure the broker runs and answers. Reuses a live, answering broker from the pid file; replaces a stale
 * one (dead pid, or alive but not answering); refuses when another program holds the ports.
 */
export async function startKafka(config: TrajflowConfig, log: (line: string) => void = () => undefined): Promise<KafkaStartResult> {
  const started = Date.now();
  const paths = kafkaPaths(config);
  if (!config.kafka.managed) {
    const info = await probeKafka(config, 10_000);
    if (!info) {
      throw new ServiceError(
        `the Kafka broker at TRAJFLOW_KAFKA_BROKERS=${config.kafka.brokers.join(',')} does not answer: start it, or unset TRAJFLOW_KAFKA_BROKERS to let trajflow run one.`,
        { retriable: true },
      );
    }
    return { ...(await kafkaStatus(config)), reused: true, elapsedMs: Date.now() - started };
  }
  const { pid, reused } = await ensureProcess(kafkaProcess(config, paths, log), log);
  const info = await probeKafka(config, 5000);
  const version = runningVersion(pid) ?? config.kafka.version;
  if (version !== config.kafka.version) {
    log(`kafka: the running broker is Kafka ${version}, not the configured ${config.kafka.version}: 'trajflow down' then 'trajflow up' switches it (topics are kept)`);
  }
  return {
    running: info !== undefined,
    pid,
    brokers: config.kafka.brokers,
    version,
    managed: true,
    clusterId: info?.clusterId ?? null,
    logFile: paths.logFile,
    reused,
    elapsedMs: Date.now() - started,
  };
}

/** Stops the broker trajflow started (SIGTERM, then SIGKILL after 30 s). Data is kept. Resolves false if none ran. */
export async function stopKafka(config: TrajflowConfig): Promise<boolean> {
  if (!config.kafka.managed) return false;
  const paths = kafkaPaths(config);
  return stopProcess(kafkaProcess(config, paths));
}

function kafkaProcess(config: TrajflowConfig, paths: KafkaPaths, log: (line: string) => void = () => undefined): ManagedProcess {
  return {
    name: 'Kafka',
    pidFile: paths.pidFile,
    lockFile: paths.lockFile,
    marker: MAIN_CLASS,
    ports: [
      { port: config.kafka.port, setting: 'TRAJFLOW_KAFKA_PORT' },
      { port: config.kafka.controllerPort, setting: 'TRAJFLOW_KAFKA_CONTROLLER_PORT' },
    ],
    externalHint: 'To use a broker you already run, set TRAJFLOW_KAFKA_BROKERS instead.',
    startTimeoutMs: START_TIMEOUT_MS,
    stopGraceMs: STOP_GRACE_MS,
    // Alive: give it a moment in case it is still starting or busy, then treat it as stale.
    staleAfterMs: 10_000,
    probe: async () => (await probeKafka(config, 2000)) !== undefined,
    launch: () => launch(config, paths, log),
  };
}

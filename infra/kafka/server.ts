// Starts, stops and reports the KRaft broker trajflow runs for you — one, or a cluster of several on this machine
// (`trajflow up --brokers 3`). Everything it writes lives under ${home}/kafka (config, data, pid files, cluster id;
// nodes.ts) and ${logDir} (logs); the jars live in the cache.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, ServiceError } from '../../core/errors.js';
import type { TrajflowConfig } from '../../core/config.js';
import { ensureProcess, stopProcess, type ManagedProcess } from '../managed-process.js';
import { commandLine, isAlive, livePid, removeFile, spawnDetached, stopProcessGroup, tail, waitUntil, writePidFile } from '../process.js';
import { probeKafka } from './probe.js';
import { fetchKafka, kafkaMajor } from './fetch.js';
import { brokerLogging } from './logging.js';
import { formatProperties, renderServerProperties } from './properties.js';
import { kafkaNodes, kafkaPaths, nodePathsOnDisk, type KafkaNode, type KafkaPaths } from './nodes.js';
import { clusterId, formatStorage, isFormatted } from './storage.js';

export { kafkaNodes, kafkaPaths };

/** The main class in the broker's command line, used to recognise our process behind a pid. */
const MAIN_CLASS = 'kafka.Kafka';
const START_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 30_000;

export interface KafkaNodeStatus {
  readonly nodeId: number;
  readonly address: string;
  /** Pid of the node's JVM when it runs (from its pid file), else null. */
  readonly pid: number | null;
  /** Whether the node answers on its own address. */
  readonly running: boolean;
  readonly logFile: string;
}

export interface KafkaStatus {
  readonly running: boolean;
  /** Pid of the (first) broker trajflow started, null when it runs elsewhere or not at all. */
  readonly pid: number | null;
  readonly brokers: string[];
  /** The running broker's release (from its command line), else the configured one; null for an external broker. */
  readonly version: string | null;
  readonly managed: boolean;
  readonly clusterId: string | null;
  readonly logFile: string | null;
  /** Every node trajflow runs (one unless `up --brokers N`); empty for an external cluster. */
  readonly nodes: KafkaNodeStatus[];
}

export interface KafkaStartResult extends KafkaStatus {
  /** True when every node was already running and was reused. */
  readonly reused: boolean;
  readonly elapsedMs: number;
}

/** A config whose clients talk to one node only (to ask whether that node answers). */
function nodeOnly(config: TrajflowConfig, node: KafkaNode): TrajflowConfig {
  return { ...config, kafka: { ...config.kafka, brokers: [node.address] } };
}

async function nodeStatus(config: TrajflowConfig, node: KafkaNode): Promise<KafkaNodeStatus> {
  const pid = livePid(node.paths.pidFile, MAIN_CLASS) ?? null;
  const running = config.kafka.nodes === 1 ? pid !== null : pid !== null && (await probeKafka(nodeOnly(config, node), 3000)) !== undefined;
  return { nodeId: node.nodeId, address: node.address, pid, running, logFile: node.paths.logFile };
}

export async function kafkaStatus(config: TrajflowConfig): Promise<KafkaStatus> {
  const [info, nodes] = await Promise.all([probeKafka(config, 3000), config.kafka.managed ? Promise.all(kafkaNodes(config).map((n) => nodeStatus(config, n))) : []]);
  const pid = nodes.find((n) => n.pid !== null)?.pid ?? null;
  return {
    running: info !== undefined,
    pid,
    brokers: config.kafka.brokers,
    version: config.kafka.managed ? ((pid !== null ? runningVersion(pid) : undefined) ?? config.kafka.version) : null,
    managed: config.kafka.managed,
    clusterId: info?.clusterId ?? null,
    logFile: config.kafka.managed ? kafkaNodes(config)[0]!.paths.logFile : null,
    nodes,
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
function writeConfigs(config: TrajflowConfig, node: KafkaNode, version: string): string {
  const { paths } = node;
  mkdirSync(paths.dir, { recursive: true });
  mkdirSync(config.logDir, { recursive: true });
  const properties = renderServerProperties({
    nodeId: node.nodeId,
    voters: kafkaNodes(config).map((n) => ({ nodeId: n.nodeId, controllerPort: n.controllerPort })),
    port: node.port,
    controllerPort: node.controllerPort,
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

/** JVM heap per node: one broker may take 1 GiB; three on one machine share it (2 cores, a few GiB). */
const heap = (nodes: number): string[] => (nodes === 1 ? ['-Xms256m', '-Xmx1g'] : ['-Xms128m', '-Xmx512m']);

async function launch(config: TrajflowConfig, node: KafkaNode, log: (line: string) => void): Promise<number> {
  const { paths } = node;
  const dist = await fetchKafka(config, log);
  const loggingOption = writeConfigs(config, node, dist.version);
  checkDataVersion(paths, dist.version);
  const java = javaCommand();
  await formatStorage({ java, libs: dist.libs, serverProperties: paths.serverProperties, loggingOption, dataDir: paths.dataDir, clusterIdFile: paths.clusterIdFile });
  const pid = spawnDetached({
    command: java,
    args: [
      ...heap(config.kafka.nodes),
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
  // A node of a cluster answers once a majority of the controllers runs: the others are launched meanwhile.
  const outcome = await waitUntil(async () => (await probeKafka(nodeOnly(config, node), 2000)) !== undefined, {
    timeoutMs: START_TIMEOUT_MS,
    intervalMs: 300,
    giveUp: () => (isAlive(pid) ? undefined : 'exited'),
  });
  if (outcome === 'ok') return pid;
  if (outcome === 'timeout') await stopProcessGroup(pid, 5000);
  removeFile(paths.pidFile);
  const what = outcome === 'exited' ? 'exited while starting' : `did not answer within ${START_TIMEOUT_MS / 1000} s and was stopped`;
  const name = config.kafka.nodes === 1 ? 'the Kafka broker' : `Kafka node ${node.nodeId} of ${config.kafka.nodes}`;
  throw new ServiceError(`${name} (pid ${pid}) ${what}.\n${logTails(paths)}\nSee ${paths.logFile} and ${paths.outputFile}.`, { retriable: outcome === 'timeout' });
}

/** Refuses to start one layout (a single broker, or a cluster) while the home's other one runs: they share ports. */
function checkOtherLayout(config: TrajflowConfig): void {
  const wanted = new Set(kafkaNodes(config).map((n) => n.paths.pidFile));
  const other = nodePathsOnDisk(config).find((p) => !wanted.has(p.pidFile) && livePid(p.pidFile, MAIN_CLASS) !== undefined);
  if (other) {
    throw new ServiceError(
      `a Kafka broker from ${other.dir} runs (pid ${livePid(other.pidFile, MAIN_CLASS)}), not the ${config.kafka.nodes}-node layout asked for: run 'trajflow down' first, then 'trajflow up --brokers ${config.kafka.nodes}'.`,
    );
  }
}

/**
 * Makes sure the broker runs and answers. Reuses a live, answering broker from the pid file; replaces a stale
 * one (dead pid, or alive but not answering); refuses when another program holds the ports.
 */
export async function startKafka(config: TrajflowConfig, log: (line: string) => void = () => undefined): Promise<KafkaStartResult> {
  const started = Date.now();
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
  checkOtherLayout(config);
  const nodes = kafkaNodes(config);
  if (nodes.length > 1) {
    // Before the nodes start in parallel: one download, one cluster id for all.
    await fetchKafka(config, log);
    clusterId(nodes[0]!.paths.clusterIdFile);
  }
  // In parallel: a cluster's node answers only once a majority of its controllers runs.
  const results = await Promise.all(nodes.map((node) => ensureProcess(kafkaProcess(config, node, log), log)));
  const status = await kafkaStatus(config);
  const version = status.version ?? config.kafka.version;
  if (version !== config.kafka.version) {
    log(`kafka: the running broker is Kafka ${version}, not the configured ${config.kafka.version}: 'trajflow down' then 'trajflow up' switches it (topics are kept)`);
  }
  return { ...status, pid: results[0]!.pid, reused: results.every((r) => r.reused), elapsedMs: Date.now() - started };
}

/**
 * Stops every broker trajflow started from this home — the single one and each cluster node, whatever the config
 * asks for now (SIGTERM to all at once, so a cluster's controllers shut down together; SIGKILL after 30 s). Data
 * is kept. Resolves false if none ran.
 */
export async function stopKafka(config: TrajflowConfig): Promise<boolean> {
  if (!config.kafka.managed) return false;
  const stopped = await Promise.all(
    nodePathsOnDisk(config).map((paths) => stopProcess({ pidFile: paths.pidFile, lockFile: paths.lockFile, marker: MAIN_CLASS, stopGraceMs: STOP_GRACE_MS })),
  );
  return stopped.some(Boolean);
}

function kafkaProcess(config: TrajflowConfig, node: KafkaNode, log: (line: string) => void): ManagedProcess {
  const suffix = config.kafka.nodes === 1 ? '' : ` (node ${node.nodeId}: base + ${2 * (node.nodeId - 1)})`;
  return {
    name: config.kafka.nodes === 1 ? 'Kafka' : `Kafka node ${node.nodeId}`,
    pidFile: node.paths.pidFile,
    lockFile: node.paths.lockFile,
    marker: MAIN_CLASS,
    ports: [
      { port: node.port, setting: `TRAJFLOW_KAFKA_PORT${suffix}` },
      { port: node.controllerPort, setting: `TRAJFLOW_KAFKA_CONTROLLER_PORT${suffix}` },
    ],
    externalHint: 'To use a broker you already run, set TRAJFLOW_KAFKA_BROKERS instead.',
    startTimeoutMs: START_TIMEOUT_MS,
    stopGraceMs: STOP_GRACE_MS,
    // Alive: give it a moment in case it is still starting or busy, then treat it as stale.
    staleAfterMs: 10_000,
    probe: async () => (await probeKafka(nodeOnly(config, node), 2000)) !== undefined,
    launch: () => launch(config, node, log),
  };
}

// Where each Kafka node trajflow runs keeps its files and which ports it listens on. One broker (the default)
// lives in ${home}/kafka as it always has; a cluster (`trajflow up --brokers 3`) gives node i its own folder
// ${home}/kafka/node-<i> (config, data, pid file) and logs kafka-<i>.log, sharing only the cluster id.
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TrajflowConfig } from '../../core/config.js';

export interface KafkaPaths {
  readonly dir: string;
  readonly serverProperties: string;
  readonly dataDir: string;
  /** The newest release that ran on dataDir: an older major is refused (Kafka upgrades its data, never back). */
  readonly dataVersionFile: string;
  /** Shared by every node of the home's cluster. */
  readonly clusterIdFile: string;
  readonly pidFile: string;
  readonly lockFile: string;
  /** The broker's own log (log4j). */
  readonly logFile: string;
  /** The JVM's stdout/stderr: crashes before log4j starts end up here. */
  readonly outputFile: string;
}

/** The single broker's files (and the cluster id every node shares). */
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

/** Node `nodeId`'s files in a cluster of several. */
function clusterNodePaths(config: Pick<TrajflowConfig, 'home' | 'logDir'>, nodeId: number): KafkaPaths {
  const dir = join(config.home, 'kafka', `node-${nodeId}`);
  return {
    dir,
    serverProperties: join(dir, 'server.properties'),
    dataDir: join(dir, 'data'),
    dataVersionFile: join(dir, 'data-version'),
    clusterIdFile: kafkaPaths(config).clusterIdFile,
    pidFile: join(dir, 'kafka.pid'),
    lockFile: join(dir, '.lock'),
    logFile: join(config.logDir, `kafka-${nodeId}.log`),
    outputFile: join(config.logDir, `kafka-${nodeId}.out.log`),
  };
}

export interface KafkaNode {
  /** KRaft node id, 1 … nodes. */
  readonly nodeId: number;
  readonly port: number;
  readonly controllerPort: number;
  /** host:port of its broker listener. */
  readonly address: string;
  readonly paths: KafkaPaths;
}

/** The nodes the config asks for: node i (1-based) on port + 2(i − 1) and controllerPort + 2(i − 1). */
export function kafkaNodes(config: Pick<TrajflowConfig, 'home' | 'logDir' | 'kafka'>): KafkaNode[] {
  const count = config.kafka.nodes;
  return Array.from({ length: count }, (_, i) => {
    const nodeId = i + 1;
    const port = config.kafka.port + 2 * i;
    return {
      nodeId,
      port,
      controllerPort: config.kafka.controllerPort + 2 * i,
      address: `127.0.0.1:${port}`,
      paths: count === 1 ? kafkaPaths(config) : clusterNodePaths(config, nodeId),
    };
  });
}

/** Every node folder in the home, whatever the config says now: the single broker's and each node-<i>'s. */
export function nodePathsOnDisk(config: Pick<TrajflowConfig, 'home' | 'logDir'>): KafkaPaths[] {
  const dir = kafkaPaths(config).dir;
  const ids = existsSync(dir)
    ? readdirSync(dir)
        .map((name) => /^node-(\d+)$/.exec(name)?.[1])
        .filter((id): id is string => id !== undefined)
        .map(Number)
        .sort((a, b) => a - b)
    : [];
  return [kafkaPaths(config), ...ids.map((id) => clusterNodePaths(config, id))];
}

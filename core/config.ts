// The typed configuration of services trajflow talks to, built once from the environment and checked
// when built. Every check's message names the variable to change and what would be valid.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { clickHouseCredentials, kafkaSecurity, redactUrl, type ClickHouseCredentials, type KafkaSecurity } from './credentials.js';
import { ConfigError } from './errors.js';
import { blameServiceSetting, withServiceSections } from './service-sections.js';

/** The project folder (where package.json is). */
export const projectRoot = fileURLToPath(new URL('..', import.meta.url));

export interface KafkaConfig {
  /** Broker list to use; when set by TRAJFLOW_KAFKA_BROKERS nothing is started. */
  readonly brokers: string[];
  /** True when trajflow starts and owns the broker (no TRAJFLOW_KAFKA_BROKERS). */
  readonly managed: boolean;
  /** Pinned Apache Kafka release fetched from Maven Central (org.apache.kafka:kafka_2.13). */
  readonly version: string;
  readonly port: number;
  readonly controllerPort: number;
  /**
   * KRaft nodes (broker and controller each) trajflow runs: TRAJFLOW_KAFKA_NODES, else what `trajflow up --brokers N`
   * left in the home (clusterSizeFile), else 1. Node i (0-based) listens on port + 2i, its controller on controllerPort + 2i.
   */
  readonly nodes: number;
  /** SASL and TLS for a secured cluster (TRAJFLOW_KAFKA_SASL_*, TRAJFLOW_KAFKA_TLS*; core/credentials.ts). */
  readonly security?: KafkaSecurity;
}

export interface ClickHouseConfig {
  /** HTTP endpoint; when set by TRAJFLOW_CLICKHOUSE_URL nothing is started. */
  readonly url: string;
  readonly managed: boolean;
  readonly httpPort: number;
  readonly tcpPort: number;
  readonly database: string;
  /** User and password (TRAJFLOW_CLICKHOUSE_USER, TRAJFLOW_CLICKHOUSE_PASSWORD); unset: 'default' without one. */
  readonly credentials?: ClickHouseCredentials | undefined;
}

export interface TrajflowConfig {
  /** Project-local state: data folders, logs, pid files (TRAJFLOW_HOME, default <project>/.trajflow). */
  readonly home: string;
  /** Downloads kept across clones (TRAJFLOW_CACHE, default ~/.cache/trajflow). */
  readonly cacheDir: string;
  readonly logDir: string;
  /** Every topic name starts with this prefix and a dot (TRAJFLOW_TOPIC_PREFIX, default "trajflow"). */
  readonly topicPrefix: string;
  readonly kafka: KafkaConfig;
  readonly clickhouse: ClickHouseConfig;
}

type Env = Record<string, string | undefined>;

/** The Apache Kafka release `trajflow up` runs unless TRAJFLOW_KAFKA_VERSION says otherwise (3.x releases work too). */
export const DEFAULT_KAFKA_VERSION = '4.4.0';

/** Where `trajflow up --brokers N` remembers N, so every later command on the home finds the same cluster. */
export function clusterSizeFile(home: string): string {
  return join(home, 'kafka', 'nodes');
}

const MAX_NODES = 5;

function kafkaNodes(env: Env, home: string): number {
  const file = clusterSizeFile(home);
  const raw = env.TRAJFLOW_KAFKA_NODES || (existsSync(file) ? readFileSync(file, 'utf8').trim() : '1');
  const nodes = Number(raw);
  if (!Number.isInteger(nodes) || nodes < 1 || nodes > MAX_NODES) {
    const where = env.TRAJFLOW_KAFKA_NODES ? 'TRAJFLOW_KAFKA_NODES' : file;
    throw new ConfigError(`${where} says '${raw}' Kafka nodes: give an integer from 1 to ${MAX_NODES} (trajflow up --brokers 3 runs a 3-broker cluster).`);
  }
  return nodes;
}

/** Node i's broker and controller ports; refuses a layout whose ports collide or pass 65535. */
function nodePorts(kafkaPort: number, controllerPort: number, nodes: number): string[] {
  const ports = Array.from({ length: nodes }, (_, i) => [kafkaPort + 2 * i, controllerPort + 2 * i]).flat();
  if (new Set(ports).size !== ports.length || Math.max(...ports) > 65535) {
    throw new ConfigError(
      `${nodes} Kafka nodes need ports TRAJFLOW_KAFKA_PORT + 2i and TRAJFLOW_KAFKA_CONTROLLER_PORT + 2i (i < ${nodes}), all different and ≤ 65535: with ${kafkaPort} and ${controllerPort} they are not; use two adjacent ports such as 19092 and 19093.`,
    );
  }
  return Array.from({ length: nodes }, (_, i) => `127.0.0.1:${kafkaPort + 2 * i}`);
}

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1024 || value > 65535) {
    throw new ConfigError(`${name}=${raw} is not a usable port: set it to an integer between 1024 and 65535 (default ${fallback}).`);
  }
  return value;
}

function folder(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return isAbsolute(raw) ? raw : resolve(raw);
}

function brokerList(raw: string): string[] {
  const brokers = raw
    .split(',')
    .map((b) => b.trim())
    .filter((b) => b.length > 0);
  for (const broker of brokers) {
    if (!/^[A-Za-z0-9.\-_[\]:]+:\d+$/.test(broker)) {
      throw new ConfigError(`TRAJFLOW_KAFKA_BROKERS has '${broker}': give host:port pairs separated by commas, e.g. 127.0.0.1:9092.`);
    }
  }
  if (brokers.length === 0) throw new ConfigError('TRAJFLOW_KAFKA_BROKERS is empty: give host:port pairs or unset it to let trajflow start Kafka.');
  return brokers;
}

export function loadConfig(env: Env = process.env): TrajflowConfig {
  const { env: merged, fromFile } = withServiceSections(env);
  try {
    return buildConfig(merged, fromFile);
  } catch (error) {
    throw blameServiceSetting(error, fromFile);
  }
}

function buildConfig(env: Env, fromFile: ReadonlyMap<string, string>): TrajflowConfig {
  const home = folder(env, 'TRAJFLOW_HOME', join(projectRoot, '.trajflow'));
  const cacheDir = folder(env, 'TRAJFLOW_CACHE', join(homedir(), '.cache', 'trajflow'));
  const topicPrefix = env.TRAJFLOW_TOPIC_PREFIX ?? 'trajflow';
  if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(topicPrefix) || topicPrefix.length > 100) {
    throw new ConfigError(`TRAJFLOW_TOPIC_PREFIX='${topicPrefix}' is not a valid topic prefix: use letters, digits, '_', '-' and '.', at most 100 characters.`);
  }
  // Every setting is checked before the brokers, the security and the credentials are read: the first
  // mistake reported is the same whichever of them are also wrong.
  const kafka = kafkaChoices(env, home);
  const clickhouse = clickHouseChoices(env);
  return {
    home,
    cacheDir,
    logDir: join(home, 'logs'),
    topicPrefix,
    kafka: {
      brokers: kafka.externalBrokers ? brokerList(kafka.externalBrokers) : nodePorts(kafka.port, kafka.controllerPort, kafka.nodes),
      managed: !kafka.externalBrokers,
      version: kafka.version,
      port: kafka.port,
      controllerPort: kafka.controllerPort,
      nodes: kafka.nodes,
      security: kafkaSecurity(env, !kafka.externalBrokers, fromFile),
    },
    clickhouse: {
      url: clickhouse.external ? clickhouse.external.replace(/\/$/, '') : `http://127.0.0.1:${clickhouse.httpPort}`,
      managed: !clickhouse.external,
      httpPort: clickhouse.httpPort,
      tcpPort: clickhouse.tcpPort,
      database: clickhouse.database,
      credentials: clickHouseCredentials(env, !clickhouse.external, fromFile),
    },
  };
}

/** The Kafka settings, checked: ports, version, and the brokers given (or the nodes trajflow starts). */
function kafkaChoices(env: Env, home: string): { port: number; controllerPort: number; externalBrokers: string | undefined; version: string; nodes: number } {
  const kafkaPort = port(env, 'TRAJFLOW_KAFKA_PORT', 19092);
  const controllerPort = port(env, 'TRAJFLOW_KAFKA_CONTROLLER_PORT', 19093);
  if (kafkaPort === controllerPort) {
    throw new ConfigError(`TRAJFLOW_KAFKA_PORT and TRAJFLOW_KAFKA_CONTROLLER_PORT are both ${kafkaPort}: the broker needs two different ports.`);
  }
  const externalBrokers = env.TRAJFLOW_KAFKA_BROKERS;
  const kafkaVersion = env.TRAJFLOW_KAFKA_VERSION || DEFAULT_KAFKA_VERSION;
  if (!/^\d+\.\d+\.\d+$/.test(kafkaVersion)) {
    throw new ConfigError(`TRAJFLOW_KAFKA_VERSION='${kafkaVersion}' is not a release number like ${DEFAULT_KAFKA_VERSION} or 3.9.2.`);
  }
  const nodes = externalBrokers ? 1 : kafkaNodes(env, home);
  return { port: kafkaPort, controllerPort, externalBrokers, version: kafkaVersion, nodes };
}

/** The ClickHouse settings, checked: ports, the server given (without credentials in its URL), the database. */
function clickHouseChoices(env: Env): { httpPort: number; tcpPort: number; external: string | undefined; database: string } {
  const httpPort = port(env, 'TRAJFLOW_CLICKHOUSE_HTTP_PORT', 18123);
  const tcpPort = port(env, 'TRAJFLOW_CLICKHOUSE_TCP_PORT', 19000);
  if (httpPort === tcpPort) {
    throw new ConfigError(`TRAJFLOW_CLICKHOUSE_HTTP_PORT and TRAJFLOW_CLICKHOUSE_TCP_PORT are both ${httpPort}: ClickHouse needs two different ports.`);
  }
  const externalClickHouse = env.TRAJFLOW_CLICKHOUSE_URL;
  if (externalClickHouse !== undefined && /^\w+:\/\/[^/@]*@/.test(externalClickHouse)) {
    throw new ConfigError(
      `TRAJFLOW_CLICKHOUSE_URL='${redactUrl(externalClickHouse)}' holds a user or password: give them in TRAJFLOW_CLICKHOUSE_USER and TRAJFLOW_CLICKHOUSE_PASSWORD (or _FILE) instead.`,
    );
  }
  if (externalClickHouse !== undefined && externalClickHouse !== '' && !/^https?:\/\/[^/]+\/?$/.test(externalClickHouse)) {
    throw new ConfigError(`TRAJFLOW_CLICKHOUSE_URL='${externalClickHouse}' must be an HTTP endpoint such as http://127.0.0.1:8123 (no path).`);
  }
  const database = env.TRAJFLOW_CLICKHOUSE_DB ?? 'trajflow';
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(database)) {
    throw new ConfigError(`TRAJFLOW_CLICKHOUSE_DB='${database}' must be a plain identifier (letters, digits, '_').`);
  }
  return { httpPort, tcpPort, external: externalClickHouse, database };
}

/** The full name of a topic under the configured prefix. */
export function topicName(config: Pick<TrajflowConfig, 'topicPrefix'>, name: string): string {
  return `${config.topicPrefix}.${name}`;
}

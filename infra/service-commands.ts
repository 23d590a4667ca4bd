// The `trajflow up`, `down` and `status` commands, which start, stop and report the services (Kafka and
// ClickHouse): thin wrappers over up.ts and the servers' modules that print one line per service.
import type { Command } from './cli/command.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { clusterSizeFile, loadConfig } from '../core/config.js';
import { ConfigError } from '../core/errors.js';
import { parseFlagPairs, positiveInt } from './cli/flags.js';
import { clickHouseStatus, stopClickHouse } from './clickhouse/server.js';
import { kafkaStatus, stopKafka, type KafkaStatus } from './kafka/server.js';
import { describeDifferences } from './topics.js';
import { ensureUp } from './up.js';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function rejectArgs(args: string[], usage: string): void {
  if (args.length > 0) throw new Error(`unexpected argument '${args[0]}'. usage: ${usage}`);
}

/** One line per cluster node (none for a single broker or an external cluster). */
function nodeLines(kafka: KafkaStatus): string[] {
  if (kafka.nodes.length < 2) return [];
  return kafka.nodes.map((n) => `  node ${n.nodeId}    ${n.running ? 'up  ' : n.pid ? 'not answering' : 'down'}  ${n.address}  ${n.pid ? `pid ${n.pid}` : '-'}  log ${n.logFile}`);
}

export const upCommand: Command = {
  summary: 'start Kafka and ClickHouse (unless external ones are configured), create topics, apply migrations; --brokers 3 runs a 3-broker Kafka cluster',
  usage: 'trajflow up [--brokers N]',
  async run(args) {
    const flags = parseFlagPairs(args, ['--brokers'], this.usage);
    const brokers = flags['--brokers'] === undefined ? undefined : positiveInt('brokers', flags['--brokers'], 1);
    if (brokers !== undefined && (brokers > 5 || process.env.TRAJFLOW_KAFKA_BROKERS)) {
      throw new ConfigError(
        process.env.TRAJFLOW_KAFKA_BROKERS
          ? '--brokers sets how many brokers trajflow runs itself; with TRAJFLOW_KAFKA_BROKERS set it runs none: unset one of them.'
          : `--brokers ${brokers}: trajflow runs 1 to 5 brokers on one machine (3 for replication with min.insync.replicas=2).`,
      );
    }
    const config = loadConfig(brokers === undefined ? process.env : { ...process.env, TRAJFLOW_KAFKA_NODES: String(brokers) });
    const report = await ensureUp(config, (line) => console.log(line));
    if (brokers !== undefined && config.kafka.managed) {
      // Remembered in the home, so status, down, train and tests on it find the same cluster without the flag.
      mkdirSync(dirname(clusterSizeFile(config.home)), { recursive: true });
      writeFileSync(clusterSizeFile(config.home), `${brokers}\n`);
    }
    const { kafka, clickhouse, topics, migrations } = report;
    const how = (managed: boolean, reused: boolean, ms: number): string => (!managed ? 'external' : reused ? 'already running' : `started in ${seconds(ms)}`);
    const size = kafka.nodes.length > 1 ? `${kafka.nodes.length} brokers  ` : '';
    console.log(
      `kafka       up  ${kafka.brokers.join(',')}  ${size}${kafka.pid ? `pid ${kafka.pid}` : '-'}  ${kafka.version ? `v${kafka.version}` : ''}  ${how(kafka.managed, kafka.reused, kafka.elapsedMs)}${kafka.logFile ? `  log ${kafka.logFile}` : ''}`,
    );
    for (const line of nodeLines(kafka)) console.log(line);
    console.log(
      `clickhouse  up  ${clickhouse.url}  ${clickhouse.pid ? `pid ${clickhouse.pid}` : '-'}  ${clickhouse.version ? `v${clickhouse.version}` : ''}  ${how(clickhouse.managed, clickhouse.reused, clickhouse.elapsedMs)}${clickhouse.logFile ? `  log ${clickhouse.logFile}` : ''}`,
    );
    const grown = topics.partitionsAdded.map((p) => `${p.topic} ${p.from}→${p.to} partitions`);
    console.log(
      `topics      ${topics.created.length + topics.existing.length} under ${config.topicPrefix}.  (${topics.created.length} created${grown.length ? `, ${grown.join(', ')}` : ''})`,
    );
    for (const line of describeDifferences(topics.differences)) console.log(`  warning: ${line}`);
    console.log(
      `migrations  ${migrations.database} at version ${migrations.versions.at(-1) ?? 0}  (${migrations.applied.length ? `applied ${migrations.applied.map((m) => `${m.version}_${m.name}`).join(', ')}` : 'none pending'})`,
    );
    console.log(`ready in ${seconds(report.elapsedMs)}`);
    return 0;
  },
};

export const downCommand: Command = {
  summary: 'stop the Kafka broker(s) and ClickHouse server trajflow started (data is kept)',
  usage: 'trajflow down',
  async run(args) {
    rejectArgs(args, this.usage);
    const config = loadConfig();
    const [kafka, clickhouse] = await Promise.all([stopKafka(config), stopClickHouse(config)]);
    const line = (name: string, managed: boolean, stopped: boolean): string =>
      `${name.padEnd(11)} ${!managed ? 'external, left running' : stopped ? 'stopped' : 'was not running'}`;
    console.log(line('kafka', config.kafka.managed, kafka));
    console.log(line('clickhouse', config.clickhouse.managed, clickhouse));
    return 0;
  },
};

export const statusCommand: Command = {
  summary: 'show whether Kafka and ClickHouse answer (exit code 0 when both do, 3 otherwise)',
  usage: 'trajflow status',
  async run(args) {
    rejectArgs(args, this.usage);
    const config = loadConfig();
    const [kafka, clickhouse] = await Promise.all([kafkaStatus(config), clickHouseStatus(config)]);
    const state = (running: boolean, pid: number | null, managed: boolean): string => (running ? 'up  ' : managed && pid ? 'not answering' : 'down');
    console.log(
      `kafka       ${state(kafka.running, kafka.pid, kafka.managed)}  ${kafka.brokers.join(',')}  ${kafka.pid ? `pid ${kafka.pid}` : '-'}  ${kafka.managed ? `v${kafka.version}` : 'external'}${kafka.logFile ? `  log ${kafka.logFile}` : ''}`,
    );
    for (const line of nodeLines(kafka)) console.log(line);
    console.log(
      `clickhouse  ${state(clickhouse.running, clickhouse.pid, clickhouse.managed)}  ${clickhouse.url}  ${clickhouse.pid ? `pid ${clickhouse.pid}` : '-'}  ${clickhouse.version ? `v${clickhouse.version}` : ''}${clickhouse.managed ? '' : ' external'}${clickhouse.logFile ? `  log ${clickhouse.logFile}` : ''}`,
    );
    if (!kafka.running || !clickhouse.running) {
      console.log(config.kafka.managed || config.clickhouse.managed ? "run 'trajflow up' to start what is down" : 'check the external services');
      return 3;
    }
    return 0;
  },
};

// The `trajflow up`, `down` and `status` commands: thin wrappers that print one line per service.
import type { Command } from './cli/command.js';
import { loadConfig } from '../core/config.js';
import { clickHouseStatus, stopClickHouse } from './clickhouse/server.js';
import { kafkaStatus, stopKafka } from './kafka/server.js';
import { describeDifferences } from './topics.js';
import { ensureUp } from './up.js';

export { ensureUp } from './up.js';
export type { UpReport } from './up.js';

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

function rejectArgs(args: string[], usage: string): void {
  if (args.length > 0) throw new Error(`unexpected argument '${args[0]}'. usage: ${usage}`);
}

export const upCommand: Command = {
  summary: 'start Kafka and ClickHouse (unless external ones are configured), create topics, apply migrations',
  usage: 'trajflow up',
  async run(args) {
    rejectArgs(args, this.usage);
    const config = loadConfig();
    const report = await ensureUp(config, (line) => console.log(line));
    const { kafka, clickhouse, topics, migrations } = report;
    const how = (managed: boolean, reused: boolean, ms: number): string => (!managed ? 'external' : reused ? 'already running' : `started in ${seconds(ms)}`);
    console.log(
      `kafka       up  ${kafka.brokers.join(',')}  ${kafka.pid ? `pid ${kafka.pid}` : '-'}  ${kafka.version ? `v${kafka.version}` : ''}  ${how(kafka.managed, kafka.reused, kafka.elapsedMs)}${kafka.logFile ? `  log ${kafka.logFile}` : ''}`,
    );
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
  summary: 'stop the Kafka broker and ClickHouse server trajflow started (data is kept)',
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

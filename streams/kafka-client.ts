// Builds the kafkajs client from trajflow's config. kafkajs' own log lines go through one formatter,
// at ERROR unless TRAJFLOW_KAFKA_LOG asks for more, so a broker restart does not flood the console.
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { TrajflowConfig } from '../core/config.js';

const levels: Record<string, logLevel> = {
  nothing: logLevel.NOTHING,
  error: logLevel.ERROR,
  warn: logLevel.WARN,
  info: logLevel.INFO,
  debug: logLevel.DEBUG,
};

const levelNames = new Map<logLevel, string>(Object.entries(levels).map(([name, level]) => [level, name]));

function kafkaLogLevel(): logLevel {
  return levels[(process.env.TRAJFLOW_KAFKA_LOG ?? 'error').toLowerCase()] ?? logLevel.ERROR;
}

const logCreator = () => ({ namespace, level, log }: LogEntry) => {
  const { message, error } = log as { message: string; error?: string };
  const line = `[kafkajs ${levelNames.get(level) ?? level}] ${namespace}: ${message}${error ? ` (${error})` : ''}`;
  if (level <= logLevel.WARN) console.error(line);
  else console.log(line);
};

export function createKafka(config: Pick<TrajflowConfig, 'kafka'>, clientId = 'trajflow'): Kafka {
  return new Kafka({
    clientId,
    brokers: config.kafka.brokers,
    logLevel: kafkaLogLevel(),
    logCreator,
    connectionTimeout: 3000,
    // Retry long enough to ride out a broker restart (tens of seconds), not forever.
    retry: { initialRetryTime: 200, maxRetryTime: 5000, retries: 12 },
  });
}

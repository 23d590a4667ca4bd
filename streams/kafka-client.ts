// Builds kafkajs clients from trajflow's config. kafkajs' own log lines go through one formatter, at
// ERROR unless TRAJFLOW_KAFKA_LOG asks for more, so a broker restart does not flood the console; the
// infra probes pass `quiet`, since connection errors are expected while a broker is starting. SASL and TLS
// come from the config (kafka-auth.ts), and a refused login surfaces at connect as a ConfigError.
import { Kafka, logLevel, type LogEntry } from 'kafkajs';
import type { TrajflowConfig } from '../core/config.js';
import { explainRefusedLogins, kafkajsSecurity } from './kafka-auth.js';
import { assertKafkajsPatched } from './kafkajs-self-check.js';

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

/**
 * CONCURRENT_TRANSACTIONS is the broker asking a transactional producer to retry while it finishes the
 * previous transaction (the processors begin the next one right after a commit): expected, retried at
 * once, not an error worth a line; it is logged at debug like kafkajs' other retries.
 */
const EXPECTED_RETRY = /another concurrent operation on the same transaction was ongoing/;

const logCreator =
  () =>
  ({ namespace, level, log }: LogEntry) => {
    const { message, error } = log as { message: string; error?: string };
    if (level <= logLevel.WARN && EXPECTED_RETRY.test(`${message} ${error ?? ''}`) && kafkaLogLevel() < logLevel.DEBUG) return;
    const line = `[kafkajs ${levelNames.get(level) ?? level}] ${namespace}: ${message}${error ? ` (${error})` : ''}`;
    if (level <= logLevel.WARN) console.error(line);
    else console.log(line);
  };

export interface KafkaClientOptions {
  readonly clientId?: string;
  /** How many times kafkajs retries a failed request (default 24: about 100 s of backoff, enough to ride out a broker restart on a loaded machine). */
  readonly retries?: number;
  readonly connectionTimeoutMs?: number;
  /** Log nothing unless TRAJFLOW_DEBUG is set (probes of a broker that may still be starting). */
  readonly quiet?: boolean;
}

export function createKafka(config: Pick<TrajflowConfig, 'kafka'>, options: KafkaClientOptions = {}): Kafka {
  assertKafkajsPatched(); // no client on a kafkajs without the read_committed fix (docs/design/kafka-client.md)
  const { clientId = 'trajflow', retries = 24, connectionTimeoutMs = 3000, quiet = false } = options;
  const kafka = new Kafka({
    clientId,
    brokers: config.kafka.brokers,
    ...kafkajsSecurity(config.kafka),
    logLevel: quiet ? (process.env.TRAJFLOW_DEBUG ? logLevel.INFO : logLevel.NOTHING) : kafkaLogLevel(),
    logCreator,
    connectionTimeout: connectionTimeoutMs,
    retry: { initialRetryTime: 200, maxRetryTime: 5000, retries },
  });
  return explainRefusedLogins(kafka, config.kafka);
}

// Brings the services up (or checks external ones), then makes topics and tables match the code.
// Kafka and ClickHouse start in parallel: they share nothing, and the JVM's start dominates anyway.
import type { TrajflowConfig } from '../core/config.js';
import { ServiceError } from '../core/errors.js';
import { applyMigrations, type MigrationReport } from './clickhouse/migrations.js';
import { startClickHouse, type ClickHouseStartResult } from './clickhouse/server.js';
import { startKafka, type KafkaStartResult } from './kafka/server.js';
import { ensureTopics, type EnsureTopicsReport } from './topics.js';

export interface UpReport {
  readonly kafka: KafkaStartResult;
  readonly topics: EnsureTopicsReport;
  readonly clickhouse: ClickHouseStartResult;
  readonly migrations: MigrationReport;
  readonly elapsedMs: number;
}

/** Starts what is managed, reuses what runs, creates topics and applies migrations. Idempotent. */
export async function ensureUp(config: TrajflowConfig, log: (line: string) => void = () => undefined): Promise<UpReport> {
  const started = Date.now();
  const [kafka, clickhouse] = await Promise.allSettled([
    (async () => {
      const status = await startKafka(config, log);
      return { status, topics: await ensureTopics(config) };
    })(),
    (async () => {
      const status = await startClickHouse(config, log);
      return { status, migrations: await applyMigrations(config, { log }) };
    })(),
  ]);
  const failures = [kafka, clickhouse].filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (kafka.status === 'rejected' || clickhouse.status === 'rejected') {
    const messages = failures.map((f) => (f.reason instanceof Error ? f.reason.message : String(f.reason)));
    if (failures.length === 1) throw failures[0]!.reason;
    throw new ServiceError(messages.join('\n\n'), { cause: failures.map((f) => f.reason) });
  }
  return {
    kafka: kafka.value.status,
    topics: kafka.value.topics,
    clickhouse: clickhouse.value.status,
    migrations: clickhouse.value.migrations,
    elapsedMs: Date.now() - started,
  };
}

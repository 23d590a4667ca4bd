// The API's dependencies from a running backbone: the step publisher and dead-letter route it already
// has, the ClickHouse client for reads, and the health probes. The Kafka probe has its own client with
// no retries and short timeouts, so /health answers "Kafka down" in about a second instead of riding out
// kafkajs' reconnect backoff the way the producer (rightly) does. Consumer lag (GET /v1/lag) has its own
// client too — a couple of retries (group coordinators move), short timeouts, a deadline over the whole.
import { startReplay } from '../learner/replay/run-replay.js';
import { clickHouseClient } from '../infra/clickhouse/http.js';
import { createKafka, type Backbone } from '../streams/index.js';
import type { ApiDeps } from './app.js';
import { timed, type HealthProbes } from './health-route.js';
import { kafkaProbe, lagReporter, type KafkaProbe } from './kafka-admins.js';

export type ApiServices = Omit<ApiDeps, 'config'> & {
  /** Closes what the services opened (the probe's admin client), not the backbone. */
  close(): Promise<void>;
};

export interface ApiServicesOptions {
  /** Per-probe timeout (default 2000 ms). */
  readonly probeTimeoutMs?: number;
  /** How long GET /v1/lag waits for the broker (default 5000 ms). */
  readonly lagTimeoutMs?: number;
}

/** /health's probes: Kafka through its own probe, ClickHouse by /ping, each failure said in one line. */
function healthProbes(kafka: KafkaProbe, clickhouse: ReturnType<typeof clickHouseClient>, brokers: readonly string[], timeoutMs: number): HealthProbes {
  return {
    kafka: () =>
      timed(
        () => kafka.answers(),
        (error) => `brokers ${brokers.join(',')} did not answer${error instanceof Error ? `: ${error.message}` : ''}`,
      ),
    clickhouse: () =>
      timed(
        () => clickhouse.ping(timeoutMs),
        () => `ClickHouse at ${clickhouse.url} did not answer /ping`,
      ),
  };
}

export function createApiServices(backbone: Backbone, options: ApiServicesOptions = {}): ApiServices {
  const { probeTimeoutMs = 2000, lagTimeoutMs = 5000 } = options;
  const probeKafka = createKafka(backbone.config, { clientId: 'trajflow-dashboard-health', retries: 0, connectionTimeoutMs: 1000, quiet: true });
  const lagKafka = createKafka(backbone.config, { clientId: 'trajflow-dashboard-lag', retries: 2, connectionTimeoutMs: 1000, quiet: true });
  const clickhouse = clickHouseClient(backbone.config);
  const kafka = kafkaProbe(() => probeKafka.admin(), probeTimeoutMs);
  const lag = lagReporter(() => lagKafka.admin(), backbone.config.topicPrefix, lagTimeoutMs);
  return {
    codec: backbone.codec,
    steps: backbone.steps,
    deadLetters: backbone.deadLetters,
    analytics: clickhouse,
    probes: healthProbes(kafka, clickhouse, backbone.config.kafka.brokers, probeTimeoutMs),
    lag: { report: (query) => lag.report(query) },
    replay: (selection, processing, replayId) => startReplay(backbone, selection, { ...processing, replayId }),
    async close() {
      await kafka.close();
      await lag.close();
    },
  };
}

// The API's dependencies from a running backbone: the step publisher and dead-letter route it already
// has, the ClickHouse client for reads, and the health probes. The Kafka probe has its own client with
// no retries and short timeouts, so /health answers "Kafka down" in about a second instead of riding out
// kafkajs' reconnect backoff the way the producer (rightly) does. Consumer lag (GET /v1/lag) has its own
// client too — a couple of retries (group coordinators move), short timeouts, a deadline over the whole.
import { startReplay } from '../learner/replay/run-replay.js';
import type { Admin } from 'kafkajs';
import { clickHouseClient } from '../infra/clickhouse/http.js';
import { createKafka, type Backbone } from '../streams/index.js';
import type { ApiDeps } from './app.js';
import { withDeadline } from './deadline.js';
import { timed, type HealthProbes } from './health-route.js';
import type { LagSource } from './lag-route.js';
import { consumerLag } from '../storage/query/lag.js';

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

export function createApiServices(backbone: Backbone, options: ApiServicesOptions = {}): ApiServices {
  const { probeTimeoutMs = 2000, lagTimeoutMs = 5000 } = options;
  const probeKafka = createKafka(backbone.config, { clientId: 'trajflow-dashboard-health', retries: 0, connectionTimeoutMs: 1000, quiet: true });
  const lagKafka = createKafka(backbone.config, { clientId: 'trajflow-dashboard-lag', retries: 2, connectionTimeoutMs: 1000, quiet: true });
  const clickhouse = clickHouseClient(backbone.config);
  let admin: Admin | null = null;
  let lagAdmin: Admin | null = null;
  let inFlight: Promise<boolean> | null = null;

  async function kafkaAnswers(): Promise<boolean> {
    admin ??= probeKafka.admin();
    const current = admin;
    try {
      await current.connect();
      const cluster = await current.describeCluster();
      return cluster.brokers.length > 0;
    } catch (error) {
      // Start from a fresh client next time rather than a half-open one.
      admin = null;
      await current.disconnect().catch(() => undefined);
      throw error;
    }
  }

  const probes: HealthProbes = {
    kafka: () =>
      timed(
        () => {
          // Concurrent health checks share one probe.
          inFlight ??= withDeadline(kafkaAnswers(), probeTimeoutMs, 'the Kafka probe').finally(() => (inFlight = null));
          return inFlight;
        },
        (error) => `brokers ${backbone.config.kafka.brokers.join(',')} did not answer${error instanceof Error ? `: ${error.message}` : ''}`,
      ),
    clickhouse: () =>
      timed(
        () => clickhouse.ping(probeTimeoutMs),
        () => `ClickHouse at ${clickhouse.url} did not answer /ping`,
      ),
  };

  const lag: LagSource = {
    async report(query) {
      lagAdmin ??= lagKafka.admin();
      const current = lagAdmin;
      const work = (async () => {
        await current.connect();
        return consumerLag(current, backbone.config.topicPrefix, query);
      })();
      try {
        return await withDeadline(work, lagTimeoutMs, 'the consumer lag requests');
      } catch (error) {
        if (lagAdmin === current) lagAdmin = null;
        work.catch(() => undefined);
        await current.disconnect().catch(() => undefined);
        throw error;
      }
    },
  };

  return {
    codec: backbone.codec,
    steps: backbone.steps,
    deadLetters: backbone.deadLetters,
    analytics: clickhouse,
    probes,
    lag,
    replay: (selection, processing, replayId) => startReplay(backbone, selection, { ...processing, replayId }),
    async close() {
      await admin?.disconnect().catch(() => undefined);
      await lagAdmin?.disconnect().catch(() => undefined);
      admin = null;
      lagAdmin = null;
    },
  };
}

// The API's own Kafka admin clients, each made on first use and dropped after a failure, so the next call
// starts from a fresh client rather than a half-open one: the /health probe (concurrent checks share one
// probe, under a deadline) and the consumer-lag reporter of GET /v1/lag (a deadline over the whole report).
import type { Admin } from 'kafkajs';
import { consumerLag, type LagAdmin } from '../storage/query/lag.js';
import { withDeadline } from './deadline.js';
import type { LagSource } from './lag-route.js';

type ProbeAdmin = Pick<Admin, 'connect' | 'describeCluster' | 'disconnect'>;
type ReportAdmin = LagAdmin & Pick<Admin, 'connect' | 'disconnect'>;

export interface KafkaProbe {
  /** Whether the cluster lists a broker; throws what Kafka (or the deadline) throws. */
  answers(): Promise<boolean>;
  close(): Promise<void>;
}

export function kafkaProbe(newAdmin: () => ProbeAdmin, timeoutMs: number): KafkaProbe {
  let admin: ProbeAdmin | null = null;
  let inFlight: Promise<boolean> | null = null;
  async function describe(): Promise<boolean> {
    admin ??= newAdmin();
    const current = admin;
    try {
      await current.connect();
      const cluster = await current.describeCluster();
      return cluster.brokers.length > 0;
    } catch (error) {
      admin = null;
      await current.disconnect().catch(() => undefined);
      throw error;
    }
  }
  return {
    answers() {
      // Concurrent health checks share one probe.
      inFlight ??= withDeadline(describe(), timeoutMs, 'the Kafka probe').finally(() => (inFlight = null));
      return inFlight;
    },
    async close() {
      await admin?.disconnect().catch(() => undefined);
      admin = null;
    },
  };
}

export type LagReporter = LagSource & { close(): Promise<void> };

export function lagReporter(newAdmin: () => ReportAdmin, topicPrefix: string, timeoutMs: number): LagReporter {
  let admin: ReportAdmin | null = null;
  return {
    async report(query) {
      admin ??= newAdmin();
      const current = admin;
      const work = (async () => {
        await current.connect();
        return consumerLag(current, topicPrefix, query);
      })();
      try {
        return await withDeadline(work, timeoutMs, 'the consumer lag requests');
      } catch (error) {
        if (admin === current) admin = null;
        work.catch(() => undefined);
        await current.disconnect().catch(() => undefined);
        throw error;
      }
    },
    async close() {
      await admin?.disconnect().catch(() => undefined);
      admin = null;
    },
  };
}

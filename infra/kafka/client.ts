// kafkajs clients for infra's own needs (probing, topic admin). Quiet by default: a broker that is still
// starting makes kafkajs log connection errors that are expected while we poll.
import kafkajs from 'kafkajs';
import type { Admin, Kafka } from 'kafkajs';
import type { TrajflowConfig } from '../../core/config.js';

const { Kafka: KafkaClient, logLevel } = kafkajs;

export interface ClientOptions {
  readonly clientId?: string;
  /** How many times kafkajs retries a failed request (default 5; the probe uses 0). */
  readonly retries?: number;
  readonly connectionTimeoutMs?: number;
}

export function createKafka(config: Pick<TrajflowConfig, 'kafka'>, options: ClientOptions = {}): Kafka {
  return new KafkaClient({
    clientId: options.clientId ?? 'trajflow-infra',
    brokers: config.kafka.brokers,
    connectionTimeout: options.connectionTimeoutMs ?? 3000,
    logLevel: process.env.TRAJFLOW_DEBUG ? logLevel.INFO : logLevel.NOTHING,
    retry: { retries: options.retries ?? 5, initialRetryTime: 200, maxRetryTime: 2000 },
  });
}

export interface ClusterInfo {
  readonly clusterId: string;
  readonly brokers: string[];
  readonly controller: number | null;
}

/** Asks the broker to describe the cluster; undefined when it does not answer. */
export async function probeKafka(config: Pick<TrajflowConfig, 'kafka'>, timeoutMs = 3000): Promise<ClusterInfo | undefined> {
  const admin: Admin = createKafka(config, { clientId: 'trajflow-probe', retries: 0, connectionTimeoutMs: Math.min(timeoutMs, 3000) }).admin();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), timeoutMs);
  });
  const ask = (async (): Promise<ClusterInfo | undefined> => {
    await admin.connect();
    const cluster = await admin.describeCluster();
    return {
      clusterId: cluster.clusterId,
      brokers: cluster.brokers.map((b) => `${b.host}:${b.port}`),
      controller: cluster.controller,
    };
  })().catch(() => undefined);
  try {
    return await Promise.race([ask, timeout]);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

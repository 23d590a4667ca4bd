// Asking a broker whether it is up (an admin client's describeCluster, bounded in time). The client comes from
// streams/kafka-client.ts, quiet: a broker that is still starting makes kafkajs log connection errors that are
// expected while we poll.
import type { Admin } from 'kafkajs';
import type { TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { createKafka } from '../../streams/kafka-client.js';

export interface ClusterInfo {
  readonly clusterId: string;
  readonly brokers: string[];
  readonly controller: number | null;
}

/** Asks the broker to describe the cluster; undefined when it does not answer. */
export async function probeKafka(config: Pick<TrajflowConfig, 'kafka'>, timeoutMs = 3000): Promise<ClusterInfo | undefined> {
  const admin: Admin = createKafka(config, { clientId: 'trajflow-probe', retries: 0, connectionTimeoutMs: Math.min(timeoutMs, 3000), quiet: true }).admin();
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
  })().catch((error: unknown) => {
    if (error instanceof ConfigError) throw error; // a refused login (streams/kafka-auth.ts): the settings are wrong, not the broker down
    return undefined;
  });
  try {
    return await Promise.race([ask, timeout]);
  } finally {
    clearTimeout(timer);
    await admin.disconnect().catch(() => undefined);
  }
}

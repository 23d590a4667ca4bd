// The high watermark of every partition of the steps topic, in one ListOffsets request per partition leader.
// kafkajs' admin asks for both ends of every partition, one request after the other, where the read barrier
// needs only the high end: this asks the cluster client kafkajs builds for its admin, producer and consumer
// (an internal of the pinned kafkajs fork, checked when it is taken) for the latest offsets alone, and falls back
// on the admin's two requests, with their retries, when that client is not there or a request fails.
import type { Admin, Kafka } from 'kafkajs';
import type { Offsets } from './read-barrier.js';

interface ListedTopic {
  readonly topic: string;
  readonly partitions: ReadonlyArray<{ readonly partition: number; readonly offset: string }>;
}

/** What is used of kafkajs' internal Cluster. */
interface ClusterClient {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  addTargetTopic(topic: string): Promise<void>;
  refreshMetadataIfNecessary(): Promise<void>;
  findTopicPartitionMetadata(topic: string): ReadonlyArray<{ readonly partitionId: number }>;
  fetchTopicsOffset(topics: ReadonlyArray<{ topic: string; fromBeginning: boolean; partitions: { partition: number }[] }>): Promise<ListedTopic[]>;
}

const CREATE_CLUSTER = 'private:Kafka:createCluster';
const METHODS = ['connect', 'disconnect', 'addTargetTopic', 'refreshMetadataIfNecessary', 'findTopicPartitionMetadata', 'fetchTopicsOffset'] as const;

/** A cluster client as kafkajs builds one for its admin (no topic auto-creation), or null when this kafkajs has none. */
export function clusterClientOf(kafka: Kafka): ClusterClient | null {
  const symbol = Object.getOwnPropertySymbols(kafka).find((s) => s.description === CREATE_CLUSTER);
  const create = symbol === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[symbol];
  if (typeof create !== 'function') return null;
  const cluster = create({ allowAutoTopicCreation: false }) as Record<string, unknown>;
  return METHODS.every((method) => typeof cluster[method] === 'function') ? (cluster as unknown as ClusterClient) : null;
}

export class HighWatermarks {
  private connected: Promise<void> | null = null;

  constructor(
    private readonly topic: string,
    private readonly admin: Admin,
    private readonly cluster: ClusterClient | null,
  ) {}

  /** Every partition's high watermark (read_committed: the last stable offset, as the consumer reads). */
  async fetch(): Promise<Offsets> {
    if (this.cluster) {
      const listed = await this.latest(this.cluster).catch(() => null);
      if (listed) return listed;
    }
    const offsets = await this.admin.fetchTopicOffsets(this.topic);
    return new Map(offsets.map((p) => [p.partition, BigInt(p.high)]));
  }

  async close(): Promise<void> {
    if (this.cluster && this.connected) await this.cluster.disconnect().catch(() => undefined);
  }

  /** The latest offsets in one request per leader; null when the topic's metadata lists no partition. */
  private async latest(cluster: ClusterClient): Promise<Offsets | null> {
    try {
      this.connected ??= cluster.connect().then(() => cluster.addTargetTopic(this.topic));
      await this.connected;
      await cluster.refreshMetadataIfNecessary();
      const partitions = cluster.findTopicPartitionMetadata(this.topic).map((p) => ({ partition: p.partitionId }));
      if (partitions.length === 0) return null;
      const [listed] = await cluster.fetchTopicsOffset([{ topic: this.topic, fromBeginning: false, partitions }]);
      return listed && listed.partitions.length === partitions.length ? new Map(listed.partitions.map((p) => [p.partition, BigInt(p.offset)])) : null;
    } catch (error) {
      // A moved leader or a lost connection: the next request connects again, which fetches fresh metadata.
      this.connected = null;
      throw error;
    }
  }
}

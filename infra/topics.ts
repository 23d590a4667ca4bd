// Every Kafka topic trajflow uses, in one declarative list, and ensureTopics() that makes the broker match it:
// creates missing topics, adds partitions when a topic has fewer, and reports (never changes or deletes)
// configs that differ, since someone may have tuned them on purpose.
import kafkajs from 'kafkajs';
import type { Admin } from 'kafkajs';
import { topicName, type TrajflowConfig } from '../core/config.js';
import { ServiceError } from '../core/errors.js';
import { createKafka } from '../streams/kafka-client.js';
import { clusterReplication } from './kafka/properties.js';

const { ConfigResourceTypes } = kafkajs;

export interface TopicSpec {
  /** Name under the prefix: the full name is `${topicPrefix}.${name}` (see topicName). */
  readonly name: string;
  readonly partitions: number;
  /** Topic-level configs set at creation and checked afterwards. */
  readonly configs: Readonly<Record<string, string>>;
  /** What the record key is (so readers know what partitioning guarantees). */
  readonly key: string;
  readonly description: string;
}

const FOREVER = { 'cleanup.policy': 'delete', 'retention.ms': '-1' } as const;
const SEVEN_DAYS_MS = String(7 * 24 * 60 * 60 * 1000);

export const topicSpecs: readonly TopicSpec[] = [
  { name: 'env.steps', partitions: 4, configs: FOREVER, key: 'groupId', description: 'one event per environment step; keyed by group so a group stays in order on one partition' },
  { name: 'trajectories', partitions: 4, configs: FOREVER, key: 'groupId', description: 'finished (or abandoned) episodes with their steps' },
  {
    name: 'samples',
    partitions: 4,
    configs: { 'cleanup.policy': 'delete', 'retention.ms': SEVEN_DAYS_MS },
    key: 'groupId',
    description: 'training samples with advantages, read by the learner',
  },
  { name: 'learner.steps', partitions: 1, configs: FOREVER, key: 'runId', description: 'one event per optimiser step (losses, KL, entropy, grad norm)' },
  {
    name: 'policy.versions',
    partitions: 1,
    configs: { 'cleanup.policy': 'compact' },
    key: 'runId',
    description: 'published policy weights; compacted so the latest version per run survives',
  },
  {
    name: 'policy.weights',
    partitions: 1,
    // Compaction runs on closed segments only: 64 MiB ones let retired versions' chunks go soon after their tombstones.
    configs: { 'cleanup.policy': 'compact', 'segment.bytes': String(64 * 1024 * 1024) },
    key: 'runId/v<version>/<chunk index | manifest>',
    description: "policy weights in chunks with a manifest (count, bytes, SHA-256), for actors without the learner's disk; old versions retired by tombstones",
  },
  { name: 'alerts', partitions: 1, configs: FOREVER, key: 'runId', description: 'collapse early-warnings' },
  {
    name: 'deadletter',
    partitions: 1,
    configs: FOREVER,
    key: 'the source message key',
    description: 'records a processor could not handle, with the reason and source topic/partition/offset',
  },
  {
    name: 'rollout.stats',
    partitions: 1,
    configs: FOREVER,
    key: 'runId',
    description: 'rollout statistics per batch and per group (reward mean/std, in-group std, success, pass@k, pass^k)',
  },
  {
    name: 'evaluations',
    partitions: 1,
    configs: FOREVER,
    key: 'runId',
    description: 'held-out evaluations of policy versions (greedy success beside the random policy on the same tasks)',
  },
  {
    name: 'processors.state',
    partitions: 1,
    configs: { 'cleanup.policy': 'compact' },
    key: 'consumer group|run|episode',
    description: 'episodes the processors already turned into output; written in their transactions (exactly-once output)',
  },
  { name: 'schemas', partitions: 1, configs: { 'cleanup.policy': 'compact' }, key: 'schema fingerprint', description: 'the Avro schema registry' },
];

export interface TopicState {
  readonly partitions: number;
  readonly configs: Readonly<Record<string, string>>;
}

export interface TopicDiff {
  readonly topic: string;
  /** Partitions to add (the spec wants more than the topic has). */
  readonly addPartitions: number;
  /** The topic has more partitions than the spec: reported only (Kafka cannot remove partitions). */
  readonly extraPartitions: number;
  readonly configs: { readonly name: string; readonly want: string; readonly have: string | undefined }[];
}

/** Compares a spec with what the broker has. Pure; `topic` is the full name. */
export function diffTopic(spec: TopicSpec, topic: string, state: TopicState): TopicDiff {
  const configs = Object.entries(spec.configs)
    .filter(([name, want]) => state.configs[name] !== want)
    .map(([name, want]) => ({ name, want, have: state.configs[name] }));
  return {
    topic,
    addPartitions: Math.max(0, spec.partitions - state.partitions),
    extraPartitions: Math.max(0, state.partitions - spec.partitions),
    configs,
  };
}

export function isInSync(diff: TopicDiff): boolean {
  return diff.addPartitions === 0 && diff.extraPartitions === 0 && diff.configs.length === 0;
}

export interface EnsureTopicsReport {
  readonly created: string[];
  readonly existing: string[];
  /** Topics whose partition count was raised to the spec's. */
  readonly partitionsAdded: { topic: string; from: number; to: number }[];
  /** Differences left alone: configs that differ, or more partitions than the spec. */
  readonly differences: TopicDiff[];
}

/** Human-readable lines for the differences ensureTopics left alone. */
export function describeDifferences(differences: readonly TopicDiff[]): string[] {
  const lines: string[] = [];
  for (const d of differences) {
    if (d.extraPartitions > 0) lines.push(`${d.topic}: has ${d.extraPartitions} more partition(s) than the spec (kept)`);
    for (const c of d.configs)
      lines.push(`${d.topic}: ${c.name}=${c.have ?? '(unset)'} but the spec says ${c.want} (not changed; alter it with kafka-configs if you want the spec's value)`);
  }
  return lines;
}

async function readState(admin: Admin, topics: string[]): Promise<Map<string, TopicState>> {
  const states = new Map<string, TopicState>();
  if (topics.length === 0) return states;
  const metadata = await admin.fetchTopicMetadata({ topics });
  const described = await admin.describeConfigs({
    includeSynonyms: false,
    resources: topics.map((name) => ({ type: ConfigResourceTypes.TOPIC, name })),
  });
  const configsByTopic = new Map(described.resources.map((r) => [r.resourceName, Object.fromEntries(r.configEntries.map((e) => [e.configName, e.configValue]))]));
  for (const topic of metadata.topics) {
    states.set(topic.name, { partitions: topic.partitions.length, configs: configsByTopic.get(topic.name) ?? {} });
  }
  return states;
}

/** How long ensureTopics retries what kafkajs marks retriable: a broker seconds after its start answers "This server does not host this topic-partition" or "The coordinator is loading" for a while. */
const ENSURE_RETRY_MS = 30_000;

/** True when a kafkajs error in the cause chain is one kafkajs marks retriable (a wrapping ServiceError's own flag does not count). */
export function retriableKafkaError(error: unknown): boolean {
  for (let cause = error; cause instanceof Error; cause = (cause as { cause?: unknown }).cause) {
    if (cause.name.startsWith('KafkaJS') && (cause as { retriable?: unknown }).retriable === true) return true;
  }
  return false;
}

/**
 * Creates missing topics, raises partition counts, and reports other differences. Uses `admin` if given
 * (left connected). Every step is idempotent, so a retriable failure is retried as a whole for up to 30 s.
 */
export async function ensureTopics(config: TrajflowConfig, admin?: Admin, specs: readonly TopicSpec[] = topicSpecs): Promise<EnsureTopicsReport> {
  const deadline = Date.now() + ENSURE_RETRY_MS;
  for (;;) {
    try {
      return await ensureTopicsOnce(config, admin, specs);
    } catch (error) {
      if (!retriableKafkaError(error) || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function ensureTopicsOnce(config: TrajflowConfig, admin: Admin | undefined, specs: readonly TopicSpec[]): Promise<EnsureTopicsReport> {
  const own = admin === undefined;
  const client = admin ?? createKafka(config, { clientId: 'trajflow-topics', retries: 5, quiet: true }).admin();
  try {
    if (own) await client.connect();
    const existingNames = new Set(await client.listTopics());
    const wanted = specs.map((spec) => ({ spec, topic: topicName(config, spec.name) }));
    const missing = wanted.filter((w) => !existingNames.has(w.topic));
    const present = wanted.filter((w) => existingNames.has(w.topic));
    if (missing.length > 0) {
      await client.createTopics({
        waitForLeaders: true,
        topics: missing.map(({ spec, topic }) => ({
          topic,
          numPartitions: spec.partitions,
          // The managed cluster: 3 replicas from 3 brokers on (1 for one broker); -1: the external cluster's default.replication.factor
          replicationFactor: config.kafka.managed ? clusterReplication(config.kafka.nodes).replicationFactor : -1,
          configEntries: Object.entries(spec.configs).map(([name, value]) => ({ name, value })),
        })),
      });
    }
    const states = await readState(
      client,
      present.map((p) => p.topic),
    );
    const partitionsAdded: EnsureTopicsReport['partitionsAdded'] = [];
    const differences: TopicDiff[] = [];
    const toGrow: { topic: string; count: number }[] = [];
    for (const { spec, topic } of present) {
      const state = states.get(topic);
      if (!state) continue;
      const diff = diffTopic(spec, topic, state);
      if (diff.addPartitions > 0) {
        toGrow.push({ topic, count: spec.partitions });
        partitionsAdded.push({ topic, from: state.partitions, to: spec.partitions });
      }
      if (diff.extraPartitions > 0 || diff.configs.length > 0) differences.push({ ...diff, addPartitions: 0 });
    }
    if (toGrow.length > 0) {
      await client.createPartitions({ topicPartitions: toGrow, validateOnly: false });
      await partitionsVisible(client, toGrow);
    }
    return { created: missing.map((m) => m.topic), existing: present.map((p) => p.topic), partitionsAdded, differences };
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    throw new ServiceError(`could not create or check topics on ${config.kafka.brokers.join(',')}: ${(error as Error).message}. Is the broker up ('trajflow status')?`, {
      retriable: true,
      cause: error,
    });
  } finally {
    if (own) await client.disconnect().catch(() => undefined);
  }
}

/**
 * Waits until the metadata shows the grown partitions with their leaders. A KRaft broker (Kafka 4.x) answers
 * CreatePartitions before its metadata cache has them: a Metadata request right after is refused with
 * UNKNOWN_TOPIC_OR_PARTITION, which kafkajs' admin does not retry — so `up` returns only once a producer can use them.
 */
async function partitionsVisible(client: Admin, grown: readonly { topic: string; count: number }[], timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const { topics } = await client.fetchTopicMetadata({ topics: grown.map((g) => g.topic) });
      const ready = grown.every((g) => {
        const partitions = topics.find((t) => t.name === g.topic)?.partitions ?? [];
        return partitions.length >= g.count && partitions.every((p) => p.leader >= 0);
      });
      if (ready) return;
    } catch (error) {
      if (!(error as { retriable?: boolean }).retriable || Date.now() > deadline) throw error;
    }
    if (Date.now() > deadline)
      throw new ServiceError(`the partitions added to ${grown.map((g) => g.topic).join(', ')} did not appear in the metadata within ${timeoutMs / 1000} s`, { retriable: true });
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * Deletes every topic under `${prefix}.`. Benches and integration tests isolate each run under a prefix of
 * its own; left behind, their topics pile up on a long-lived broker and slow it (leftover bench topics had
 * depressed the raw ceiling of `bench processors`: docs/results/processors.md). Call after every producer
 * that wrote to them is closed (a kafkajs
 * producer keeps asking for a deleted topic's metadata; see bench/backbone.ts).
 */
export async function deleteTopicsUnder(config: TrajflowConfig, prefix: string = config.topicPrefix): Promise<number> {
  const admin = createKafka(config, { quiet: true }).admin();
  await admin.connect();
  try {
    const ours = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
    for (let i = 0; i < ours.length; i += 100) await admin.deleteTopics({ topics: ours.slice(i, i + 100), timeout: 60_000 });
    return ours.length;
  } finally {
    await admin.disconnect();
  }
}

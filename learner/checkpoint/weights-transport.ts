// How a policy version's weights reach the actors (docs/concepts/versions-and-staleness.md#where-the-weights-travel):
// `file` names the learner's checkpoint directory (a file:// weightsUri; the readers must see its disk),
// `topic` also writes them to <prefix>.policy.weights (a kafka: weightsUri; the readers need only Kafka).
// TRAJFLOW_WEIGHTS chooses; unset (`auto`) it is `file` with trajflow's own broker, which listens on
// 127.0.0.1 so every part is on this machine, and `topic` with an external cluster, where they may not be.
import type { Kafka } from 'kafkajs';
import type { TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import type { PolicyVersionEvent } from '../../schemas/index.js';
import { checkpointFromBlob, checkpointPath, CheckpointError, readCheckpoint, type Checkpoint } from './checkpoint.js';
import { parseWeightsTopicUri } from './weights-chunks.js';
import { openWeightsReader, type WeightsReader, type WeightsReaderOptions } from './weights-topic.js';

export type WeightsTransport = 'file' | 'topic';

export function weightsTransport(config: TrajflowConfig, env: NodeJS.ProcessEnv = process.env): WeightsTransport {
  const raw = env.TRAJFLOW_WEIGHTS || 'auto';
  if (raw === 'file' || raw === 'topic') return raw;
  if (raw === 'auto') return config.kafka.managed ? 'file' : 'topic';
  throw new ConfigError(
    `TRAJFLOW_WEIGHTS='${raw}' is not a weights transport: use topic (through <prefix>.policy.weights), file (the learner's checkpoint directory) or auto (unset).`,
  );
}

/** Where a reader of the weights topic follows it: the cluster, the topic, the run. */
export interface WeightsTopicSource {
  readonly kafka: Kafka;
  readonly topic: string;
  readonly runId: string;
}

/** Reads the checkpoints version events name; the weights topic is followed from the first kafka: weightsUri on. */
export interface VersionCheckpoints {
  read(event: Pick<PolicyVersionEvent, 'weightsUri' | 'checksum' | 'version'>): Promise<Checkpoint>;
  close(): Promise<void>;
}

/** `source`: where this part may read the weights topic (none: only file:// weightsUris can be read). */
export function versionCheckpoints(source: WeightsTopicSource | undefined, options: WeightsReaderOptions = {}): VersionCheckpoints {
  let reader: WeightsReader | undefined;
  return {
    async read(event) {
      const onTopic = parseWeightsTopicUri(event.weightsUri);
      // A file:// URI, checked against the event's checksum.
      if (onTopic === null) return readCheckpoint(checkpointPath(event.weightsUri), event.checksum);
      if (source === undefined) throw new CheckpointError(`weightsUri ${event.weightsUri} is on a weights topic, and this part was given no Kafka to read it from`);
      if (onTopic.topic !== source.topic || onTopic.runId !== source.runId || onTopic.version !== event.version) {
        throw new CheckpointError(
          `weightsUri ${event.weightsUri} names another topic, run or version than ${source.topic}, ${source.runId} v${event.version}, the ones this part reads`,
        );
      }
      reader ??= openWeightsReader(source.kafka, source.topic, source.runId, options);
      const { manifest, bytes } = await reader.load(event.version, event.checksum);
      return checkpointFromBlob(manifest.checkpoint, bytes, event.weightsUri, event.checksum);
    },
    async close() {
      await reader?.close();
    },
  };
}

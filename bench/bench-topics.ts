// Benches isolate each measurement under a topic prefix of its own. Without deleting them afterwards a bench
// leaves its steps, trajectories and samples on the broker: 90 runs of `bench processors` left 53 GB.
import type { TrajflowConfig } from '../core/config.js';
import { createKafka } from '../infra/kafka/client.js';

/** Deletes every topic under `${prefix}.`; call after every producer that wrote to them is closed (bench/backbone.ts says why). */
export async function deletePrefixedTopics(config: TrajflowConfig, prefix: string = config.topicPrefix): Promise<void> {
  const admin = createKafka(config, { quiet: true }).admin();
  await admin.connect();
  try {
    const ours = (await admin.listTopics()).filter((topic) => topic.startsWith(`${prefix}.`));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours });
  } finally {
    await admin.disconnect();
  }
}

// Helpers of the processors' fault tests: a second member that takes a share of the partitions (forcing a
// rebalance), and the fresh pipeline a supervisor starts after a failure, run until every episode has a sample.
import type { Consumer } from 'kafkajs';
import { lastValueFrom, toArray } from 'rxjs';
import { topicName, type TrajflowConfig } from '../../../core/config.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import { classifyDecodeError, createReplay, eventDecoder, type Backbone } from '../../../streams/index.js';
import { waitFor } from '../../helpers/kafka.js';
import { testProcessing } from './processing.js';

/** A plain kafkajs member of `groupId` on the steps topic: it holds its share of the partitions and commits nothing. */
export async function joinIntruder(backbone: Backbone, config: TrajflowConfig, groupId: string): Promise<Consumer> {
  const intruder = backbone.kafka.consumer({ groupId, sessionTimeout: 10_000 });
  await intruder.connect();
  await intruder.subscribe({ topics: [topicName(config, 'env.steps')], fromBeginning: true });
  await intruder.run({ autoCommit: false, eachMessage: async () => undefined });
  return intruder;
}

/** The episode id of every sample on the samples topic (read_committed). */
export async function sampleEpisodeIds(backbone: Backbone, config: TrajflowConfig): Promise<string[]> {
  const replay = await createReplay(backbone.kafka, { topic: topicName(config, 'samples'), decode: eventDecoder(backbone.codec, 'sample'), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value.episodeId);
}

/** What the supervisor does after a failure: a fresh pipeline of `groupId`, run until `episodes` episodes have a sample; returns the samples' episode ids. */
export async function resumeUntilSampled(backbone: Backbone, config: TrajflowConfig, groupId: string, episodes: number): Promise<string[]> {
  const fresh = await startProcessors(backbone, { consumerGroupId: groupId, processing: testProcessing, groupSize: 4, flushIntervalMs: 50 });
  try {
    await waitFor(async () => new Set(await sampleEpisodeIds(backbone, config)).size >= episodes, 'a sample of every episode', 60_000, 500);
  } finally {
    await fresh.close();
  }
  return sampleEpisodeIds(backbone, config);
}

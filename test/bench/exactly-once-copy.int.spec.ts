// Integration (real Kafka): the exactly-once copy of `bench processors` copies every step's bytes once into
// both output topics in committed transactions, and commits the steps' offsets with them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { retryRetriable } from '../../streams/retry.js';
import { classifyDecodeError, connectBackbone, createReplay, StepPublisher } from '../../streams/index.js';
import { exactlyOnceCopyThroughput } from '../../bench/exactly-once-copy.js';
import { groupSteps } from '../../bench/load/episodes.js';
import { uniqueName } from '../helpers/kafka.js';

test('the exactly-once copy writes every step’s bytes once to both outputs, committed, with the steps’ offsets', { timeout: 120_000 }, async () => {
  const backbone = await connectBackbone(loadConfig(), { clientId: 'test-bench-copy' });
  const config = { ...loadConfig(), topicPrefix: uniqueName('copy') };
  await ensureTopics(config);
  const local = { ...backbone, config };
  const admin = backbone.kafka.admin();
  await admin.connect();
  try {
    const stepsTopic = topicName(config, 'env.steps');
    const steps = groupSteps('copy', 12, 4, 3);
    await new StepPublisher(backbone.producer, stepsTopic).publishAll(steps);

    const result = await exactlyOnceCopyThroughput(local, steps.length);
    assert.ok(Number.isFinite(result.stepsPerSecond) && result.stepsPerSecond > 0);
    assert.ok(Number.isFinite(result.cpu.processMicros) && result.cpu.processMicros > 0);

    // Every step's bytes are in each output once (the copy's messages have null keys, so they are compared
    // as totals, not per partition), and only committed transactions are read (a replay reads committed).
    const bytesOf = async (topic: string): Promise<number> => {
      const replay = await createReplay(backbone.kafka, { topic, decode: (bytes) => bytes!, classify: classifyDecodeError });
      const values = await lastValueFrom(replay.events$.pipe(toArray()));
      return values.reduce((sum, envelope) => sum + envelope.value.length, 0);
    };
    const input = await bytesOf(stepsTopic);
    assert.equal(await bytesOf(topicName(config, 'trajectories')), input);
    assert.equal(await bytesOf(topicName(config, 'samples')), input);

    // The steps' offsets were committed in the transactions: the group is at the end of every partition.
    const groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((g) => g.startsWith('bench-copy-'));
    const ends = await retryRetriable(() => admin.fetchTopicOffsets(stepsTopic));
    const committedSomewhere = await Promise.all(groups.map((groupId) => retryRetriable(() => admin.fetchOffsets({ groupId, topics: [stepsTopic] }))));
    const atEnd = committedSomewhere.some(([offsets]) => ends.every((end) => offsets!.partitions.find((p) => p.partition === end.partition)?.offset === end.high));
    assert.ok(atEnd, 'a copy group committed every steps partition at its end');
  } finally {
    await admin.disconnect();
    await backbone.close();
  }
});

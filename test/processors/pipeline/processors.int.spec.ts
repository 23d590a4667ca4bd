// Integration (real Kafka): steps in → samples out through the processors, exactly once across a
// SIGKILL and restart.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { ensureTopics } from '../../../infra/topics.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, StepPublisher, type Backbone } from '../../../streams/index.js';
import type { TrainingSampleEvent } from '../../../schemas/index.js';
import { episodeSteps, groupSteps } from '../../../bench/load/episodes.js';

const episodesOf = (runId: string, groupId: string, episodes: number[]) =>
  episodes.flatMap((episode) => episodeSteps({ runId, groupId, groupSize: 4, episode, length: 3, finalReward: episode % 2 }));
import { uniqueName, waitFor } from '../../helpers/kafka.js';
import { testProcessing } from '../helpers/processing.js';
import { retryRetriable } from '../../../streams/retry.js';

let backbone: Backbone;
before(async () => {
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-processors' });
});
after(async () => {
  await backbone.close();
});

async function isolatedConfig(): Promise<TrajflowConfig> {
  const config = { ...loadConfig(), topicPrefix: uniqueName('proc') };
  await ensureTopics(config);
  return config;
}

async function readSamples(config: TrajflowConfig): Promise<TrainingSampleEvent[]> {
  const replay = await createReplay(backbone.kafka, {
    topic: topicName(config, 'samples'),
    decode: eventDecoder(backbone.codec, 'sample'),
    classify: classifyDecodeError,
  });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value);
}

test('steps in, samples out: every complete group becomes one sample per episode, with GRPO advantages', { timeout: 120_000 }, async () => {
  const config = await isolatedConfig();
  const steps = groupSteps('run-a', 6, 4);
  await new StepPublisher(backbone.producer, topicName(config, 'env.steps')).publishAll(steps);

  const backboneForConfig = { ...backbone, config };
  const handle = await startProcessors(backboneForConfig, { consumerGroupId: uniqueName('processors'), processing: testProcessing, groupSize: 4, flushIntervalMs: 50 });
  // The phase timing `bench processors` reports: one entry per committed transaction, each phase measured.
  handle.emitter.phaseLog = [];
  await waitFor(() => handle.emitter.stats.samples >= 24, '24 samples written', 60_000);
  await handle.close();
  assert.equal(handle.emitter.phaseLog.length, handle.emitter.stats.transactions);
  assert.ok(
    handle.emitter.phaseLog.some((t) => t.sendMs > 0 && t.offsetsMs > 0 && t.commitMs > 0),
    JSON.stringify(handle.emitter.phaseLog),
  );
  // The hand-over to the worker thread and back: the main thread's round trip less the worker's own time.
  assert.ok(
    handle.emitter.phaseLog.every((t) => t.handOffMs >= 0 && t.handOffMs < 60_000),
    JSON.stringify(handle.emitter.phaseLog),
  );

  const samples = await readSamples(config);
  assert.equal(samples.length, 24);
  assert.equal(new Set(samples.map((s) => s.sampleId)).size, 24);
  for (const sample of samples) {
    // Episodes alternate reward 0 and 1 within a group of 4: mean 0.5, unbiased std √(1/3); GRPO gives ±0.866.
    const expected = (sample.reward - 0.5) / (Math.sqrt(1 / 3) + 1e-6);
    const actionAdvantages = sample.advantages.filter((_, i) => sample.lossMask[i] === 1);
    assert.ok(
      actionAdvantages.every((a) => Math.abs(a - expected) < 1e-5),
      `advantages of ${sample.episodeId}`,
    );
    assert.equal(sample.groupSize, 4);
  }

  const replay = await createReplay(backbone.kafka, {
    topic: topicName(config, 'rollout.stats'),
    decode: eventDecoder(backbone.codec, 'rollout_stats'),
    classify: classifyDecodeError,
  });
  const stats = (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value);
  const batches = stats.filter((s) => s.scope === 'batch');
  const groups = stats.filter((s) => s.scope === 'group');
  assert.equal(
    batches.reduce((n, b) => n + b.trajectories, 0),
    24,
    'batch statistics cover every trajectory once',
  );
  assert.deepEqual(groups.map((g) => g.groupId).sort(), Array.from({ length: 6 }, (_, g) => `run-a-g${g}`).sort());
  for (const group of groups) {
    assert.equal(group.rewardMean, 0.5);
    assert.equal(group.successRate, 0.5);
    // pass@1 = c/n = 0.5; pass^4 = C(2,4)/C(4,4) = 0 (all four must succeed).
    assert.equal(group.passAtK['1'], 0.5);
    assert.equal(group.passHatK['4'], 0);
  }
});

test('a dead-lettered step is committed with no output after it, so a restart does not dead-letter it again', { timeout: 120_000 }, async () => {
  const config = await isolatedConfig();
  const consumerGroupId = uniqueName('processors-dead');
  const stepsTopic = topicName(config, 'env.steps');
  await new StepPublisher(backbone.producer, stepsTopic).publishAll(groupSteps('run-d', 2, 4));
  const start = () => startProcessors({ ...backbone, config }, { consumerGroupId, processing: testProcessing, groupSize: 4, flushIntervalMs: 50 });
  const admin = backbone.kafka.admin();
  await admin.connect();
  let handle = await start();
  try {
    await waitFor(() => handle.emitter.stats.samples >= 8, '8 samples written', 60_000);
    // Garbage last, under several keys (several partitions): nothing is written after it.
    const garbage = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (const key of garbage) await backbone.producer.sendRaw(stepsTopic, { key, value: Buffer.from(`not avro ${key}`) });
    const lagging = async () => {
      const ends = await admin.fetchTopicOffsets(stepsTopic);
      const [committed] = await retryRetriable(() => admin.fetchOffsets({ groupId: consumerGroupId, topics: [stepsTopic] }));
      return ends.filter((end) => committed!.partitions.find((p) => p.partition === end.partition)?.offset !== end.high);
    };
    await waitFor(async () => (await lagging()).length === 0, 'the committed offsets to pass the dead-lettered steps', 30_000, 200);
    const letters = () => countDeadLetters(config);
    await waitFor(async () => (await letters()) === garbage.length, `${garbage.length} dead letters`, 30_000, 200);

    // A restart resumes after them: no dead letter again (a new step proves the restarted pipeline has read past them).
    await handle.close();
    handle = await start();
    await new StepPublisher(backbone.producer, stepsTopic).publishAll(groupSteps('run-d', 1, 4, 3, 2));
    await waitFor(() => handle.emitter.stats.samples >= 4, "the new group's samples after the restart", 60_000);
    assert.equal(await letters(), garbage.length, 'each garbage message dead-lettered once');
    assert.deepEqual(await lagging(), []);
  } finally {
    await handle.close();
    await admin.disconnect();
  }
});

async function countDeadLetters(config: TrajflowConfig): Promise<number> {
  const replay = await createReplay(backbone.kafka, { topic: topicName(config, 'deadletter'), decode: (bytes) => bytes, classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).length;
}

const child = fileURLToPath(new URL('../helpers/processors-child.ts', import.meta.url));

function startChild(prefix: string, consumerGroupId: string, instance = 0) {
  const proc = spawn(process.execPath, ['--import', 'tsx', child, prefix, consumerGroupId, String(instance)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let samples = 0;
  let partitions = 0;
  createInterface({ input: proc.stdout }).on('line', (line) => {
    const report = JSON.parse(line) as { event: string; samples?: number; partitions?: number };
    if (report.event === 'flushed') samples = report.samples!;
    if (report.event === 'assigned') partitions = report.partitions!;
  });
  const exited = new Promise<void>((resolve) => proc.on('exit', () => resolve()));
  return { proc, exited, samples: () => samples, partitions: () => partitions };
}

test('processors killed (SIGKILL) and restarted mid-stream write every sample exactly once', { timeout: 180_000 }, async () => {
  const config = await isolatedConfig();
  const consumerGroupId = uniqueName('processors-crash');
  const publisher = new StepPublisher(backbone.producer, topicName(config, 'env.steps'));
  // A straggler group goes first with 3 of its 4 episodes: while it is open, the committed offset of its
  // partition stays at its first step, so the groups finished after it are read again after the crash.
  const straggler = episodesOf('run-b', 'run-b-straggler', [0, 1, 2]);
  await publisher.publishAll(straggler);
  // Garbage in the straggler's partition, after its first step: read again after the crash, so a dead
  // letter written outside the offsets' transaction would be written twice.
  const stepsTopic = topicName(config, 'env.steps');
  const garbage = (tag: string) => backbone.producer.sendRaw(stepsTopic, { key: 'run-b-straggler', value: Buffer.from(`garbage ${tag}`) });
  for (const tag of ['a', 'b', 'c']) await garbage(tag);
  await publisher.publishAll(groupSteps('run-b', 10, 4, 3, 0));

  const first = startChild(config.topicPrefix, consumerGroupId);
  await waitFor(() => first.samples() > 0, 'the first instance to write samples', 90_000);
  await publisher.publishAll(groupSteps('run-b', 10, 4, 3, 10));
  await garbage('d');
  first.proc.kill('SIGKILL');
  await first.exited;

  await publisher.publishAll([...episodesOf('run-b', 'run-b-straggler', [3]), ...groupSteps('run-b', 9, 4, 3, 20)]);
  const second = startChild(config.topicPrefix, consumerGroupId);
  try {
    await waitFor(async () => (await readSamples(config)).length >= 120, 'all 120 samples after the restart', 120_000, 500);
  } finally {
    second.proc.kill('SIGTERM');
    await second.exited;
  }
  const samples = await readSamples(config);
  const ids = samples.map((s) => s.sampleId);
  assert.equal(new Set(ids).size, 120, 'every episode has a sample');
  assert.equal(ids.length, 120, `no sample written twice (${ids.length - new Set(ids).size} duplicates)`);
  assert.equal(await countDeadLetters(config), 4, 'each garbage message dead-lettered once across the crash');
});

test('two processes in one consumer group split the partitions and together write the same samples as one', { timeout: 240_000 }, async () => {
  const steps = groupSteps('run-c', 24, 4);
  const configs = [await isolatedConfig(), await isolatedConfig()];
  await new StepPublisher(backbone.producer, topicName(configs[0]!, 'env.steps')).publishAll(steps);

  // One process alone.
  const alone = startChild(configs[0]!.topicPrefix, uniqueName('processors-alone'));
  try {
    await waitFor(async () => (await readSamples(configs[0]!)).length >= 96, 'one process to write 96 samples', 120_000, 500);
  } finally {
    alone.proc.kill('SIGTERM');
    await alone.exited;
  }
  // Two processes, one consumer group.
  const group = uniqueName('processors-pair');
  const pair = [startChild(configs[1]!.topicPrefix, group, 0), startChild(configs[1]!.topicPrefix, group, 1)];
  try {
    // Publish once both members hold partitions, so that the work is split rather than raced for.
    await waitFor(() => pair.every((p) => p.partitions() > 0) && pair[0]!.partitions() + pair[1]!.partitions() === 4, 'both processes to be assigned partitions', 90_000);
    await new StepPublisher(backbone.producer, topicName(configs[1]!, 'env.steps')).publishAll(steps);
    await waitFor(async () => (await readSamples(configs[1]!)).length >= 96, 'two processes to write 96 samples', 150_000, 500);
  } finally {
    for (const p of pair) p.proc.kill('SIGTERM');
    await Promise.all(pair.map((p) => p.exited));
  }
  assert.ok(
    pair.every((p) => p.samples() > 0),
    `both processes wrote samples (${pair.map((p) => p.samples()).join(', ')})`,
  );
  const key = (s: TrainingSampleEvent) => JSON.stringify([s.sampleId, s.advantages, s.lossMask, s.tokenIds]);
  const one = (await readSamples(configs[0]!)).map(key).sort();
  const two = (await readSamples(configs[1]!)).map(key).sort();
  assert.equal(two.length, 96, 'no sample twice');
  assert.deepEqual(two, one);
});

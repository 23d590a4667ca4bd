// Integration (real Kafka, two processors instances): steps published by librdkafka (Debian's
// python3-confluent-kafka) with its default partitioner (consistent_random, CRC32) beside one with
// murmur2_random, so a group's steps land on two partitions of a 4-partition steps topic. The processors move
// each step to its group's home partition (murmur2, as the Java client) before assembling it, so every group is
// assembled whole by one instance: its trajectories and samples are readable within 10 s of its last episode's
// end, with or without the announced group size, and no group is split into two partial ones.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { loadConfig, projectRoot, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { startProcessors, type ProcessorsHandle } from '../../processors/pipeline/processor.js';
import { homePartition } from '../../processors/pipeline/home-partition.js';
import { connectBackbone, type Backbone } from '../../streams/index.js';
import { aptUnavailable, ensureDebianPackages, run } from '../examples/debian-packages.js';
import { readEvents, uniqueName, waitFor } from '../helpers/kafka.js';
import { testProcessing } from '../processors/helpers/processing.js';

const PYTHON = '/usr/bin/python3';
const SCRIPT = join(projectRoot, 'test', 'interop', 'python', 'partitioner_producer.py');
const INSTALL_TIMEOUT_MS = 8 * 60_000;
const GROUPS = 4;
const EPISODES = 3;

interface Published {
  groupId: string;
  episodeId: string;
  steps: number;
  lastEventTimeMs: number;
  partitions: number[];
}

const skip = aptUnavailable();
let backbone: Backbone;
const handles: ProcessorsHandle[] = [];

before(
  async () => {
    if (skip !== null) return;
    await ensureDebianPackages(PYTHON, ['confluent_kafka', 'avro.schema', 'avro.io'], ['python3-confluent-kafka', 'python3-avro'], INSTALL_TIMEOUT_MS);
    backbone = await connectBackbone(loadConfig(), { clientId: 'test-librdkafka-partitioner' });
  },
  { timeout: INSTALL_TIMEOUT_MS + 30_000 },
);

after(async () => {
  for (const handle of handles) await handle.close();
  await backbone?.close();
});

async function publish(config: TrajflowConfig, runId: string, mode: 'announce' | 'silent'): Promise<Published[]> {
  const args = [SCRIPT, backbone.config.kafka.brokers.join(','), topicName(config, 'env.steps'), runId, String(GROUPS), String(EPISODES), mode];
  const result = await run(PYTHON, args, { timeoutMs: 60_000 });
  assert.equal(result.code, 0, `partitioner_producer.py failed:\n${result.output}`);
  return result.output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Published);
}

test('librdkafka’s default partitioner beside murmur2: every group whole, its trajectories and samples within 10 s', { skip: skip ?? false, timeout: 120_000 }, async () => {
  const config: TrajflowConfig = { ...backbone.config, topicPrefix: uniqueName('rdkafka').replace(/\./g, '-') };
  await ensureTopics(config);
  const consumerGroupId = uniqueName('processors');
  for (let i = 0; i < 2; i++) {
    handles.push(await startProcessors({ ...backbone, config }, { consumerGroupId, processing: testProcessing, groupSize: 8, flushIntervalMs: 50 }));
  }
  // Both members hold partitions: a group whose steps sit on two partitions could be split between them.
  await waitFor(
    () => handles.every((h) => h.consumer.stats.assignedPartitions > 0) && handles.reduce((n, h) => n + h.consumer.stats.assignedPartitions, 0) === 4,
    'both instances assigned',
    60_000,
  );

  const announced = await publish(config, uniqueName('py-a').replace(/\./g, '-'), 'announce');
  const silent = await publish(config, uniqueName('py-s').replace(/\./g, '-'), 'silent');
  const published = [...announced, ...silent];
  const lastEnd = Math.max(...published.map((p) => p.lastEventTimeMs));
  assert.equal(published.length, 2 * GROUPS * EPISODES);

  // The setting is real: some group's steps went to two partitions, some steps away from their home.
  const partitionsOfGroup = new Map<string, Set<number>>();
  for (const p of published) for (const partition of p.partitions) partitionsOfGroup.set(p.groupId, (partitionsOfGroup.get(p.groupId) ?? new Set()).add(partition));
  assert.ok(
    [...partitionsOfGroup.values()].some((parts) => parts.size > 1),
    'no group landed on two partitions',
  );
  assert.ok(
    published.some((p) => p.partitions.some((partition) => partition !== homePartition(p.groupId, 4))),
    'no step away from its home',
  );

  const runs = new Set(published.map((p) => p.episodeId.split('-g')[0]));
  let visibleAt = 0;
  let seen = '';
  const failures: string[] = [];
  for (const [i, h] of handles.entries()) h.done.catch((error: unknown) => failures.push(`instance ${i}: ${String(error)}`));
  await waitFor(
    async () => {
      // A pipeline that failed (no supervisor here, unlike `trajflow processors`) would only show as a timeout.
      if (failures.length > 0) throw new Error(`a processors pipeline failed: ${failures.join('; ')}`);
      const [trajectories, samples] = await Promise.all([readEvents(backbone, config, 'trajectories', 'trajectory'), readEvents(backbone, config, 'samples', 'sample')]);
      const ours = (xs: { runId: string }[]) => xs.filter((x) => runs.has(x.runId)).length;
      seen = `${ours(trajectories)} trajectories and ${ours(samples)} samples of ${published.length}`;
      if (ours(trajectories) < published.length || ours(samples) < published.length) return false;
      visibleAt = Date.now();
      return true;
    },
    'every episode’s trajectory and sample',
    60_000,
    200,
  ).catch((error: Error) => {
    const state = handles.map(
      (h, i) =>
        `instance ${i}: consumer ${JSON.stringify(h.consumer.stats)} emitter ${JSON.stringify(h.emitter.stats)} groups ${JSON.stringify(h.stats.groups)} assembly ${JSON.stringify(h.stats.assembly)}`,
    );
    throw new Error(`${error.message}: ${seen}\n${[...state, ...failures].join('\n')}`);
  });
  const latencyMs = visibleAt - lastEnd;
  console.log(`last episode's end → every trajectory and sample readable: ${latencyMs} ms; re-routed ${handles.reduce((n, h) => n + h.emitter.stats.rerouted, 0)} steps`);
  assert.ok(latencyMs <= 10_000, `readable ${latencyMs} ms after the last episode ended`);

  const trajectories = (await readEvents(backbone, config, 'trajectories', 'trajectory')).filter((t) => runs.has(t.runId));
  const samples = (await readEvents(backbone, config, 'samples', 'sample')).filter((s) => runs.has(s.runId));
  // Exactly one trajectory and one sample per episode, each complete; every group whole: all its samples say
  // it had EPISODES members (a split group would have made groups of 1 and 2, or been dropped as too small).
  assert.deepEqual(new Set(trajectories.map((t) => t.episodeId)), new Set(published.map((p) => p.episodeId)));
  assert.equal(trajectories.length, published.length);
  assert.equal(samples.length, published.length);
  for (const t of trajectories) {
    assert.notEqual(t.outcome, 'incomplete', t.episodeId);
    assert.equal(t.stepCount, published.find((p) => p.episodeId === t.episodeId)!.steps);
  }
  for (const sample of samples) assert.equal(sample.groupSize, EPISODES, `group ${sample.groupId} assembled with ${sample.groupSize} members`);
  // The groups that announced no size closed idle, the others full; none waited for the group timeout.
  const closedBy = handles.map((h) => h.stats.groups.closedBy);
  assert.equal(
    closedBy.reduce((n, c) => n + c.full, 0),
    GROUPS,
  );
  assert.equal(
    closedBy.reduce((n, c) => n + c.idle, 0),
    GROUPS,
  );
  assert.equal(
    closedBy.reduce((n, c) => n + c.timeout, 0),
    0,
  );
  assert.ok(handles.reduce((n, h) => n + h.emitter.stats.rerouted, 0) > 0);
});

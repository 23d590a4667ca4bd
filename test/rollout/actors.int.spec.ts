// Integration (real Kafka): the actors publish every step of P × G episodes keyed by group, and an actor
// held by the staleness bound resumes when the learner publishes a newer version. Each test file uses
// its own topic prefix; its topics are deleted after.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName } from '../../core/config.js';
import { createKafka } from '../../streams/kafka-client.js';
import { ensureTopics } from '../../infra/topics.js';
import { actorsConfig, startActors } from '../../rollout/index.js';
import type { PolicyVersionEvent, StepEvent } from '../../schemas/index.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, type Backbone, type Envelope } from '../../streams/index.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';

const config = { ...loadConfig(), topicPrefix: uniqueName('actors') };
let backbone: Backbone;

before(async () => {
  await ensureTopics(config);
  backbone = await connectBackbone(config, { clientId: 'test-actors' });
});

after(async () => {
  await backbone.close();
  const admin = createKafka(config).admin();
  await admin.connect();
  const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
  if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 });
  await admin.disconnect();
});

async function publishedSteps(runId: string): Promise<Envelope<StepEvent>[]> {
  const replay = await createReplay(backbone.kafka, { topic: topicName(config, 'env.steps'), decode: eventDecoder(backbone.codec, 'step'), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).filter((e) => e.value.runId === runId);
}

const versionEvent = (runId: string, version: number): PolicyVersionEvent => ({
  runId,
  version,
  weightsUri: `file:///tmp/${runId}/v${version}`,
  checksum: 'c'.repeat(64),
  parentVersion: version - 1,
  learnerStep: version,
  createdAtMs: Date.now(),
  metrics: {},
});

test('actors publish every step of exactly P × G episodes, each group on one partition', { timeout: 40_000 }, async () => {
  const actors = actorsConfig({ runId: 'int-all', envName: 'FrozenLake', groups: 6, groupSize: 4, iterations: 1, progressEveryMs: 0 });
  const run = await startActors(backbone, actors, { write: () => undefined });
  const summary = await run.done;
  const steps = await publishedSteps('int-all');
  assert.equal(steps.length, summary.steps);

  const episodes = new Map<string, StepEvent[]>();
  const partitionsOfGroup = new Map<string, Set<number>>();
  for (const envelope of steps) {
    const step = envelope.value;
    episodes.set(step.episodeId, [...(episodes.get(step.episodeId) ?? []), step]);
    partitionsOfGroup.set(step.groupId, (partitionsOfGroup.get(step.groupId) ?? new Set()).add(envelope.partition));
    assert.equal(envelope.key?.toString(), step.groupId);
  }
  assert.equal(episodes.size, 6 * 4);
  assert.equal(partitionsOfGroup.size, 6);
  for (const [group, partitions] of partitionsOfGroup) assert.equal(partitions.size, 1, `${group} is on partitions ${[...partitions]}`);
  for (const [id, episode] of episodes) {
    // One partition per group keeps each episode's steps in publish order.
    assert.deepEqual(
      episode.map((s) => s.stepIndex),
      episode.map((_, i) => i),
      id,
    );
    const last = episode.at(-1)!;
    assert.ok(last.terminated || last.truncated, `${id} ends terminated or truncated`);
    assert.ok(episode.every((s) => s.info.groupSize === '4' && s.policyVersion === 0));
  }
});

test('an actor held by the staleness bound resumes once the learner publishes a newer version', { timeout: 40_000 }, async () => {
  const runId = 'int-stale';
  const actors = actorsConfig({ runId, envName: 'Bandit', groups: 2, groupSize: 2, iterations: 2, maxStaleness: 0, progressEveryMs: 0 });
  const run = await startActors(backbone, actors, { write: () => undefined });
  // Iteration 0 runs on the initial policy; iteration 1 needs the learner's version 1.
  await waitFor(() => run.actors.stats.episodes === 4 && run.actors.stats.blockedIteration === 1, 'iteration 0 to finish and iteration 1 to be held');
  assert.equal(run.gate.waiting, 4);

  const versions = topicName(config, 'policy.versions');
  // Another run's newer version must not free this run; this run's version 1 must.
  await backbone.producer.send(versions, 'policy_version', versionEvent('another-run', 5), 'another-run');
  await backbone.producer.send(versions, 'policy_version', versionEvent(runId, 1), runId);
  const summary = await run.done;
  assert.equal(summary.episodes, 8);
  assert.equal(run.gate.learnerVersion, 1);

  const steps = (await publishedSteps(runId)).map((e) => e.value);
  assert.equal(steps.length, 8); // Bandit: one step per episode
  assert.deepEqual(
    steps.filter((s) => s.info.iteration === '0').map((s) => s.policyVersion),
    [0, 0, 0, 0],
  );
  assert.deepEqual(
    steps.filter((s) => s.info.iteration === '1').map((s) => s.policyVersion),
    [1, 1, 1, 1],
  );
});

// Integration (real Kafka): the whole RL loop across the backbone — transformer actors → processors →
// learner → new policy version → actors sampling with it — and the learner's crash-resume: SIGKILLed
// mid-run and restarted, it trains on every sample exactly once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { ensureTopics } from '../../../infra/topics.js';
import { actorsConfig } from '../../../rollout/config.js';
import { startActors } from '../../../rollout/start-actors.js';
import { runEpisode } from '../../../rollout/episode.js';
import { createEnv } from '../../../envs/registry.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { buildSample } from '../../../processors/samples/index.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../../streams/index.js';
import type { EventName, EventTypes, StepEvent, TrainingSampleEvent } from '../../../schemas/index.js';
import { selectBackend } from '../../../learner/backend.js';
import { buildLearnerConfig } from '../../../learner/loop/config.js';
import { startLearner } from '../../../learner/loop/learner.js';
import { transformerProvider } from '../../../learner/policy/actors-provider.js';
import { createPolicyBundle, disposeBundle, policyOf } from '../../../learner/policy/bundle.js';
import { readEvents, uniqueName, waitFor } from '../../helpers/kafka.js';
import { testProcessing } from '../../processors/helpers/processing.js';

const SMALL_MODEL = { width: 32, layers: 1, heads: 2, contextLength: 128 };
let backbone: Backbone;
before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-rl-loop' });
});
after(async () => {
  await backbone.close();
});

async function isolatedConfig(): Promise<TrajflowConfig> {
  const config = { ...loadConfig(), topicPrefix: uniqueName('loop') };
  await ensureTopics(config);
  return config;
}

function readAll<N extends EventName>(config: TrajflowConfig, topic: string, event: N): Promise<EventTypes[N][]> {
  return readEvents(backbone, config, topic, event);
}

test('actors → processors → learner → new version → actors, on the real broker', { timeout: 240_000 }, async () => {
  const config = await isolatedConfig();
  // Everything on this test's topics, the actors' step publisher included.
  const scoped = { ...backbone, config, steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')) };
  const runId = uniqueName('run');
  const learner = await startLearner(
    scoped,
    buildLearnerConfig(config, {
      runId,
      envName: 'FrozenLake',
      model: SMALL_MODEL,
      batchTokens: 800,
      minSamples: 4,
      maxWaitMs: 300,
      maxUpdates: 3,
      optimizer: { learningRate: 1e-3 },
      templateCollapse: { every: 2, pairs: 8 },
    }),
    { log: () => {} },
  );
  const processors = await startProcessors(scoped, { consumerGroupId: uniqueName('processors'), processing: testProcessing, groupSize: 4, flushIntervalMs: 50 });
  // The actors' own v0 must equal the learner's: both build a fresh model with the same shape and seed.
  const provider = await transformerProvider('FrozenLake', { backend: 'wasm' });
  const actors = await startActors(
    scoped,
    actorsConfig({ runId, envName: 'FrozenLake', envOptions: { slippery: false }, groups: 2, groupSize: 4, maxStaleness: 1, progressEveryMs: 0 }),
    { provider, write: () => {} },
  );
  try {
    const stats = await learner.done;
    assert.equal(stats.updates, 3);
    await waitFor(() => actors.gate.learnerVersion >= 3, 'actors saw version 3', 30_000);
  } finally {
    await actors.stop();
    await processors.close();
  }
  const versions = (await readAll(config, 'policy.versions', 'policy_version')).filter((v) => v.runId === runId);
  assert.deepEqual([...new Set(versions.map((v) => v.version))], [0, 1, 2, 3], 'versions 0..3 once each, in order');
  const steps = (await readAll(config, 'learner.steps', 'learner_step')).filter((s) => s.runId === runId);
  assert.deepEqual(
    steps.map((s) => s.step),
    [0, 1, 2],
  );
  for (const s of steps) assert.ok(Number.isFinite(s.totalLoss) && Number.isFinite(s.gradNormPreClip) && s.samples > 0 && s.backend === 'wasm', JSON.stringify(s));
  // RAGEN-2 cross-scoring every 2 updates: on updates 0 and 2, within its bounds; not on update 1.
  assert.deepEqual(
    steps.map((s) => 'template.mi' in s.metrics),
    [true, false, true],
  );
  for (const s of [steps[0]!, steps[2]!]) {
    const m = s.metrics;
    assert.ok(m['template.prompts']! >= 2 && m['template.pairs']! <= 8, JSON.stringify(m));
    assert.ok(m['template.mi']! <= m['template.miUpperBound']! + 1e-9 && m['template.retrievalAccuracy']! >= 0 && m['template.retrievalAccuracy']! <= 1, JSON.stringify(m));
  }
  const stepEvents = (await readAll(config, 'env.steps', 'step')).filter((s) => s.runId === runId);
  const sampledWith = new Set(stepEvents.map((s) => s.policyVersion));
  assert.ok(
    [...sampledWith].some((v) => v >= 1),
    `actors sampled with a learned version (versions seen: ${[...sampledWith]})`,
  );
  assert.ok(
    stepEvents.every((s) => s.observationTokenIds !== null && s.actionTokenIds.length > 0),
    'the transformer sends its own tokens',
  );
  console.log(`rl loop: ${stepEvents.length} steps, versions sampled with ${[...sampledWith].sort()}, learner steps ${steps.length}`);
});

/** FrozenLake samples with reply tokens of the transformer's vocabulary (what processors would emit). */
async function makeSamples(runId: string, count: number): Promise<TrainingSampleEvent[]> {
  const bundle = createPolicyBundle(createEnv('FrozenLake').actionVocabulary, SMALL_MODEL);
  const policy = policyOf(bundle, 0);
  const samples: TrainingSampleEvent[] = [];
  for (let i = 0; i < count; i++) {
    const steps: StepEvent[] = [];
    const groupId = `${runId}-g${Math.floor(i / 4)}`;
    await runEpisode({
      context: { runId, env: { name: 'FrozenLake', version: 'v1' }, groupId, episodeId: `${groupId}-e${i}`, groupSize: 4, groupSeed: i, rollout: i % 4, iteration: 0 },
      env: createEnv('FrozenLake'),
      policy,
      // A real clock: events dated 0 are invalid (eventTimeMs must be a positive epoch time) and dead-lettered.
      clock: () => Date.now(),
      publish: async (event) => void steps.push(event),
    });
    const { trajectory } = trajectoryFromSteps(steps);
    samples.push(buildSample(trajectory, { level: 'trajectory', advantage: i % 2 === 0 ? 1 : -1 }, { estimator: 'grpo', group: { size: 4, rewardMean: 0, rewardStd: 1 } }));
  }
  disposeBundle(bundle);
  return samples;
}

const cli = fileURLToPath(new URL('../../../bin/trajflow.mjs', import.meta.url));

function runLearnerProcess(config: TrajflowConfig, args: string[]): { exited: Promise<number | null>; kill: () => void; output: () => string } {
  let output = '';
  const child = spawn(process.execPath, [cli, 'learner', ...args], {
    env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: config.topicPrefix, TRAJFLOW_HOME: config.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))), kill: () => child.kill('SIGKILL'), output: () => output };
}

test('a learner SIGKILLed mid-run resumes from its checkpoint: every sample trained exactly once', { timeout: 300_000 }, async () => {
  const config = await isolatedConfig();
  const runId = uniqueName('crash');
  const samples = await makeSamples(runId, 24);
  for (const sample of samples) await backbone.producer.send(topicName(config, 'samples'), 'sample', sample, sample.groupId);
  await backbone.producer.flush();
  const perSample = Math.max(...samples.map((s) => s.tokenIds.length));
  const args = [
    '--run-id',
    runId,
    '--env',
    'FrozenLake',
    '--batch-tokens',
    String(perSample * 3),
    '--min-samples',
    '1',
    '--max-wait-ms',
    '0',
    '--width',
    '32',
    '--layers',
    '1',
    '--heads',
    '2',
    '--context',
    '128',
    '--backend',
    'wasm',
  ];

  const first = runLearnerProcess(config, [...args, '--updates', '1000']);
  const checkpoints = join(config.home, 'checkpoints', config.topicPrefix, runId);
  const trainedSteps = async () => (await readAll(config, 'learner.steps', 'learner_step')).filter((s) => s.runId === runId).length;
  await waitFor(async () => (await trainedSteps()) >= 2, 'the first learner made 2 updates', 120_000);
  first.kill();
  await first.exited;

  const second = runLearnerProcess(config, [...args, '--updates', '1000']);
  // Done when the learner's published steps account for all 24 samples.
  const trainedCount = async () => {
    const steps = (await readAll(config, 'learner.steps', 'learner_step')).filter((s) => s.runId === runId);
    return [...new Map(steps.map((s) => [s.step, s.samples])).values()].reduce((a, b) => a + b, 0);
  };
  await waitFor(async () => (await trainedCount()) >= 24, 'all 24 samples trained', 120_000);
  second.kill();
  await second.exited;

  const trainedIds = async () => {
    const newest = (await readdir(checkpoints))
      .filter((d) => /^v\d{8}$/.test(d))
      .sort()
      .at(-1)!;
    return (JSON.parse(await readFile(join(checkpoints, newest, 'manifest.json'), 'utf8')) as { recentSampleIds: string[] }).recentSampleIds;
  };
  const ids = await trainedIds();
  assert.equal(ids.length, 24, 'no sample trained twice');
  assert.deepEqual([...ids].sort(), samples.map((s) => s.sampleId).sort(), 'every sample trained');
  const steps = (await readAll(config, 'learner.steps', 'learner_step')).filter((s) => s.runId === runId);
  const byStep = new Map(steps.map((s) => [s.step, s]));
  const trainedSamples = [...byStep.values()].reduce((sum, s) => sum + s.samples, 0);
  assert.equal(trainedSamples, 24, `learner steps account for each sample once (${[...byStep.values()].map((s) => s.samples)})`);
  const versions = [...new Set((await readAll(config, 'policy.versions', 'policy_version')).filter((v) => v.runId === runId).map((v) => v.version))];
  assert.deepEqual(
    versions,
    Array.from({ length: versions.length }, (_, i) => i),
    'versions without gaps',
  );
  assert.match(second.output(), /resumed run/);
  console.log(`learner crash-resume: 24 samples, ${byStep.size} updates, versions 0..${versions.at(-1)}, trained twice 0, skipped 0`);
});

test('a sample delivered twice into one batch (redelivery after a reconnect, or a producer retry) is trained once', { timeout: 120_000 }, async () => {
  const config = await isolatedConfig();
  const runId = uniqueName('run');
  const samples = await makeSamples(runId, 6);
  // The third sample twice in a row, as a consumer that reconnected delivers a sample still waiting in the buffer.
  for (const sample of [...samples.slice(0, 3), samples[2]!, ...samples.slice(3)]) {
    await backbone.producer.send(topicName(config, 'samples'), 'sample', sample, sample.groupId);
  }
  const learner = await startLearner(
    { ...backbone, config },
    // One update over the six distinct samples: the token budget holds them and it waits for six; the repeat is
    // refused as it arrives (the fourth of seven deliveries), before the six are in.
    buildLearnerConfig(config, {
      runId,
      envName: 'FrozenLake',
      model: SMALL_MODEL,
      batchTokens: 100_000,
      minSamples: 6,
      maxWaitMs: 300,
      maxUpdates: 1,
      optimizer: { learningRate: 1e-3 },
    }),
    { log: () => {} },
  );
  const stats = await learner.done;
  assert.equal(stats.updates, 1);
  assert.equal(stats.duplicates, 1, 'the repeat counted as a duplicate');
  assert.equal(stats.samplesTrained, 6, 'six distinct samples trained, each once');
  const [step] = (await readAll(config, 'learner.steps', 'learner_step')).filter((s) => s.runId === runId);
  assert.equal(step?.samples, 6);
});

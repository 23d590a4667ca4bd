// Integration (real Kafka): versions follow data. Two actor processes share a run (`--shard 0/2`, `1/2`); the
// processors and the learner run on the broker. Whatever the learner's token budget — smaller than one rollout
// batch, larger than two — and with 2 epochs × 4 minibatches, every update trains exactly one iteration's batch,
// whole, in iteration order; every sample on the samples topic is trained exactly once; and every update's
// staleness stays within the bound the actors and the learner were given.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadConfig, type TrajflowConfig } from '../../../core/config.js';
import { ensureTopics } from '../../../infra/topics.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import { connectBackbone, type Backbone } from '../../../streams/index.js';
import type { EventName, EventTypes, LearnerStepEvent } from '../../../schemas/index.js';
import { selectBackend } from '../../../learner/backend.js';
import { buildLearnerConfig } from '../../../learner/loop/config.js';
import { startLearner } from '../../../learner/loop/learner.js';
import { readEvents, uniqueName } from '../../helpers/kafka.js';
import { testProcessing } from '../../processors/helpers/processing.js';

const cli = fileURLToPath(new URL('../../../bin/trajflow.mjs', import.meta.url));
const MODEL = { width: 32, layers: 1, heads: 2, contextLength: 128 };
const ENV_OPTIONS = { slippery: false, maxActionsPerTurn: 1, maxTurns: 6, maxActionsPerEpisode: 6 };
const GROUPS = 4;
const GROUP_SIZE = 4;
const ITERATIONS = 4;
const K = 1;

let backbone: Backbone;
before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-versions-follow-data' });
});
after(async () => {
  await backbone.close();
});

function readAll<N extends EventName>(config: TrajflowConfig, topic: string, event: N): Promise<EventTypes[N][]> {
  return readEvents(backbone, config, topic, event);
}

function actorProcess(config: TrajflowConfig, runId: string, shard: string): { exited: Promise<number | null>; output: () => string } {
  let output = '';
  const args = [
    cli,
    'actors',
    '--env',
    'FrozenLake',
    '--run-id',
    runId,
    '--groups',
    String(GROUPS),
    '--group-size',
    String(GROUP_SIZE),
    '--iterations',
    String(ITERATIONS),
    '--max-staleness',
    String(K),
    '--env-options',
    JSON.stringify(ENV_OPTIONS),
    '--model',
    JSON.stringify(MODEL),
    '--shard',
    shard,
    '--progress-ms',
    '0',
  ];
  const child = spawn(process.execPath, args, { env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: config.topicPrefix }, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return { exited: new Promise((resolve) => child.on('exit', resolve)), output: () => output };
}

for (const [label, batchTokens] of [
  ['a token budget smaller than one batch', 200],
  ['a token budget larger than two batches', 1_000_000],
] as const) {
  test(`${label}: one whole batch per update, every sample once, staleness ≤ ${K}, two actor processes`, { timeout: 300_000 }, async () => {
    const config: TrajflowConfig = { ...loadConfig(), topicPrefix: uniqueName('vfd') };
    await ensureTopics(config);
    const scoped = { ...backbone, config };
    const runId = uniqueName('vfd').replace(/\./g, '-');
    const steps: LearnerStepEvent[] = [];
    const learner = await startLearner(
      scoped,
      buildLearnerConfig(config, {
        runId,
        envName: 'FrozenLake',
        envOptions: ENV_OPTIONS,
        model: MODEL,
        batchTokens,
        minSamples: 1,
        maxWaitMs: 0,
        maxStaleness: K,
        maxUpdates: ITERATIONS,
        optimizer: { learningRate: 1e-3, epochs: 2, minibatches: 4 },
        templateCollapse: { every: 0 },
      }),
      { log: () => {}, onStep: (step) => steps.push(step) },
    );
    const processors = await startProcessors(scoped, { consumerGroupId: uniqueName('processors'), processing: testProcessing, groupSize: GROUP_SIZE, flushIntervalMs: 50 });
    const actors = [actorProcess(config, runId, '0/2'), actorProcess(config, runId, '1/2')];
    try {
      const codes = await Promise.all(actors.map((a) => a.exited));
      assert.deepEqual(codes, [0, 0], actors.map((a) => a.output().slice(-2000)).join('\n---\n'));
      await learner.done;
    } finally {
      await learner.stop();
      await processors.close();
    }
    const samples = (await readAll(config, 'samples', 'sample')).filter((s) => s.runId === runId);
    assert.equal(new Set(samples.map((s) => s.sampleId)).size, ITERATIONS * GROUPS * GROUP_SIZE, 'one sample per episode of both actor processes');
    assert.equal(steps.length, ITERATIONS);
    steps.forEach((step, i) => {
      assert.equal(step.metrics['batch.iteration'], i, `update ${i} trained iteration ${i}`);
      assert.equal(step.metrics['batch.partial'], 0, `update ${i}: a whole batch`);
      assert.equal(step.samples, GROUPS * GROUP_SIZE, `update ${i}: all ${GROUPS * GROUP_SIZE} samples of its batch`);
      assert.equal(step.metrics.optimizerSteps, 8, `update ${i}: 2 epochs × 4 minibatches`);
      assert.ok(step.stalenessMax <= K, `update ${i}: staleness ${step.stalenessMax} ≤ ${K}`);
      assert.equal(step.metrics.droppedStale, 0);
    });
    const trainedSamples = steps.reduce((n, s) => n + s.samples, 0);
    assert.equal(trainedSamples, samples.length, 'every sample on the topic trained, none twice');
    const byIteration = new Map<number, number>();
    for (const s of samples) byIteration.set(s.batch!.iteration, (byIteration.get(s.batch!.iteration) ?? 0) + 1);
    assert.deepEqual(
      [...byIteration].sort((a, b) => a[0] - b[0]),
      Array.from({ length: ITERATIONS }, (_, i) => [i, GROUPS * GROUP_SIZE]),
      'one batch per iteration on the topic',
    );
    const versions = (await readAll(config, 'policy.versions', 'policy_version')).filter((v) => v.runId === runId);
    assert.deepEqual(
      versions.map((v) => v.metrics.iteration),
      [-1, 0, 1, 2, 3],
      'version v was trained on iterations 0 … v − 1',
    );
    console.log(`versions follow data (${label}): ${ITERATIONS} updates of ${GROUPS * GROUP_SIZE} samples, staleness max ${Math.max(...steps.map((s) => s.stalenessMax))}`);
  });
}

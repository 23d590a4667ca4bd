// Integration (real Kafka): one path, proven equal. The same seed through the in-process loop (runLocal) and
// through the real parts — actors → Kafka → processors → Kafka → learner → policy version → actors — gives the
// same samples field for field (token ids, loss masks, advantages, behaviour log-probs, step advantages, policy
// versions, rollout batches) and the same updates (loss, gradient norm, entropy, PPO-KL), for the first
// iterations: on-policy (max staleness 0), and one step off-policy (max staleness 1: iteration i sampled with
// version i − 1 on both paths, whatever the timing). Whatever differs here is something the real path feeds the
// trainer that the in-process loop does not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { ensureTopics } from '../../../infra/topics.js';
import { actorsConfig } from '../../../rollout/config.js';
import { startActors } from '../../../rollout/start-actors.js';
import { taskSeedBase } from '../../../envs/seeds.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import type { ProcessingConfig } from '../../../processors/pipeline/process-batch.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../../streams/index.js';
import type { EventName, EventTypes, LearnerStepEvent, TrainingSampleEvent } from '../../../schemas/index.js';
import { selectBackend } from '../../../learner/backend.js';
import { buildLearnerConfig } from '../../../learner/loop/config.js';
import { startLearner } from '../../../learner/loop/learner.js';
import { runLocal, type CurvePoint } from '../../../learner/local/local-run.js';
import { transformerProvider } from '../../../learner/policy/actors-provider.js';
import { readEvents, uniqueName } from '../../helpers/kafka.js';

const SEED = 3;
const GROUPS = 3;
const GROUP_SIZE = 4;
const ENV_OPTIONS = { slippery: false, maxActionsPerTurn: 1, maxTurns: 6, maxActionsPerEpisode: 6 };
// The FrozenLake preset's policy shape, smaller; its seed is the run seed on both paths.
const MODEL = { width: 32, layers: 1, heads: 2, contextLength: 128, attentionSpan: 'turn', positionMode: 'grid', nonEmptyReplies: true, gridNeighbours: true, seed: SEED } as const;
const OPTIMIZER = { learningRate: 3e-3, epochs: 2, minibatches: 2 };
const PROCESSING: ProcessingConfig = { reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'gigpo', options: { omega: 3, gamma: 0.7 } }, filters: [] };

let backbone: Backbone;
before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-path-equivalence' });
});
after(async () => {
  await backbone.close();
});

function readAll<N extends EventName>(config: TrajflowConfig, topic: string, event: N): Promise<EventTypes[N][]> {
  return readEvents(backbone, config, topic, event);
}

/** The sample's place in the run (its episode id without the run id), the key both paths share. */
const placeOf = (sample: TrainingSampleEvent, runId: string) => sample.episodeId.slice(runId.length);

/** The version every sample of `iteration` must carry at max staleness K. */
const versionOf = (iteration: number, maxStaleness: number) => Math.max(0, iteration - maxStaleness);

test('the real path and the in-process loop give the same samples and the same updates for the same seed', { timeout: 300_000 }, async () => {
  await assertPathsEqual({ maxStaleness: 0, iterations: 2 });
});

test('at max staleness 1 both paths sample iteration i with version i − 1 and give the same samples and updates', { timeout: 300_000 }, async () => {
  const curve = await assertPathsEqual({ maxStaleness: 1, iterations: 4 });
  // Update 0 moves nothing on this seed (no success in iteration 0), so versions 0 and 1 are the same weights; updates
  // 1 and 2 move them, so iteration 3 (version 2) would sample differently with version 1 or 3: the lag is checked.
  for (const update of [1, 2]) assert.ok(curve[update]!.update!.gradNorm > 0, `update ${update} moved the weights`);
});

/** Runs both paths for `iterations` iterations at `maxStaleness`, compares their samples and updates, and gives the in-process curve. */
async function assertPathsEqual({ maxStaleness, iterations: ITERATIONS }: { maxStaleness: number; iterations: number }): Promise<CurvePoint[]> {
  const config: TrajflowConfig = { ...loadConfig(), topicPrefix: uniqueName('equiv') };
  await ensureTopics(config);
  const scoped = { ...backbone, config, steps: new StepPublisher(backbone.producer, topicName(config, 'env.steps')) };
  const runId = uniqueName('real').replace(/\./g, '-');

  // The real parts, each as `trajflow train` starts it (here in one process, through the broker).
  const realSteps: LearnerStepEvent[] = [];
  const learner = await startLearner(
    scoped,
    buildLearnerConfig(config, {
      runId,
      envName: 'FrozenLake',
      envOptions: ENV_OPTIONS,
      model: MODEL,
      optimizer: OPTIMIZER,
      maxStaleness,
      maxUpdates: ITERATIONS,
      templateCollapse: { every: 0 },
    }),
    { log: () => {}, onStep: (step) => realSteps.push(step) },
  );
  const processors = await startProcessors(scoped, { consumerGroupId: uniqueName('processors'), processing: PROCESSING, groupSize: GROUP_SIZE, flushIntervalMs: 50 });
  const provider = await transformerProvider('FrozenLake', { backend: 'wasm', model: MODEL, maxStaleness });
  const actors = await startActors(
    scoped,
    actorsConfig({
      runId,
      envName: 'FrozenLake',
      envOptions: ENV_OPTIONS,
      groups: GROUPS,
      groupSize: GROUP_SIZE,
      seedBase: taskSeedBase(SEED),
      iterations: ITERATIONS,
      maxStaleness,
      progressEveryMs: 0,
    }),
    { provider, write: () => {} },
  );
  try {
    await learner.done;
    await actors.done;
  } finally {
    await actors.stop();
    await processors.close();
  }
  const real = (await readAll(config, 'samples', 'sample')).filter((s) => s.runId === runId);

  // The in-process loop on the same seed, under another run id (sampling is seeded by the run seed, not the name).
  const localRunId = `local-${runId}`;
  const localSamples: TrainingSampleEvent[] = [];
  const curve: CurvePoint[] = [];
  await runLocal(
    {
      env: 'FrozenLake',
      envOptions: ENV_OPTIONS,
      runId: localRunId,
      iterations: ITERATIONS,
      groups: GROUPS,
      groupSize: GROUP_SIZE,
      processing: PROCESSING,
      model: MODEL,
      optimizer: OPTIMIZER,
      seed: SEED,
      maxStaleness,
      evalEvery: 1_000,
      evalTasks: 1,
      onBatch: (_, __, out) => localSamples.push(...out.samples),
    },
    (point) => curve.push(point),
  );

  assert.equal(real.length, ITERATIONS * GROUPS * GROUP_SIZE, 'every episode of every iteration became one sample');
  assert.equal(localSamples.length, real.length);
  const realByPlace = new Map(real.map((s) => [placeOf(s, runId), s]));
  for (const local of localSamples) {
    const place = placeOf(local, localRunId);
    const other = realByPlace.get(place);
    assert.ok(other, `the real path has the sample of ${place}`);
    for (const field of [
      'tokenIds',
      'lossMask',
      'advantages',
      'behaviourLogProbs',
      'stepAdvantages',
      'policyVersion',
      'reward',
      'groupSize',
      'groupRewardMean',
      'groupRewardStd',
      'estimator',
    ] as const) {
      assert.deepStrictEqual(other[field], local[field], `${place}: ${field}`);
    }
    assert.ok(other.batch && local.batch, `${place}: both name their rollout batch`);
    assert.equal(other.batch.iteration, local.batch.iteration, `${place}: iteration`);
    assert.equal(other.batch.samples, local.batch.samples, `${place}: batch size`);
  }
  // Iteration i was sampled with version max(0, i − K) on both paths: the same behaviour log-probs above mean the
  // actors' versions (loaded from the learner's checkpoints) are the in-process loop's weights after those updates.
  for (const sample of real) {
    const iteration = sample.batch!.iteration;
    assert.equal(sample.policyVersion, versionOf(iteration, maxStaleness), `${placeOf(sample, runId)}: iteration ${iteration} sampled with version i − ${maxStaleness}`);
  }
  assert.ok(
    real.some((s) => s.policyVersion === 1),
    'a later iteration was sampled with version 1',
  );

  assert.equal(realSteps.length, ITERATIONS);
  for (let i = 0; i < ITERATIONS; i++) {
    const update = curve[i]!.update!;
    const step = realSteps[i]!;
    assert.equal(step.samples, update.samples, `update ${i}: samples`);
    assert.equal(step.metrics['batch.iteration'], i, `update ${i} trained iteration ${i}`);
    for (const [name, realValue, localValue] of [
      ['loss', step.totalLoss, update.loss],
      ['grad norm', step.gradNormPreClip, update.gradNorm],
      ['entropy', step.entropy, update.entropy],
      ['PPO-KL', step.metrics.ppoKl!, update.ppoKl],
    ] as const) {
      assert.ok(Math.abs(realValue - localValue) <= 1e-6 * Math.max(1, Math.abs(localValue)), `update ${i}: ${name} ${realValue} (real) vs ${localValue} (in-process)`);
    }
  }
  console.log(
    `path equivalence at max staleness ${maxStaleness}: ${real.length} samples equal field for field, ${ITERATIONS} updates equal (loss ${realSteps.map((s) => s.totalLoss.toFixed(6)).join(', ')})`,
  );
  return curve;
}

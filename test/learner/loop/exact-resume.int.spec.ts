// Integration (real Kafka): a run stopped and rerun is the run that was never stopped. The real parts — actors →
// Kafka → processors → Kafka → learner → policy version → actors — run a small FrozenLake run until the actors
// publish a step of iteration `stopAt` (a batch the learner has not trained) and stop there as `trajflow train`
// stops on Ctrl-C (actors, then learner, then processors, each gracefully), then start again as its rerun does
// (the learner from its newest checkpoint, the actors after the last iteration they started, the processors from
// their committed offsets) up to UPDATES updates; or only the learner, a process, is SIGKILLed there and started
// again as train restarts a part that died. Every update (losses, gradient norm, entropy, PPO-KL, learning rate,
// samples), every sampled episode (its place, tokens, reward, behaviour log-probs, advantages, version, batch) and
// the final weights' SHA-256 must equal those of the in-process loop run for UPDATES iterations uninterrupted,
// which the real path equals (path-equivalence.int.spec.ts) — at max staleness 0 and 1. Stopped at iteration 5,
// Adam's restored state must be the one its steps accumulated; stopped at iteration 1 with the actors one ahead,
// they are mid-iteration (some groups started, others not), and the rerun must not leave that batch short.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { ensureTopics } from '../../../infra/topics.js';
import type { ActorsSummary } from '../../../rollout/actors.js';
import { actorsConfig } from '../../../rollout/config.js';
import { startActors } from '../../../rollout/start-actors.js';
import { taskSeedBase } from '../../../envs/seeds.js';
import { startProcessors } from '../../../processors/pipeline/processor.js';
import type { ProcessingConfig } from '../../../processors/pipeline/process-batch.js';
import { connectBackbone, StepPublisher, type Backbone } from '../../../streams/index.js';
import type { LearnerStepEvent, PolicyVersionEvent, StepEvent, TrainingSampleEvent } from '../../../schemas/index.js';
import { selectBackend } from '../../../learner/backend.js';
import { buildLearnerConfig } from '../../../learner/loop/config.js';
import { startLearner } from '../../../learner/loop/learner.js';
import { runLocal, type CurvePoint } from '../../../learner/local/local-run.js';
import type { PolicyBundle } from '../../../learner/policy/bundle.js';
import { transformerProvider } from '../../../learner/policy/actors-provider.js';
import { readEvents, uniqueName, waitFor } from '../../helpers/kafka.js';

const SEED = 3;
const GROUPS = 3;
const GROUP_SIZE = 4;
const UPDATES = 8;
const ENV_OPTIONS = { slippery: false, maxActionsPerTurn: 1, maxTurns: 6, maxActionsPerEpisode: 6 };
const MODEL = { width: 32, layers: 1, heads: 2, contextLength: 128, attentionSpan: 'turn', positionMode: 'grid', nonEmptyReplies: true, gridNeighbours: true, seed: SEED } as const;
// The preset's kind of schedule (cosine over the run) and loss, with shuffled minibatches: state a resume must restore.
const OPTIMIZER = { learningRate: 3e-3, epochs: 2, minibatches: 2, shuffleMinibatches: true, schedule: 'cosine', totalUpdates: UPDATES } as const;
const LOSS = { centerByAction: true, entropyCoeff: 0.2, entropyTarget: 0.7 };
const PROCESSING: ProcessingConfig = { reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'gigpo', options: { omega: 3, gamma: 0.7 } }, filters: [] };
const cli = fileURLToPath(new URL('../../../bin/trajflow.mjs', import.meta.url));

let backbone: Backbone;
before(async () => {
  await selectBackend('wasm');
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-exact-resume' });
});
after(async () => {
  await backbone.close();
});

// Stopped at 5 the learner holds 5 × 4 or 6 × 4 Adam steps (it may train the started batch before it stops): counts
// whose running powers of β₁, β₂ a restore must carry over, not recompute.
for (const { maxStaleness, stopAt } of [
  { maxStaleness: 0, stopAt: 5 },
  { maxStaleness: 1, stopAt: 5 },
  { maxStaleness: 1, stopAt: 1 },
]) {
  test(`at max staleness ${maxStaleness} a run stopped once the actors started iteration ${stopAt} and rerun to ${UPDATES} updates is the uninterrupted run`, {
    timeout: 300_000,
  }, async () => {
    const started = Date.now();
    const { stoppedAt, ...real } = await stopAndRerun(maxStaleness, stopAt);
    const { lastIteration, groupsOfLast, version } = stoppedAt;
    report(
      `exact resume at max staleness ${maxStaleness}: stopped with the actors at iteration ${lastIteration} (${groupsOfLast} of its ${GROUPS} groups published) and the learner at v${version}`,
      real,
      await uninterrupted(maxStaleness),
      started,
    );
  });
}

// Killed once the actors started iteration 6, the learner resumes at v5 or v6: again counts of Adam steps whose powers a restore must carry over.
test(`at max staleness 1 a learner SIGKILLed once the actors started iteration 6 and started again makes the uninterrupted run`, { timeout: 300_000 }, async () => {
  const started = Date.now();
  const { killedAt, resumedAt, ...real } = await killLearnerAndRestart(1, 6);
  report(`exact resume at max staleness 1: the learner SIGKILLed after v${killedAt}, resumed at v${resumedAt}`, real, await uninterrupted(1), started);
});

/** Prints where the real run stopped and how it compares, then asserts it made the uninterrupted run. */
function report(stopped: string, real: RealRun, local: LocalRun, startedMs: number): void {
  const differences = compare(real, local);
  const outcome =
    differences.length === 0
      ? 'every update, sample and the final weights equal the uninterrupted run'
      : `${differences.length} differences, first:\n  ${differences.slice(0, 12).join('\n  ')}`;
  console.log(`${stopped}; rerun to v${UPDATES}: ${outcome} (${((Date.now() - startedMs) / 1000).toFixed(1)} s)`);
  assert.deepEqual(differences, [], 'the resumed run is the uninterrupted run');
}

/** What the real parts produced over both runs (as the topics hold it). */
interface RealRun {
  readonly runId: string;
  readonly steps: LearnerStepEvent[];
  readonly versions: PolicyVersionEvent[];
  readonly samples: TrainingSampleEvent[];
}

/** A fresh topic prefix, run id and processors' group. */
async function isolatedRun() {
  const config: TrajflowConfig = { ...loadConfig(), topicPrefix: uniqueName('resume') };
  await ensureTopics(config);
  return { config, runId: uniqueName('real').replace(/\./g, '-'), processorsGroup: uniqueName('processors') };
}

/** What the topics hold of the run once it is over. */
async function readRun(config: TrajflowConfig, runId: string) {
  const mine = <T extends { readonly runId: string }>(events: T[]) => events.filter((e) => e.runId === runId);
  return {
    steps: mine(await readEvents(backbone, config, 'learner.steps', 'learner_step')),
    versions: mine(await readEvents(backbone, config, 'policy.versions', 'policy_version')),
    samples: mine(await readEvents(backbone, config, 'samples', 'sample')),
  };
}

/** Sees the actors' steps; `stop` is called, synchronously, at the first of iteration `stopAt` or later. */
function publishWatch(stopAt: number, stop: () => void) {
  const groups = new Map<number, Set<string>>();
  return {
    groupsOf: (iteration: number) => groups.get(iteration)?.size ?? 0,
    onPublish: (step: StepEvent) => {
      const iteration = Number(step.info.iteration);
      groups.set(iteration, (groups.get(iteration) ?? new Set()).add(step.groupId));
      if (iteration >= stopAt) stop();
    },
  };
}

/** The real parts until the actors publish a step of iteration `stopAt`, a graceful stop of all of them, then a rerun to UPDATES. */
async function stopAndRerun(maxStaleness: number, stopAt: number): Promise<RealRun & { stoppedAt: { lastIteration: number; groupsOfLast: number; version: number } }> {
  const { config, runId, processorsGroup } = await isolatedRun();
  // Ctrl-C right then: `trajflow train` stops the actors (they finish what they started and report their last
  // iteration), then the learner, then the processors.
  let first: Awaited<ReturnType<typeof startParts>> | undefined;
  let actorsStopped: Promise<ActorsSummary> | undefined;
  const watch = publishWatch(stopAt, () => (actorsStopped ??= first?.actors.stop()));
  first = await startParts(config, { runId, processorsGroup, maxStaleness, firstIteration: 0, onPublish: watch.onPublish });
  const learner = await startInProcessLearner(config, runId, maxStaleness);
  await waitFor(() => actorsStopped !== undefined, `the actors started iteration ${stopAt}`, 120_000);
  const summary = await actorsStopped!;
  await first.provider.close?.();
  const learnerStats = await learner.stop();
  await first.processors.close();
  const stoppedAt = { lastIteration: summary.iteration, groupsOfLast: watch.groupsOf(summary.iteration), version: learnerStats.version };
  assert.ok(summary.iteration >= stopAt, `the actors started iteration ${stopAt} before the stop (last iteration ${summary.iteration})`);
  assert.ok(learnerStats.version < UPDATES, 'the first run stopped before its last update');

  // The rerun: the actors continue after the last iteration they started, as train's state file says.
  const second = await startParts(config, { runId, processorsGroup, maxStaleness, firstIteration: summary.iteration + 1 });
  const secondLearner = await startInProcessLearner(config, runId, maxStaleness);
  try {
    await secondLearner.done;
  } finally {
    await second.actors.stop();
    await second.provider.close?.();
    await second.processors.close();
  }
  return { runId, stoppedAt, ...(await readRun(config, runId)) };
}

/** The real parts with the learner as its own process, SIGKILLed when the actors publish a step of iteration `killAt`, then started again. */
async function killLearnerAndRestart(maxStaleness: number, killAt: number): Promise<RealRun & { killedAt: number; resumedAt: number }> {
  const { config, runId, processorsGroup } = await isolatedRun();
  let killNow = false;
  const watch = publishWatch(killAt, () => (killNow = true));
  const first = learnerProcess(config, runId, maxStaleness);
  const parts = await startParts(config, { runId, processorsGroup, maxStaleness, firstIteration: 0, onPublish: watch.onPublish });
  let second: ReturnType<typeof learnerProcess> | undefined;
  try {
    await waitFor(() => killNow, `the actors started iteration ${killAt}`, 120_000);
    const killedAt = parts.actors.gate.learnerVersion;
    first.kill();
    await first.exited;
    // `trajflow train` starts a part that exited again.
    second = learnerProcess(config, runId, maxStaleness);
    assert.equal(await second.exited, 0, second.output().slice(-3000));
    const resumedAt = /resumed run \S+ at version (\d+)/.exec(second.output());
    assert.ok(resumedAt, `the learner resumed: ${second.output().slice(-3000)}`);
    return { runId, killedAt, resumedAt: Number(resumedAt[1]), ...(await readRun(config, runId)) };
  } finally {
    first.kill();
    second?.kill();
    await parts.actors.stop();
    await parts.provider.close?.();
    await parts.processors.close();
  }
}

const LEARNER_INPUT = { envName: 'FrozenLake', envOptions: ENV_OPTIONS, model: MODEL, optimizer: OPTIMIZER, loss: LOSS, maxUpdates: UPDATES, templateCollapse: { every: 0 } };

/** The learner as `trajflow train` runs it, in this process. */
function startInProcessLearner(config: TrajflowConfig, runId: string, maxStaleness: number) {
  return startLearner({ ...backbone, config }, buildLearnerConfig(config, { ...LEARNER_INPUT, runId, maxStaleness }), { log: () => {} });
}

/** The learner as its own process, `trajflow learner` with the same settings. */
function learnerProcess(config: TrajflowConfig, runId: string, maxStaleness: number) {
  const args = [
    ...['--run-id', runId, '--env', 'FrozenLake', '--env-options', JSON.stringify(ENV_OPTIONS), '--model', JSON.stringify(MODEL)],
    ...['--optimizer', JSON.stringify(OPTIMIZER), '--loss', JSON.stringify(LOSS), '--max-staleness', String(maxStaleness)],
    ...['--updates', String(UPDATES), '--template-every', '0', '--backend', 'wasm'],
  ];
  let output = '';
  const child = spawn(process.execPath, [cli, 'learner', ...args], {
    env: { ...process.env, TRAJFLOW_TOPIC_PREFIX: config.topicPrefix, TRAJFLOW_HOME: config.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { exited, output: () => output, kill: () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL') };
}

interface PartsOptions {
  readonly runId: string;
  readonly processorsGroup: string;
  readonly maxStaleness: number;
  readonly firstIteration: number;
  /** Sees every step the actors publish, before it goes out. */
  readonly onPublish?: (step: StepEvent) => void;
}

/** The processors and actors as `trajflow train` starts them, in this process, through the broker. */
async function startParts(config: TrajflowConfig, o: PartsOptions) {
  const stepsTopic = topicName(config, 'env.steps');
  const watch = o.onPublish;
  const publisher = watch
    ? new (class extends StepPublisher {
        override publish(step: StepEvent): Promise<void> {
          watch(step);
          return super.publish(step);
        }
      })(backbone.producer, stepsTopic)
    : new StepPublisher(backbone.producer, stepsTopic);
  const scoped = { ...backbone, config, steps: publisher };
  const processors = await startProcessors(scoped, { consumerGroupId: o.processorsGroup, processing: PROCESSING, groupSize: GROUP_SIZE, flushIntervalMs: 50 });
  const provider = await transformerProvider('FrozenLake', { backend: 'wasm', model: MODEL, maxStaleness: o.maxStaleness });
  const actors = await startActors(
    scoped,
    actorsConfig({
      runId: o.runId,
      envName: 'FrozenLake',
      envOptions: ENV_OPTIONS,
      groups: GROUPS,
      groupSize: GROUP_SIZE,
      seedBase: taskSeedBase(SEED),
      firstIteration: o.firstIteration,
      // As `trajflow train` runs them: until stopped.
      iterations: null,
      maxStaleness: o.maxStaleness,
      progressEveryMs: 0,
    }),
    { provider, write: () => {} },
  );
  return { processors, provider, actors };
}

/** The in-process loop on the same seed for UPDATES iterations, never stopped. */
interface LocalRun {
  readonly runId: string;
  readonly curve: CurvePoint[];
  readonly samples: TrainingSampleEvent[];
  readonly checksum: string;
}

async function uninterrupted(maxStaleness: number): Promise<LocalRun> {
  const runId = `local-${uniqueName('resume').replace(/\./g, '-')}`;
  const samples: TrainingSampleEvent[] = [];
  let checksum = '';
  const curve = await runLocal({
    env: 'FrozenLake',
    envOptions: ENV_OPTIONS,
    runId,
    iterations: UPDATES,
    groups: GROUPS,
    groupSize: GROUP_SIZE,
    processing: PROCESSING,
    model: MODEL,
    optimizer: OPTIMIZER,
    loss: LOSS,
    seed: SEED,
    maxStaleness,
    evalEvery: 1_000,
    evalTasks: 1,
    onBatch: (_, __, out) => samples.push(...out.samples),
    onUpdated: (iteration, bundle) => {
      if (iteration === UPDATES - 1) checksum = weightsChecksum(bundle);
    },
  });
  return { runId, curve, samples, checksum };
}

/** The SHA-256 of the weights as a checkpoint's weights.bin holds them (float32 little-endian, in parameter order). */
function weightsChecksum(bundle: PolicyBundle): string {
  const hash = createHash('sha256');
  for (const variable of bundle.model.parameters.values()) {
    const values = variable.dataSync() as Float32Array;
    const bytes = Buffer.alloc(values.length * 4);
    for (let i = 0; i < values.length; i++) bytes.writeFloatLE(values[i]!, i * 4);
    hash.update(bytes);
  }
  return hash.digest('hex');
}

/** Every difference between the resumed real run and the uninterrupted in-process one, first divergence first. */
function compare(real: RealRun, local: LocalRun): string[] {
  const differences: string[] = [];
  const placeOf = (sample: TrainingSampleEvent, runId: string) => sample.episodeId.slice(runId.length);

  // Updates, in order: each made once, on its own iteration, with the same numbers. A restarted learner announces
  // its newest update again (a crash may have come before it went out): a copy with the same numbers.
  const byUpdate = new Map<number, LearnerStepEvent[]>();
  for (const step of real.steps) byUpdate.set(step.step, [...(byUpdate.get(step.step) ?? []), step]);
  const numbers = (s: LearnerStepEvent) => JSON.stringify([s.samples, s.totalLoss, s.gradNormPreClip, s.entropy, s.metrics.ppoKl, s.metrics['batch.iteration']]);
  for (let i = 0; i < UPDATES; i++) {
    const made = byUpdate.get(i) ?? [];
    const update = local.curve[i]?.update;
    if (new Set(made.map(numbers)).size !== 1 || !update) {
      differences.push(`update ${i}: made ${new Set(made.map(numbers)).size} ways by the real run, ${update ? 1 : 0} by the uninterrupted one`);
      continue;
    }
    const step = made[0]!;
    if (step.metrics['batch.iteration'] !== i) differences.push(`update ${i}: trained iteration ${step.metrics['batch.iteration']}`);
    for (const [name, resumed, expected] of [
      ['samples', step.samples, update.samples],
      ['loss', step.totalLoss, update.loss],
      ['policy loss', step.policyLoss, update.pgLoss],
      ['KL', step.kl, update.kl],
      ['entropy', step.entropy, update.entropy],
      ['grad norm', step.gradNormPreClip, update.gradNorm],
      ['PPO-KL', step.metrics.ppoKl, update.ppoKl],
      ['learning rate', step.learningRate, update.learningRate],
    ] as const) {
      if (resumed !== expected) differences.push(`update ${i}: ${name} ${resumed} (resumed) vs ${expected} (uninterrupted)`);
    }
  }

  // Samples: every episode of iterations 0 … UPDATES − 1 once, as the uninterrupted run sampled it.
  const realByPlace = new Map<string, TrainingSampleEvent[]>();
  for (const sample of real.samples) {
    if ((sample.batch?.iteration ?? -1) >= UPDATES) continue; // sampled ahead before the rerun's actors stopped
    const place = placeOf(sample, real.runId);
    realByPlace.set(place, [...(realByPlace.get(place) ?? []), sample]);
  }
  for (const expected of local.samples) {
    const place = placeOf(expected, local.runId);
    const found = realByPlace.get(place) ?? [];
    realByPlace.delete(place);
    if (found.length !== 1) {
      differences.push(`${place}: ${found.length} samples in the real run`);
      continue;
    }
    const sample = found[0]!;
    for (const field of ['tokenIds', 'reward', 'policyVersion', 'behaviourLogProbs', 'advantages', 'lossMask', 'groupRewardMean'] as const) {
      if (JSON.stringify(sample[field]) !== JSON.stringify(expected[field])) differences.push(`${place} (iteration ${sample.batch?.iteration}): ${field} differs`);
    }
    if (sample.batch?.samples !== expected.batch?.samples) differences.push(`${place}: its rollout batch holds ${sample.batch?.samples} samples, not ${expected.batch?.samples}`);
  }
  for (const place of realByPlace.keys()) differences.push(`${place}: sampled by the real run only`);

  // The weights the last update made.
  const last = [...new Set(real.versions.filter((v) => v.version === UPDATES).map((v) => v.checksum))];
  if (last.length !== 1 || last[0] !== local.checksum)
    differences.push(`v${UPDATES}: weights SHA-256 ${last.join(', ') || 'missing'} (resumed) vs ${local.checksum} (uninterrupted)`);
  return differences;
}

// Integration (real Kafka and ClickHouse): trajflow replay end to end. Trajectories sampled by a
// transformer policy at versions 0, 1, 2 are published to <prefix>.trajectories (and their steps to
// <prefix>.env.steps, stored in ClickHouse by the sink); replays select them by policy version, success,
// time and offsets, from Kafka and from ClickHouse (events fetched from Kafka, or rebuilt from the steps
// table), and publish marked samples; the learner trains on them with the importance-weight correction.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName, type TrajflowConfig } from '../../../core/config.js';
import { startSink } from '../../../storage/sink/sink.js';
import { runEpisode } from '../../../rollout/episode.js';
import { createEnv } from '../../../envs/registry.js';
import { applyMigrations } from '../../../infra/clickhouse/migrations.js';
import { clickHouseClient } from '../../../infra/clickhouse/http.js';
import { ensureTopics } from '../../../infra/topics.js';
import { selectBackend } from '../../../learner/backend.js';
import { buildLearnerConfig } from '../../../learner/loop/config.js';
import { startLearner } from '../../../learner/loop/learner.js';
import { createPolicyBundle, disposeBundle, policyOf } from '../../../learner/policy/bundle.js';
import { buildReplayProcessing, planReplay, startReplay } from '../../../learner/replay/run-replay.js';
import { selectTrajectories, type SelectedTrajectory } from '../../../learner/replay/select.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { sampleIdOf } from '../../../processors/samples/index.js';
import type { EventName, EventTypes, StepEvent, TrajectoryEvent } from '../../../schemas/index.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, StepPublisher, type Backbone } from '../../../streams/index.js';
import { uniqueName, waitFor } from '../../helpers/kafka.js';

const SMALL_MODEL = { width: 16, layers: 1, heads: 2, contextLength: 128 };
const GROUPS = 3;
const GROUP_SIZE = 4;

let base: Backbone;
let config: TrajflowConfig;
let scoped: Backbone;
let runId: string;
/** The trajectories as stored in Kafka (decoded: float32 log-probs), by episode id. */
let stored: Map<string, TrajectoryEvent>;
const databases: string[] = [];

before(async () => {
  await selectBackend('wasm');
  base = await connectBackbone(loadConfig(), { clientId: 'test-replay' });
  const defaults = loadConfig();
  const database = `test_replay_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
  databases.push(database);
  config = { ...defaults, topicPrefix: uniqueName('replay'), clickhouse: { ...defaults.clickhouse, database } };
  await ensureTopics(config);
  await applyMigrations(config);
  scoped = { ...base, config, steps: new StepPublisher(base.producer, topicName(config, 'env.steps')) };
  runId = uniqueName('run').replace(/^test\./, 'replay-');

  // Episodes of a transformer policy (model seed 7: not the learner's fresh weights, so importance weights differ from 1).
  const bundle = createPolicyBundle(createEnv('Bandit').actionVocabulary, { ...SMALL_MODEL, seed: 7 });
  try {
    for (let g = 0; g < GROUPS; g++) {
      const policy = policyOf(bundle, g);
      for (let e = 0; e < GROUP_SIZE; e++) {
        const steps: StepEvent[] = [];
        await runEpisode({
          context: {
            runId,
            env: { name: 'Bandit', version: 'v1' },
            groupId: `g${g}`,
            episodeId: `g${g}-e${e}`,
            groupSize: GROUP_SIZE,
            groupSeed: 100 + g,
            rollout: e,
            iteration: g,
          },
          env: createEnv('Bandit'),
          policy,
          // A real clock: events dated 0 are invalid (eventTimeMs must be a positive epoch time).
          clock: () => Date.now(),
          publish: async (event) => void steps.push(event),
        });
        await Promise.all(steps.map((s) => scoped.steps.publish(s)));
        const { trajectory } = trajectoryFromSteps(steps);
        await base.producer.send(topicName(config, 'trajectories'), 'trajectory', trajectory, trajectory.groupId);
      }
    }
  } finally {
    disposeBundle(bundle);
  }
  await base.producer.flush();
  stored = new Map((await readAll('trajectories', 'trajectory')).map((t) => [t.episodeId, t]));
  assert.equal(stored.size, GROUPS * GROUP_SIZE);
});

after(async () => {
  await base.close();
  const server = clickHouseClient(loadConfig(), null);
  for (const database of databases) await server.exec(`DROP DATABASE IF EXISTS ${database}`).catch(() => undefined);
});

async function readAll<N extends EventName>(topic: string, event: N): Promise<EventTypes[N][]> {
  const replay = await createReplay(base.kafka, { topic: topicName(config, topic), decode: eventDecoder(base.codec, event), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value);
}

const episodes = (selected: readonly SelectedTrajectory[]) => selected.map((s) => s.trajectory.episodeId).sort();
const expected = (keep: (t: TrajectoryEvent) => boolean) =>
  [...stored.values()]
    .filter(keep)
    .map((t) => t.episodeId)
    .sort();

test('replay from Kafka by policy version and by success → marked samples → the learner trains them with importance weights', { timeout: 240_000 }, async () => {
  const progress: [number, number][] = [];
  const byVersion = await startReplay(
    scoped,
    { runId, source: 'kafka', minPolicyVersion: 1 },
    { replayId: 'by-version' },
    { onPublished: (done, total) => progress.push([done, total]) },
  );
  assert.deepEqual(progress.at(-1), [2 * GROUP_SIZE, 2 * GROUP_SIZE], 'publishing progress reaches the total');
  assert.equal(progress.length, 2 * GROUP_SIZE);
  assert.equal(byVersion.trajectoriesRead, GROUPS * GROUP_SIZE);
  assert.equal(byVersion.trajectoriesSelected, 2 * GROUP_SIZE);
  assert.equal(byVersion.groups, 2);
  assert.equal(byVersion.groupsKept, 2);
  assert.equal(byVersion.samplesPublished, 2 * GROUP_SIZE);
  assert.deepEqual(byVersion.policyVersions, { min: 1, max: 2 });

  // Successes only: groups with one success are too small (no group std); another estimator than the live one.
  const allWinners = expected((t) => t.success);
  const winnersPerGroup = new Map<string, number>();
  for (const t of stored.values()) if (t.success) winnersPerGroup.set(t.groupId, (winnersPerGroup.get(t.groupId) ?? 0) + 1);
  const winners = expected((t) => t.success && winnersPerGroup.get(t.groupId)! >= 2);
  assert.ok(winners.length > 0 && allWinners.length < stored.size, `the fixture has groups with 2+ successes, and failures (${allWinners.length} of ${stored.size} won)`);
  const bySuccess = await startReplay(scoped, { runId, source: 'kafka', success: true }, { replayId: 'by-success', processing: { estimator: { name: 'reinforce_plus_plus' } } });
  assert.equal(bySuccess.trajectoriesSelected, allWinners.length);
  assert.equal(bySuccess.samplesPublished, winners.length);
  assert.equal(bySuccess.droppedByReason['too-small'] ?? 0, [...winnersPerGroup.values()].filter((n) => n === 1).length);
  console.log(`replay: by version ${byVersion.samplesPublished} samples; by success ${bySuccess.samplesPublished} samples (${bySuccess.groups} groups)`);

  const samples = (await readAll('samples', 'sample')).filter((s) => s.runId === runId);
  assert.equal(samples.length, byVersion.samplesPublished + bySuccess.samplesPublished);
  const versionIds = new Set(expected((t) => t.minPolicyVersion >= 1).map((ep) => sampleIdOf(runId, ep, 'replay-by-version')));
  const successIds = new Set(winners.map((ep) => sampleIdOf(runId, ep, 'replay-by-success')));
  assert.deepEqual(new Set(samples.filter((s) => versionIds.has(s.sampleId)).map((s) => s.sampleId)), versionIds);
  assert.deepEqual(new Set(samples.filter((s) => successIds.has(s.sampleId)).map((s) => s.sampleId)), successIds);
  assert.equal(samples.filter((s) => versionIds.has(s.sampleId) || successIds.has(s.sampleId)).length, samples.length, 'nothing else');
  for (const s of samples) assert.equal(s.estimator, successIds.has(s.sampleId) ? 'replay:reinforce_plus_plus' : 'replay:grpo', 'marked as replayed');
  assert.ok(
    samples.every((s) => s.sampleId !== sampleIdOf(runId, s.episodeId)),
    'no id of a live sample',
  );
  assert.ok(samples.filter((s) => versionIds.has(s.sampleId)).every((s) => s.policyVersion >= 1));

  // The learner: a fresh run (version 0) trained on version-0 trajectories replayed into it. (Samples of
  // later versions would give a fresh learner negative staleness, which learner_step validation rejects.)
  const learnerRun = `${runId}-learner`;
  const into = await startReplay(scoped, { runId, source: 'kafka', maxPolicyVersion: 0 }, { replayId: 'into', intoRunId: learnerRun });
  assert.equal(into.samplesPublished, GROUP_SIZE);
  assert.equal(into.runId, learnerRun);
  const learner = await startLearner(
    scoped,
    buildLearnerConfig(config, {
      runId: learnerRun,
      envName: 'Bandit',
      model: SMALL_MODEL,
      minSamples: 1,
      maxWaitMs: 0,
      maxUpdates: 1,
      backend: 'wasm',
      batchTokens: 100_000,
      optimizer: { importanceCap: 1 },
    }),
    { log: () => {} },
  );
  const stats = await learner.done;
  assert.equal(stats.updates, 1);
  const steps = (await readAll('learner.steps', 'learner_step')).filter((s) => s.runId === learnerRun);
  assert.equal(steps.length, 1);
  const step = steps[0]!;
  assert.ok(step.metrics.replaySamples! > 0, `replaySamples ${step.metrics.replaySamples}`);
  assert.equal(step.metrics.replaySamples, step.samples, 'every trained sample was a replayed one');
  assert.ok(step.samples <= GROUP_SIZE);
  // Cap 1 (the lowest allowed): every token whose learner/behaviour ratio is above 1 is truncated and counted.
  assert.equal(typeof step.metrics.truncatedWeights, 'number');
  assert.ok(
    step.metrics.truncatedWeights! > 0 && step.metrics.truncatedWeights! <= step.metrics.lossTokens!,
    `truncatedWeights ${step.metrics.truncatedWeights} of ${step.metrics.lossTokens} tokens`,
  );
  assert.ok(step.metrics.importanceWeightMax! > 1, 'the raw maximum is reported before truncation');
  assert.ok(Number.isFinite(step.metrics.importanceWeightMean) && step.metrics.importanceWeightMean! > 0, `importanceWeightMean ${step.metrics.importanceWeightMean}`);
  assert.ok(step.metrics.importanceWeightMax! >= step.metrics.importanceWeightMean!);
  assert.ok(Number.isFinite(step.totalLoss));
  console.log(
    `replay → learner: ${step.samples} samples, importance weights mean ${step.metrics.importanceWeightMean!.toFixed(3)} max ${step.metrics.importanceWeightMax!.toFixed(3)}, truncated ${step.metrics.truncatedWeights}`,
  );
});

test('replay selection by time and by offsets on Kafka', { timeout: 120_000 }, async () => {
  const times = [...stored.values()].map((t) => t.lastEventTimeMs);
  const after = await selectTrajectories(scoped, { runId, source: 'kafka', fromMs: Math.max(...times) + 1 });
  assert.equal(after.trajectories.length, 0);
  const all = await selectTrajectories(scoped, { runId, source: 'kafka', fromMs: Math.min(...times), toMs: Math.max(...times) + 1 });
  assert.deepEqual(
    episodes(all.trajectories),
    expected(() => true),
  );
  const middle = [...times].sort((a, b) => a - b)[6]!;
  const late = await selectTrajectories(scoped, { runId, source: 'kafka', fromMs: middle });
  assert.deepEqual(
    episodes(late.trajectories),
    expected((t) => t.lastEventTimeMs >= middle),
  );

  // Offsets: one partition, from its second event on; and a limit.
  const partition = all.trajectories[0]!.partition;
  const onPartition = all.trajectories.filter((t) => t.partition === partition).sort((a, b) => Number(a.offset) - Number(b.offset));
  const firstOffset = Number(onPartition[0]!.offset);
  const ranged = await selectTrajectories(scoped, { runId, source: 'kafka', partition, fromOffset: firstOffset + 1 });
  assert.deepEqual(
    episodes(ranged.trajectories),
    onPartition
      .slice(1)
      .map((t) => t.trajectory.episodeId)
      .sort(),
  );
  const limited = await selectTrajectories(scoped, { runId, source: 'kafka', limit: 5 });
  assert.equal(limited.trajectories.length, 5);
});

test('replay from ClickHouse: rows selected in SQL, events fetched from Kafka or rebuilt from the steps table, identical', { timeout: 180_000 }, async () => {
  const sink = await startSink(scoped, {
    groupId: uniqueName('sink'),
    events: ['step', 'trajectory'],
    flushIntervalMs: 100,
    clickhouse: { url: config.clickhouse.url, database: config.clickhouse.database },
  });
  const ch = clickHouseClient(config);
  const stepCount = [...stored.values()].reduce((n, t) => n + t.stepCount, 0);
  try {
    await waitFor(
      async () => {
        const [t] = await ch.queryJson<{ n: number }>(`SELECT count() AS n FROM trajectories FINAL WHERE run_id = '${runId}'`);
        const [s] = await ch.queryJson<{ n: number }>(`SELECT count() AS n FROM steps FINAL WHERE run_id = '${runId}'`);
        return t!.n === stored.size && s!.n === stepCount;
      },
      'the sink stored every trajectory and step',
      60_000,
      200,
    );
  } finally {
    await sink.close();
  }

  const failures = expected((t) => !t.success);
  const viaKafka = await selectTrajectories(scoped, { runId, source: 'clickhouse', success: false, fetch: 'kafka' });
  assert.deepEqual(episodes(viaKafka.trajectories), failures);
  assert.ok(viaKafka.trajectories.every((s) => s.from === 'kafka'));
  for (const s of viaKafka.trajectories) assert.deepEqual(s.trajectory, stored.get(s.trajectory.episodeId));

  const viaSteps = await selectTrajectories(scoped, { runId, source: 'clickhouse', success: false, fetch: 'steps' });
  assert.deepEqual(episodes(viaSteps.trajectories), failures);
  assert.ok(viaSteps.trajectories.every((s) => s.from === 'steps'));
  assert.deepEqual(viaSteps.unavailable, []);
  for (const s of viaSteps.trajectories)
    assert.deepEqual(s.trajectory, stored.get(s.trajectory.episodeId), `episode ${s.trajectory.episodeId} rebuilt exactly from the steps table`);

  // The same selection from either source gives the same samples.
  const settings = buildReplayProcessing({ replayId: 'same' });
  const fromKafka = await selectTrajectories(scoped, { runId, source: 'kafka', maxPolicyVersion: 1 });
  const fromClickHouse = await selectTrajectories(scoped, { runId, source: 'clickhouse', maxPolicyVersion: 1 });
  assert.equal(fromClickHouse.trajectories.length, 2 * GROUP_SIZE);
  assert.deepEqual(
    planReplay(
      fromClickHouse.trajectories.map((t) => t.trajectory),
      settings,
    ),
    planReplay(
      fromKafka.trajectories.map((t) => t.trajectory),
      settings,
    ),
  );

  const dry = await startReplay(scoped, { runId, source: 'clickhouse', minReward: 0.5, limit: 100 }, { replayId: 'dry' }, { dryRun: true });
  assert.equal(dry.trajectoriesSelected, expected((t) => t.totalReward >= 0.5).length);
  assert.equal(dry.samplesPublished, 0);
  const rewarded = [...stored.values()].filter((t) => t.totalReward >= 0.5);
  const perGroup = new Map<string, number>();
  for (const t of rewarded) perGroup.set(t.groupId, (perGroup.get(t.groupId) ?? 0) + 1);
  assert.equal(dry.samplesBuilt, rewarded.filter((t) => perGroup.get(t.groupId)! >= 2).length, 'samples of the groups with 2+ selected trajectories');
  assert.equal(dry.droppedGroups.length, [...perGroup.values()].filter((n) => n < 2).length);
  assert.ok(dry.dryRun);
});

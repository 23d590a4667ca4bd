// The detectors on the real broker: a synthetic run with a collapse and a healthy run, published to the
// learner-steps, rollout-stats and trajectories topics of a unique prefix; startDetectors as its consumer
// group; the alerts read back from the alerts topic. Then the same across a restart: the second instance
// rebuilds the detectors from the committed part of the topics and raises the later alerts, once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { lastValueFrom, toArray } from 'rxjs';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics } from '../../infra/topics.js';
import { classifyDecodeError, connectBackbone, createReplay, eventDecoder, type Backbone } from '../../streams/index.js';
import type { CollapseAlertEvent, LearnerStepEvent, RolloutStatsEvent, TrajectoryEvent } from '../../schemas/index.js';
import { buildDetectorsConfig } from '../../detectors/config.js';
import { startDetectors, type DetectorsHandle } from '../../detectors/start-detectors.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { learnerPoints, learnerStepEvent, rolloutBatchEvent, rolloutBatches, trajectoriesOfVersion } from './synthetic.js';

const UPDATES = 100;
const VERSIONS = 20;
const detectorsConfig = buildDetectorsConfig({ attributionHoldMs: 1000 });

interface RunEvents {
  steps: LearnerStepEvent[];
  batches: RolloutStatsEvent[];
  trajectories: TrajectoryEvent[];
}

/** Every fourth episode of a group succeeds and earns 1; the others fail and earn 0 — or, with the reward bug, 2. */
const outcomeOf =
  (rewardBug: boolean) =>
  (k: number): { success: boolean; reward: number } =>
    k % 4 === 0 ? { success: true, reward: 1 } : { success: false, reward: rewardBug ? 2 : 0 };

/** An 8× grad-norm spike at update 70, in-group std falls at batch 40, invalid actions rise at 80, template output from version 10, repeated answers from 14, failing actions turn certain from 13, failures out-earn successes from 15. */
function collapsingRun(runId: string): RunEvents {
  const points = learnerPoints(UPDATES, 4, { spikeAt: 70 });
  return {
    steps: points.map((p, i) => learnerStepEvent(runId, i, p)),
    batches: rolloutBatches(UPDATES, 4, { cliffAt: 40, invalidAt: 80 }).map((b, i) => rolloutBatchEvent(runId, i, b)),
    trajectories: Array.from({ length: VERSIONS }, (_, v) =>
      trajectoriesOfVersion(runId, v, 4, { template: v >= 10, repeat: v >= 14, perState: 4, logProb: v >= 13 ? -0.05 : -0.5, outcome: outcomeOf(v >= 15) }),
    ).flat(),
  };
}

function healthyRun(runId: string): RunEvents {
  return {
    steps: learnerPoints(UPDATES, 5).map((p, i) => learnerStepEvent(runId, i, p)),
    batches: rolloutBatches(UPDATES, 5).map((b, i) => rolloutBatchEvent(runId, i, b)),
    trajectories: Array.from({ length: VERSIONS }, (_, v) => trajectoriesOfVersion(runId, v, 5, { perState: 4, outcome: outcomeOf(false) })).flat(),
  };
}

/** [runId, kind, learnerStep] of the alerts each run must raise, and nothing else. */
const expectedOf = (runId: string) =>
  [
    [runId, 'reward_variance_cliff', 44], // batch 44 (T0 + 44.5 s) → learner step 44 (T0 + 44 s)
    [runId, 'entropy_collapse', 14], // windows 13–14 (recent 2) below 0.3 × the early surprisal
    [runId, 'grad_norm_spike', 70],
    [runId, 'invalid_action_rise', 81],
    [runId, 'template_collapse', 11], // window 11 (confirm 2), steps at T0 + 11.1 s → step 11
    [runId, 'action_repetition', 15],
    [runId, 'reward_success_gap', 15], // window 15: every failure earns 2, every success 1
  ].sort();

let backbone: Backbone;
const handles: DetectorsHandle[] = [];

before(async () => {
  backbone = await connectBackbone(loadConfig(), { clientId: 'test-detectors' });
});
after(async () => {
  for (const handle of handles) await handle.close().catch(() => undefined);
  await backbone.close();
});

async function isolatedConfig(): Promise<TrajflowConfig> {
  const config = { ...loadConfig(), topicPrefix: uniqueName('detectors') };
  await ensureTopics(config);
  return config;
}

async function publish(config: TrajflowConfig, events: Partial<RunEvents>): Promise<number> {
  const sends = [
    ...(events.steps ?? []).map((e) => backbone.producer.send(topicName(config, 'learner.steps'), 'learner_step', e, e.runId)),
    ...(events.batches ?? []).map((e) => backbone.producer.send(topicName(config, 'rollout.stats'), 'rollout_stats', e, e.runId)),
    ...(events.trajectories ?? []).map((e) => backbone.producer.send(topicName(config, 'trajectories'), 'trajectory', e, e.groupId)),
  ];
  await Promise.all(sends);
  return sends.length;
}

async function readAlerts(config: TrajflowConfig): Promise<CollapseAlertEvent[]> {
  const replay = await createReplay(backbone.kafka, { topic: topicName(config, 'alerts'), decode: eventDecoder(backbone.codec, 'collapse_alert'), classify: classifyDecodeError });
  return (await lastValueFrom(replay.events$.pipe(toArray()))).map((e) => e.value);
}

async function runUntilIdle(config: TrajflowConfig, expectedInputs: number): Promise<DetectorsHandle> {
  const handle = await startDetectors({ ...backbone, config }, detectorsConfig, { commitIntervalMs: 200, sessionTimeoutMs: 10_000 });
  handles.push(handle);
  // Every input delivered and acknowledged: its alerts (held ones included) are on the broker.
  await waitFor(() => handle.consumer.stats.acked >= expectedInputs, `${expectedInputs} inputs processed (acked ${handle.consumer.stats.acked})`, 90_000, 100);
  await handle.close();
  return handle;
}

const triples = (alerts: readonly CollapseAlertEvent[]) => alerts.map((a) => [a.runId, a.kind, a.learnerStep] as [string, string, number]).sort();

test('a collapsing run raises each expected alert once, at the expected learner step; a healthy run raises none', { timeout: 150_000 }, async () => {
  const config = await isolatedConfig();
  const bad = collapsingRun('run-collapse');
  const good = healthyRun('run-healthy');
  const inputs = (await publish(config, bad)) + (await publish(config, good));

  const handle = await runUntilIdle(config, inputs);
  const alerts = await readAlerts(config);
  assert.deepEqual(triples(alerts), expectedOf('run-collapse'));
  assert.equal(new Set(alerts.map((a) => a.alertId)).size, alerts.length);
  assert.equal(handle.stats.alerts, alerts.length);
  assert.equal(handle.engine.stats.lateSteps, 0, 'per-partition watermarks: no trajectory step is late although the partitions are read unevenly');
  const spike = alerts.find((a) => a.kind === 'grad_norm_spike')!;
  assert.equal(spike.severity, 'warning', 'a spike whose update did not move the policy far (its PPO-KL is small)');
  assert.equal(spike.eventTimeMs, bad.steps[70]!.eventTimeMs);
});

test('restarted detectors rebuild their state from the committed topics and go on: later alerts fire, none twice', { timeout: 200_000 }, async () => {
  const config = await isolatedConfig();
  const run = collapsingRun('run-restart');
  // Part 1: updates and batches 0–44, versions 0–7: only the reward cliff (batch 44) has happened.
  const first = { steps: run.steps.slice(0, 45), batches: run.batches.slice(0, 45), trajectories: run.trajectories.filter((t) => t.maxPolicyVersion < 8) };
  const rest = { steps: run.steps.slice(45), batches: run.batches.slice(45), trajectories: run.trajectories.filter((t) => t.maxPolicyVersion >= 8) };
  const firstInputs = await publish(config, first);
  const firstHandle = await runUntilIdle(config, firstInputs);
  assert.deepEqual(triples(await readAlerts(config)), [['run-restart', 'reward_variance_cliff', 44]]);
  assert.equal(firstHandle.stats.rebuilt, 0);

  const restInputs = await publish(config, rest);
  const second = await runUntilIdle(config, restInputs);
  assert.equal(second.stats.rebuilt, firstInputs, 'the committed part was replayed into the detectors');
  assert.equal(second.stats.inputs, restInputs, 'the group resumed at its committed offsets');
  const alerts = await readAlerts(config);
  // The template needs the early windows (versions 0–2), the entropy rule its early level (updates 0–9) and
  // the reward gap its early windows, all from part 1: they fire only because the state was rebuilt.
  assert.deepEqual(triples(alerts), expectedOf('run-restart'));
  assert.equal(alerts.length, expectedOf('run-restart').length, 'no alert written twice');
});

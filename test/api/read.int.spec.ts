// Integration (real ClickHouse, real Kafka): the read endpoints of the HTTP API over a database of their own
// (migrations applied, dropped afterwards). Rows are inserted the way the sink writes them (its row mappers),
// some twice, as a redelivery would; then every endpoint is asked and its numbers checked against what was
// inserted. Then hostile parameters through every endpoint, oversize limits and windows, the event stream,
// and consumer lag of a group that consumed part of a topic. Waits poll, never sleep.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { Admin } from 'kafkajs';
import { loadConfig, topicName, type TrajflowConfig } from '../../core/config.js';
import { ensureTopics, topicSpecs } from '../../infra/topics.js';
import { applyMigrations } from '../../infra/clickhouse/migrations.js';
import { clickHouseClient, type ClickHouseHttp } from '../../infra/clickhouse/http.js';
import { eventRows, tableNames, type Row, type TableName } from '../../storage/sink/rows.js';
import type { EventName, EventTypes, StepEvent, TrajectoryEvent } from '../../schemas/index.js';
import { buildSample } from '../../processors/samples/build-sample.js';
import { connectBackbone, createKafka, type Backbone } from '../../streams/index.js';
import { loadApiConfig } from '../../api/config.js';
import { startHttpServer, type HttpServerHandle } from '../../api/server.js';
import { createApiServices, type ApiServices } from '../../api/services.js';
import { makeStep, sampleEvents } from '../../bench/load/events.js';
import { gatewayEnd } from '../helpers/gateway-ends.js';
import { uniqueName, waitFor } from '../helpers/kafka.js';
import { openSse, type SseClient } from './sse.js';

const base = loadConfig();
const hex = randomBytes(3).toString('hex');
const database = `test_read_${Date.now().toString(36)}_${hex}`;
const config: TrajflowConfig = { ...base, topicPrefix: uniqueName('read'), clickhouse: { ...base.clickhouse, database } };
const RUN_A = `read-a-${hex}`;
const RUN_B = `read-b-${hex}`;
/** A run recorded by the gateway: three episodes finished by the agent (one end stored twice), one timed out. */
const RUN_G = `read-g-${hex}`;
/** In both runs: GET /v1/trajectories/:episodeId without a run is ambiguous. */
const E1 = `ep-${hex}/g0/e0`;
const E2 = `ep-${hex}/g0/e1`;
const GROUP = `ep-${hex}/g0`;
/** A multiple of 10 s, so the bucket boundaries below are known. */
const T0 = Math.floor((Date.now() - 600_000) / 10_000) * 10_000;

let store: ClickHouseHttp;
let backbone: Backbone;
let admin: Admin;
let server: HttpServerHandle;
let services: ApiServices;
const logs: string[] = [];
const clients: SseClient[] = [];
let offset = 0;

async function insert<N extends EventName>(event: N, values: ReadonlyArray<EventTypes[N]>, includeSampleTokens = true): Promise<void> {
  const byTable = new Map<TableName, Row[]>();
  for (const value of values) {
    for (const { table, row } of eventRows(event, value, { topic: 'test', partition: 0, offset: String(offset++) }, { includeSampleTokens })) {
      byTable.set(table, [...(byTable.get(table) ?? []), row]);
    }
  }
  for (const [table, rows] of byTable) await store.insertJsonEachRow(table, rows);
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const unbiasedStd = (xs: readonly number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));

/** The rewards of each rollout batch; the stored statistics are computed from them. */
const BATCH_REWARDS = [
  [0, 0, 0, 1],
  [0, 1, 0, 1, 0, 0],
  [1, 1, 0, 0, 1, 0, 1, 0],
  [1, 1, 1, 0, 1, 1, 1, 0, 1, 1],
];
const MEAN_LENGTH = [2, 3, 4, 5];
const batchTime = (i: number) => T0 + 1000 * (i + 1);
const rollout = BATCH_REWARDS.map((rewards, i): EventTypes['rollout_stats'] => {
  const rate = mean(rewards);
  return {
    ...sampleEvents.rollout_stats,
    runId: RUN_A,
    batchId: `batch-${i}`,
    groups: 2,
    trajectories: rewards.length,
    rewardMean: rate,
    rewardStd: unbiasedStd(rewards),
    meanInGroupRewardStd: 0.1 * i,
    successRate: rate,
    passAtK: { '1': rate, '2': Math.min(1, rate + 0.25) },
    passHatK: { '1': rate, '2': rate * rate },
    meanLength: MEAN_LENGTH[i]!,
    invalidActionRate: 0.1,
    incomplete: 0,
    droppedGroups: i,
    droppedByReason: i === 0 ? {} : { 'variance:flat': i },
    eventTimeMs: batchTime(i),
    // Batch 0 as a v1 event (no close reasons); then one full group and one closed by timeout (idle in the last).
    closedBy: i === 0 ? {} : { full: 1, [i === 3 ? 'idle' : 'timeout']: 1 },
  };
});

const stepsA: StepEvent[] = [0, 1, 2].map((i) =>
  makeStep(
    {
      runId: RUN_A,
      episodeId: E1,
      groupId: GROUP,
      stepIndex: i,
      eventId: `${E1}/s${i}`,
      eventTimeMs: T0 + 100 * i,
      terminated: i === 2,
      reward: i === 2 ? 1 : 0,
      actionValid: i !== 1,
      policyVersion: 0,
    },
    i,
  ),
);

function trajectoryOf(steps: readonly StepEvent[], overrides: Partial<TrajectoryEvent> = {}): TrajectoryEvent {
  const first = steps[0]!;
  const last = steps[steps.length - 1]!;
  return {
    runId: first.runId,
    envName: first.envName,
    envVersion: first.envVersion,
    groupId: first.groupId,
    episodeId: first.episodeId,
    outcome: 'terminated',
    stepCount: steps.length,
    totalReward: steps.reduce((a, s) => a + s.reward, 0),
    success: true,
    invalidActions: steps.filter((s) => !s.actionValid).length,
    gapCount: 0,
    minPolicyVersion: 0,
    maxPolicyVersion: 0,
    firstEventTimeMs: first.eventTimeMs,
    lastEventTimeMs: last.eventTimeMs,
    steps: steps.map(({ stepIndex, observation, observationTokenIds, action, actionTokenIds, actionLogProbs, policyVersion, reward, actionValid, stateKey, eventTimeMs }) => ({
      stepIndex,
      observation,
      observationTokenIds,
      action,
      actionTokenIds,
      actionLogProbs,
      policyVersion,
      reward,
      actionValid,
      stateKey,
      eventTimeMs,
    })),
    metrics: { durationMs: 300 },
    ...overrides,
  };
}

const STEP_ADVANTAGES = [0.5, -0.25, 1];

/** Held-out evaluations of run A: versions 0, 1, 2, greedy success rising; v1's mean reward diverged. */
const GREEDY = [0.05, 0.4, 0.75];
const evaluationsA = GREEDY.map((greedySuccess, version): EventTypes['evaluation'] => ({
  ...sampleEvents.evaluation,
  runId: RUN_A,
  policyVersion: version,
  trainedIteration: version - 1,
  envSteps: version === 0 ? -1 : 500 * version,
  greedySuccess,
  meanReward: version === 1 ? Number.NaN : greedySuccess,
  randomSuccess: 0.015,
  eventTimeMs: T0 + 1700 + 1500 * version,
}));

before(async () => {
  await applyMigrations(config);
  store = clickHouseClient(config);
  // Run A: one episode with three steps (one stored twice), another assembled without steps, its sample
  // with token arrays; four rollout batches (one stored twice) and the groups of the first; three learner
  // steps, one diverged; two policy versions; two alerts.
  const trajectoryA = trajectoryOf(stepsA);
  await insert('step', [...stepsA, stepsA[1]!]);
  await insert('trajectory', [
    trajectoryA,
    trajectoryOf(stepsA.slice(0, 2), { episodeId: E2, outcome: 'truncated', success: false, totalReward: 0, stepCount: 5, lastEventTimeMs: T0 + 5000, steps: [] }),
  ]);
  await insert('sample', [
    buildSample(trajectoryA, { level: 'step', stepAdvantages: STEP_ADVANTAGES }, { estimator: 'gigpo', group: { size: 2, rewardMean: 0.5, rewardStd: 0.7 } }),
  ]);
  await insert('rollout_stats', [...rollout, rollout[2]!]);
  await insert(
    'rollout_stats',
    [0, 1].map((g) => ({ ...rollout[0]!, scope: 'group', groupId: `${GROUP}-${g}`, groups: 1, trajectories: 2 })),
  );
  await insert(
    'learner_step',
    [0, 1, 2].map((i) => ({
      ...sampleEvents.learner_step,
      runId: RUN_A,
      step: i,
      policyVersion: i,
      totalLoss: [0.5, Number.NaN, 0.25][i]!,
      entropy: 1.2 - 0.1 * i,
      clipFractionLow: i === 1 ? null : 0.01 * (i + 1),
      backend: 'cpu',
      metrics: { importanceWeightMean: 1 + i / 100, importanceWeightMax: 2 },
      eventTimeMs: T0 + 1500 * (i + 1),
    })),
  );
  await insert(
    'policy_version',
    [1, 2].map((version) => ({ ...sampleEvents.policy_version, runId: RUN_A, version, parentVersion: version - 1, learnerStep: version - 1, createdAtMs: T0 + 1600 + version })),
  );
  await insert('collapse_alert', [
    {
      ...sampleEvents.collapse_alert,
      runId: RUN_A,
      alertId: `${RUN_A}-alert-1`,
      kind: 'entropy_collapse',
      severity: 'warning',
      value: 0.2,
      threshold: 0.3,
      eventTimeMs: T0 + 3000,
    },
    {
      ...sampleEvents.collapse_alert,
      runId: RUN_A,
      alertId: `${RUN_A}-alert-2`,
      kind: 'nan',
      severity: 'critical',
      value: Number.NaN,
      threshold: 0,
      evidence: { totalLoss: Number.NaN },
      eventTimeMs: T0 + 3100,
    },
  ]);
  // Evaluations out of version order, v1 stored twice (a redelivery); one of run B.
  await insert('evaluation', [evaluationsA[2]!, evaluationsA[0]!, evaluationsA[1]!, evaluationsA[1]!]);
  await insert('evaluation', [{ ...sampleEvents.evaluation, runId: RUN_B, policyVersion: 7, eventTimeMs: T0 + 1800 }]);
  // Run B: the same episode id, one step, a sample whose tokens the sink did not keep.
  const stepB = makeStep({ runId: RUN_B, episodeId: E1, groupId: GROUP, stepIndex: 0, eventId: `${RUN_B}/s0`, eventTimeMs: T0 + 50 }, 7);
  await insert('step', [stepB]);
  await insert(
    'sample',
    [buildSample(trajectoryOf([stepB]), { level: 'trajectory', advantage: 0.75 }, { estimator: 'grpo', group: { size: 1, rewardMean: 0, rewardStd: 0 } })],
    false,
  );

  // Run G: the gateway's outcome steps (gateway/record.ts): three finished, one timed out, one redelivered.
  const end = (episode: number, reason: 'finish' | 'timeout') => gatewayEnd(RUN_G, episode, reason, T0 + 100 * episode);
  await insert('step', [end(0, 'finish'), end(1, 'finish'), end(2, 'finish'), end(2, 'finish'), end(3, 'timeout')]);
  // A turn (no gatewayOutcome) counts for nothing here.
  await insert('step', [
    makeStep({ runId: RUN_G, envVersion: 'openai-gateway-v1', episodeId: `${RUN_G}-e0`, groupId: `${RUN_G}-g`, stepIndex: 0, eventId: `${RUN_G}/e0/0`, eventTimeMs: T0 }, 9),
  ]);

  // The topics first: connecting the backbone publishes the schemas to <prefix>.schemas.
  admin = createKafka(config, { clientId: 'test-dashboard-read-admin', quiet: true }).admin();
  await admin.connect();
  await ensureTopics(
    config,
    admin,
    topicSpecs.filter((s) => s.name === 'schemas' || s.name === 'env.steps'),
  );
  backbone = await connectBackbone(config, { clientId: 'test-dashboard-read' });
  services = createApiServices(backbone);
  server = await startHttpServer(loadApiConfig({ port: 0 }, {}), {
    ...services,
    events: { pollMs: 200, heartbeatMs: 1000 },
    log: (line, error) => logs.push(`${line}${error instanceof Error ? `\n${error.stack}` : ''}`),
  });
});

after(async () => {
  clients.forEach((client) => client.close());
  await server?.close(500);
  await services?.close();
  if (admin) {
    const ours = (await admin.listTopics()).filter((t) => t.startsWith(`${config.topicPrefix}.`));
    if (ours.length > 0) await admin.deleteTopics({ topics: ours, timeout: 20_000 }).catch(() => undefined);
    await admin.deleteGroups([`${config.topicPrefix}.sink`]).catch(() => undefined);
    await admin.disconnect();
  }
  await backbone?.close();
  await clickHouseClient(base, null)
    .exec(`DROP DATABASE IF EXISTS ${database}`)
    .catch(() => undefined);
});

interface Answer {
  readonly status: number;
  readonly text: string;
  readonly json: Record<string, any>;
}

async function get(path: string): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`);
  const text = await response.text();
  assert.doesNotMatch(text, /\bat .+\.(ts|js):\d+|DB::Exception|node_modules/, `${path}: no stack trace or server internals`);
  if (response.status >= 400) assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/, path);
  return { status: response.status, text, json: JSON.parse(text) as Record<string, any> };
}

async function ok(path: string): Promise<Record<string, any>> {
  const answer = await get(path);
  assert.equal(answer.status, 200, `${path}: ${answer.text}`);
  return answer.json;
}

const close = (a: number | null | undefined, b: number, what: string) => assert.ok(a !== null && a !== undefined && Math.abs(a - b) < 1e-9, `${what}: ${a} ≈ ${b}`);
const enc = encodeURIComponent;

test('GET /v1/runs: each run with its env, times and counts; limit and truncated', async () => {
  const body = await ok('/v1/runs');
  const a = body.runs.find((r: { runId: string }) => r.runId === RUN_A);
  // Steps are counted as rows (see storage/query/runs.ts): the step stored twice counts twice until
  // ClickHouse merges it away, which it may have done already. The last test merges and checks 3.
  assert.ok(a.stepEvents === 3 || a.stepEvents === 4, `step rows ${a.stepEvents}`);
  assert.deepEqual(
    { ...a, stepEvents: 3 },
    {
      runId: RUN_A,
      envName: 'FrozenLake',
      envVersion: 'v1',
      firstEventTimeMs: T0,
      lastEventTimeMs: T0 + 5000,
      stepEvents: 3,
      episodes: 1,
      assembledEpisodes: 2,
      successfulEpisodes: 1,
      rolloutBatches: 4,
      learnerSteps: 3,
      latestPolicyVersion: 2,
    },
  );
  assert.ok(body.runs.some((r: { runId: string }) => r.runId === RUN_B));
  const one = await ok('/v1/runs?limit=1');
  assert.equal(one.count, 1);
  assert.equal(one.truncated, true);
  const none = await ok(`/v1/runs?sinceMs=${T0 - 100 * 86_400_000}&untilMs=${T0 - 1_000_000}`);
  assert.equal(
    none.runs.some((r: { runId: string }) => r.runId === RUN_A),
    false,
    'a window before the run has none of it',
  );
});

test('GET /v1/runs/:runId/curve: one point per batch (a duplicate counted once), with cumulative env steps', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/curve`);
  assert.equal(body.batches, 4);
  assert.equal(body.bucketMs, null);
  assert.equal(body.points.length, 4);
  let cumulative = 0;
  body.points.forEach((point: any, i: number) => {
    const rewards = BATCH_REWARDS[i]!;
    cumulative += rewards.length * MEAN_LENGTH[i]!;
    assert.equal(point.batchId, `batch-${i}`);
    assert.equal(point.timeMs, batchTime(i));
    close(point.rewardMean, mean(rewards), 'rewardMean');
    close(point.rewardStd, unbiasedStd(rewards), 'rewardStd');
    close(point.rewardLow, mean(rewards) - unbiasedStd(rewards), 'rewardLow');
    close(point.successRate, mean(rewards), 'successRate');
    close(point.passAtK['2'], Math.min(1, mean(rewards) + 0.25), 'pass@2');
    close(point.passHatK['2'], mean(rewards) ** 2, 'pass^2');
    assert.equal(point.envSteps, rewards.length * MEAN_LENGTH[i]!);
    assert.equal(point.cumulativeEnvSteps, cumulative);
  });
  // From the second batch on: the env steps before the window still count.
  const later = await ok(`/v1/runs/${RUN_A}/curve?sinceMs=${batchTime(1)}&untilMs=${batchTime(3) + 1}`);
  assert.deepEqual(
    later.points.map((p: any) => p.cumulativeEnvSteps),
    [26, 58, 108],
  );
  assert.deepEqual(
    body.points.map((p: any) => [p.closedFull, p.closedIdle, p.closedTimeout, p.closedEvicted]),
    [
      [0, 0, 0, 0],
      [1, 0, 1, 0],
      [1, 0, 1, 0],
      [1, 1, 0, 0],
    ],
  );
});

test('curve with bucketMs pools the batches of a bucket exactly; too many points without it are bucketed automatically', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/curve?bucketMs=2000`);
  assert.equal(body.autoBucketed, false);
  assert.deepEqual(
    body.points.map((p: any) => [p.timeMs, p.batches]),
    [
      [T0, 1],
      [T0 + 2000, 2],
      [T0 + 4000, 1],
    ],
  );
  const pooled = [...BATCH_REWARDS[1]!, ...BATCH_REWARDS[2]!];
  const middle = body.points[1];
  close(middle.rewardMean, mean(pooled), 'pooled mean');
  close(middle.rewardStd, unbiasedStd(pooled), 'pooled std');
  close(middle.successRate, mean(pooled), 'pooled success rate');
  close(middle.passAtK['1'], (mean(BATCH_REWARDS[1]!) + mean(BATCH_REWARDS[2]!)) / 2, 'pass@1 weighted by groups');
  assert.equal(middle.envSteps, 6 * 3 + 8 * 4);
  assert.equal(middle.trajectories, 14);
  close(middle.meanLength, (6 * 3 + 8 * 4) / 14, 'meanLength');
  assert.deepEqual([middle.closedFull, middle.closedIdle, middle.closedTimeout, middle.closedEvicted], [2, 0, 2, 0]);

  const auto = await ok(`/v1/runs/${RUN_A}/curve?limit=2`);
  assert.equal(auto.autoBucketed, true);
  assert.ok(auto.bucketMs >= 1000 && auto.bucketMs % 1000 === 0);
  assert.ok(auto.points.length <= 2);
  assert.equal(auto.truncated, false);
  assert.equal(
    auto.points.reduce((n: number, p: any) => n + p.batches, 0),
    4,
    'every batch is in some point',
  );
  assert.equal(auto.points.at(-1).cumulativeEnvSteps, 108);

  const explicit = await ok(`/v1/runs/${RUN_A}/curve?bucketMs=1000&limit=2`);
  assert.equal(explicit.truncated, true);
  assert.equal(explicit.points.length, 2);
});

test('GET /v1/runs/:runId/rollout-stats: batch rows by default, group rows with scope=group, filters', async () => {
  const batches = await ok(`/v1/runs/${RUN_A}/rollout-stats`);
  assert.equal(batches.count, 4);
  assert.deepEqual(
    batches.rolloutStats.map((r: any) => r.batchId),
    ['batch-0', 'batch-1', 'batch-2', 'batch-3'],
  );
  assert.equal(batches.rolloutStats[0].groupId, null);
  assert.deepEqual(batches.rolloutStats[2].droppedByReason, { 'variance:flat': 2 });
  const groups = await ok(`/v1/runs/${RUN_A}/rollout-stats?scope=group&order=desc`);
  assert.deepEqual(
    groups.rolloutStats.map((r: any) => r.groupId),
    [`${GROUP}-1`, `${GROUP}-0`],
  );
  const one = await ok(`/v1/runs/${RUN_A}/rollout-stats?batchId=batch-3&limit=1`);
  assert.equal(one.rolloutStats[0].trajectories, 10);
  assert.equal(one.truncated, false);
  const newest = await ok(`/v1/runs/${RUN_A}/rollout-stats?order=desc&limit=1`);
  assert.equal(newest.rolloutStats[0].batchId, 'batch-3');
  assert.equal(newest.truncated, true);
});

test('GET /v1/runs/:runId/learner-metrics: every field per update, details joined, NaN as null named in nonFinite', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/learner-metrics`);
  assert.equal(body.count, 3);
  const [first, second] = body.learnerSteps;
  assert.equal(first.step, 0);
  assert.equal(first.totalLoss, 0.5);
  assert.equal(first.clipFractionLow, 0.01);
  assert.equal(first.backend, 'cpu');
  assert.deepEqual(first.metrics, { importanceWeightMax: 2, importanceWeightMean: 1 });
  for (const field of [
    'policyLoss',
    'klLoss',
    'entropyLoss',
    'entropy',
    'kl',
    'clipFraction',
    'gradNormPreClip',
    'learningRate',
    'tokens',
    'samples',
    'stalenessMean',
    'stalenessMax',
    'durationMs',
    'eventTimeMs',
    'policyVersion',
  ]) {
    assert.equal(typeof first[field], 'number', field);
  }
  assert.equal(first.tokens, sampleEvents.learner_step.tokens);
  assert.deepEqual(first.nonFinite, {});
  assert.equal(second.totalLoss, null);
  assert.equal(second.clipFractionLow, null);
  assert.deepEqual(second.nonFinite, { totalLoss: 'nan' });
  const desc = await ok(`/v1/runs/${RUN_A}/learner-metrics?order=desc&limit=1`);
  assert.equal(desc.learnerSteps[0].step, 2);
  assert.equal(desc.truncated, true);
});

test('GET /v1/runs/:runId/evaluations: every field per policy version, in version order, the redelivered one once, NaN as null', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/evaluations`);
  assert.equal(body.runId, RUN_A);
  assert.equal(body.count, 3);
  assert.equal(body.truncated, false);
  assert.deepEqual(
    body.evaluations.map((e: any) => e.policyVersion),
    [0, 1, 2],
    'by version, the duplicate once, no other run',
  );
  assert.deepEqual(body.evaluations[2], evaluationsA[2], 'every field as the event had it');
  assert.deepEqual(body.evaluations[0], evaluationsA[0], 'v0: -1 markers as stored');
  assert.equal(body.evaluations[1].meanReward, null, 'a NaN mean reward is null');
  assert.deepEqual(
    body.evaluations.map((e: any) => e.greedySuccess),
    GREEDY,
  );
  const desc = await ok(`/v1/runs/${RUN_A}/evaluations?order=desc&limit=1`);
  assert.deepEqual(
    desc.evaluations.map((e: any) => e.policyVersion),
    [2],
  );
  assert.equal(desc.truncated, true);
  const window = await ok(`/v1/runs/${RUN_A}/evaluations?sinceMs=${evaluationsA[1]!.eventTimeMs}&untilMs=${evaluationsA[2]!.eventTimeMs}`);
  assert.deepEqual(
    window.evaluations.map((e: any) => e.policyVersion),
    [1],
    'the window is [sinceMs, untilMs) on the event time',
  );
  const b = await ok(`/v1/runs/${RUN_B}/evaluations`);
  assert.deepEqual(
    b.evaluations.map((e: any) => [e.runId, e.policyVersion]),
    [[RUN_B, 7]],
  );
  const refused = await get(`/v1/runs/${RUN_A}/evaluations?version=1`);
  assert.equal(refused.status, 400);
  assert.equal(refused.json.field, 'version');
});

test('GET /v1/runs/:runId/alerts: newest first with evidence; kind and severity filters', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/alerts`);
  assert.deepEqual(
    body.alerts.map((a: any) => a.kind),
    ['nan', 'entropy_collapse'],
  );
  assert.equal(body.alerts[0].value, null, 'a NaN value is null');
  assert.deepEqual(body.alerts[0].evidence, { totalLoss: null });
  assert.deepEqual(body.alerts[1].evidence, sampleEvents.collapse_alert.evidence);
  const warnings = await ok(`/v1/runs/${RUN_A}/alerts?severity=warning&kind=entropy_collapse`);
  assert.deepEqual(
    warnings.alerts.map((a: any) => a.alertId),
    [`${RUN_A}-alert-1`],
  );
});

test('GET /v1/runs/:runId/pass-at-k: latest batch, the window pooled, per k, and over time', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/pass-at-k`);
  const rates = BATCH_REWARDS.map(mean);
  assert.deepEqual(body.ks, [1, 2]);
  assert.equal(body.latest.batchId, 'batch-3');
  close(body.latest.passAtK['1'], rates[3]!, 'latest pass@1');
  close(body.overall.passAtK['1'], mean(rates), 'overall pass@1');
  close(body.overall.passHatK['2'], mean(rates.map((r) => r * r)), 'overall pass^2');
  assert.equal(body.overall.batches, 4);
  assert.equal(body.byK[1].k, 2);
  close(body.byK[1].latestPassHatK, rates[3]! ** 2, 'byK latest pass^2');
  assert.equal(body.overTime.points.length, 4);
  const bucketed = await ok(`/v1/runs/${RUN_A}/pass-at-k?bucketMs=2000`);
  assert.deepEqual(
    bucketed.overTime.points.map((p: any) => p.batches),
    [1, 2, 1],
  );
  close(bucketed.overTime.points[1].passHatK['1'], (rates[1]! + rates[2]!) / 2, 'bucketed pass^1');
});

test('GET /v1/runs/:runId/trajectories: assembled episodes, newest first, with a success filter', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/trajectories`);
  assert.deepEqual(
    body.trajectories.map((t: any) => t.episodeId),
    [E2, E1],
  );
  const [e2, e1] = body.trajectories;
  assert.equal(e1.success, true);
  assert.equal(e1.invalidActions, 1);
  assert.deepEqual(e1.metrics, { durationMs: 300 });
  assert.equal(e2.outcome, 'truncated');
  const successful = await ok(`/v1/runs/${RUN_A}/trajectories?success=true`);
  assert.deepEqual(
    successful.trajectories.map((t: any) => t.episodeId),
    [E1],
  );
  const failed = await ok(`/v1/runs/${RUN_A}/trajectories?success=false&outcome=truncated&groupId=${enc(GROUP)}`);
  assert.deepEqual(
    failed.trajectories.map((t: any) => t.episodeId),
    [E2],
  );
});

test('GET /v1/runs/:runId/episode-outcomes: trajectories by outcome; gateway episodes finished and timed out, each once', async () => {
  const a = await ok(`/v1/runs/${RUN_A}/episode-outcomes`);
  assert.deepEqual({ trajectories: a.trajectories, gateway: a.gateway }, { trajectories: { terminated: 1, truncated: 1, incomplete: 0 }, gateway: { finished: 0, timedOut: 0 } });
  const g = await ok(`/v1/runs/${RUN_G}/episode-outcomes`);
  assert.deepEqual(g.gateway, { finished: 3, timedOut: 1 }, 'the redelivered end counts once; a turn counts for nothing');
  assert.deepEqual(g.trajectories, { terminated: 0, truncated: 0, incomplete: 0 });
  const before = await ok(`/v1/runs/${RUN_G}/episode-outcomes?sinceMs=${T0 - 60_000}&untilMs=${T0 + 150}`);
  assert.deepEqual(before.gateway, { finished: 2, timedOut: 0 }, 'the window bounds the ends read');
});

test('one trajectory turn by turn: steps with text, reward, validity, advantage, and the sample tokens with their loss mask', async () => {
  const body = await ok(`/v1/runs/${RUN_A}/trajectories/${enc(E1)}`);
  assert.equal(body.runId, RUN_A);
  assert.equal(body.trajectory.episodeId, E1);
  assert.equal(body.steps.length, 3, 'the step stored twice is shown once');
  assert.equal(body.tokensStored, true);
  assert.equal(body.aligned, true);
  assert.equal(body.advantageSource, 'sample-tokens');
  const tokens = body.sample.tokens;
  body.steps.forEach((step: any, i: number) => {
    const source = stepsA[i]!;
    assert.equal(step.observation, source.observation);
    assert.equal(step.action, source.action);
    assert.equal(step.reward, source.reward);
    assert.equal(step.actionValid, source.actionValid);
    close(step.advantage, Math.fround(STEP_ADVANTAGES[i]!), `advantage of step ${i}`);
    const span = step.sampleSpan;
    assert.deepEqual(tokens.tokenIds.slice(span.actionStart, span.end), source.actionTokenIds);
    assert.deepEqual(tokens.tokenIds.slice(span.observationStart, span.actionStart), source.observationTokenIds);
    assert.ok(
      tokens.lossMask.slice(span.actionStart, span.end).every((m: number) => m === 1),
      'the loss covers the action',
    );
    assert.ok(
      tokens.lossMask.slice(span.observationStart, span.actionStart).every((m: number) => m === 0),
      'and not the observation',
    );
  });
  assert.equal(
    body.sample.lossTokenCount,
    stepsA.reduce((n, s) => n + s.actionTokenIds.length, 0),
  );
  assert.deepEqual(
    body.sample.stepAdvantages.map((a: number) => Math.round(a * 100) / 100),
    STEP_ADVANTAGES,
  );
});

test('GET /v1/trajectories/:episodeId: 409 when several runs have the id, 200 with ?runId=, 404 when unknown; no tokens stored said so', async () => {
  const ambiguous = await get(`/v1/trajectories/${enc(E1)}`);
  assert.equal(ambiguous.status, 409, ambiguous.text);
  assert.equal(ambiguous.json.field, 'runId');
  assert.match(ambiguous.json.runIds, new RegExp(RUN_B));
  const b = await ok(`/v1/trajectories/${enc(E1)}?runId=${RUN_B}`);
  assert.equal(b.trajectory, null, 'steps without an assembled trajectory');
  assert.equal(b.steps.length, 1);
  assert.equal(b.sample.estimator, 'grpo');
  assert.equal(b.sample.tokens, null);
  assert.equal(b.tokensStored, false);
  assert.equal(b.advantageSource, null);
  assert.equal(b.steps[0].advantage, null);
  const only = await ok(`/v1/trajectories/${enc(E2)}`);
  assert.equal(only.runId, RUN_A, 'an episode in one run is found without ?runId=');
  assert.deepEqual(only.steps, []);
  const missing = await get(`/v1/trajectories/no-such-episode-${hex}`);
  assert.equal(missing.status, 404);
});

const ENDPOINTS = ['curve', 'rollout-stats', 'learner-metrics', 'alerts', 'pass-at-k', 'evaluations', 'trajectories'] as const;

async function tableCounts(): Promise<Record<string, number>> {
  const tables = await store.queryJson<{ name: string }>(`SELECT name FROM system.tables WHERE database = '${database}' ORDER BY name`);
  const counts: Record<string, number> = {};
  for (const { name } of tables) counts[name] = Number((await store.queryJson<{ n: number }>(`SELECT count() AS n FROM ${name}`))[0]!.n);
  return counts;
}

test('SQL injection through every parameter: 400 naming it (or nothing unexpected), and every table and row is still there', async () => {
  const before = await tableCounts();
  assert.deepEqual(
    Object.keys(before)
      // schema_migrations, and the samples kept sorted for the trajectory inspector (migration 0004)
      .filter((t) => !['schema_migrations', 'samples_by_episode', 'samples_by_episode_mv'].includes(t))
      .sort(),
    [...tableNames].sort(),
  );
  const attacks = ["x' OR 1=1 --", "x'; DROP TABLE steps; --", 'x\u2019 OR \u20181\u2019=\u20181', 'x\\', '1;DROP TABLE steps', "') OR ('1'='1", 'x%00'];
  const refused: Array<[string, string]> = [];
  for (const attack of attacks) {
    for (const endpoint of ENDPOINTS) refused.push([`/v1/runs/${enc(attack)}/${endpoint}`, 'runId']);
    refused.push([`/v1/runs/${RUN_A}/trajectories/${enc(attack)}`, 'episodeId']);
    refused.push([`/v1/trajectories/${enc(attack)}`, 'episodeId']);
    refused.push([`/v1/trajectories/${enc(E1)}?runId=${enc(attack)}`, 'runId']);
    for (const param of ['limit', 'sinceMs', 'untilMs']) {
      refused.push([`/v1/runs?${param}=${enc(attack)}`, param]);
      for (const endpoint of ENDPOINTS) refused.push([`/v1/runs/${RUN_A}/${endpoint}?${param}=${enc(attack)}`, param]);
    }
    refused.push([`/v1/runs/${RUN_A}/curve?bucketMs=${enc(attack)}`, 'bucketMs']);
    refused.push([`/v1/runs/${RUN_A}/pass-at-k?bucketMs=${enc(attack)}`, 'bucketMs']);
    for (const param of ['scope', 'order', 'batchId', 'groupId']) refused.push([`/v1/runs/${RUN_A}/rollout-stats?${param}=${enc(attack)}`, param]);
    for (const param of ['order', 'kind', 'severity']) refused.push([`/v1/runs/${RUN_A}/alerts?${param}=${enc(attack)}`, param]);
    refused.push([`/v1/runs/${RUN_A}/learner-metrics?order=${enc(attack)}`, 'order']);
    refused.push([`/v1/runs/${RUN_A}/evaluations?order=${enc(attack)}`, 'order']);
    for (const param of ['order', 'success', 'outcome', 'groupId']) refused.push([`/v1/runs/${RUN_A}/trajectories?${param}=${enc(attack)}`, param]);
    refused.push([`/v1/events?runId=${enc(attack)}`, 'runId']);
    refused.push([`/v1/events?runId=${RUN_A}&types=${enc(attack)}`, 'types']);
    refused.push([`/v1/events?runId=${RUN_A}&sinceMs=${enc(attack)}`, 'sinceMs']);
    refused.push([`/v1/lag?group=${enc(attack)}`, 'group']);
    refused.push([`/v1/dead-letters?reason=${enc(attack)}`, 'reason']);
  }
  // Repeated parameters and unknown ones are refused too (no second value slips past the check).
  refused.push([`/v1/runs/${RUN_A}/curve?limit=1&limit=${enc('1 OR 1=1')}`, 'limit']);
  refused.push([`/v1/runs/${RUN_A}/alerts?kind[]=nan`, 'kind[]']);
  refused.push([`/v1/runs/${RUN_A}/alerts?${enc("kind' OR '1")}=x`, "kind' OR '1"]);
  refused.push(['/v1/runs/%E2%80/curve', '']);
  for (const [path, field] of refused) {
    const answer = await get(path);
    assert.equal(answer.status, 400, `${path}: ${answer.text}`);
    if (field !== '') assert.equal(answer.json.field, field, path);
  }
  // Ids that pass the pattern but name nothing: empty answers, not other runs' rows.
  for (const id of ['or-1', 'x--', 'a/b/c', 'run:1.1', '1.0']) {
    for (const endpoint of ['curve', 'rollout-stats', 'learner-metrics', 'alerts', 'evaluations', 'trajectories']) {
      const body = await ok(`/v1/runs/${enc(id)}/${endpoint}`);
      const items = body.points ?? body.rolloutStats ?? body.learnerSteps ?? body.alerts ?? body.evaluations ?? body.trajectories;
      assert.deepEqual(items, [], `${endpoint} of ${id}`);
    }
  }
  assert.deepEqual(await tableCounts(), before, 'every table and every row is still there');
  assert.ok(refused.length > 300, `${refused.length} hostile requests`);
});

test('oversize limits and windows are 400s naming the parameter', async () => {
  const cases: Array<[string, string]> = [
    ['/v1/runs?limit=1001', 'limit'],
    [`/v1/runs?sinceMs=0&untilMs=${367 * 86_400_000}`, 'sinceMs'],
  ];
  for (const endpoint of ENDPOINTS) {
    cases.push([`/v1/runs/${RUN_A}/${endpoint}?limit=1001`, 'limit']);
    cases.push([`/v1/runs/${RUN_A}/${endpoint}?limit=100000000000000000000`, 'limit']);
    cases.push([`/v1/runs/${RUN_A}/${endpoint}?sinceMs=${T0 - 367 * 86_400_000}&untilMs=${T0}`, 'sinceMs']);
  }
  cases.push([`/v1/runs/${RUN_A}/curve?bucketMs=${367 * 86_400_000}`, 'bucketMs']);
  cases.push(['/v1/dead-letters?limit=1001', 'limit']);
  for (const [path, field] of cases) {
    const answer = await get(path);
    assert.equal(answer.status, 400, `${path}: ${answer.text}`);
    assert.equal(answer.json.field, field, path);
  }
});

test('GET /v1/events: a row inserted after the stream opened arrives as an event within seconds', async () => {
  const client = await openSse(`${server.url}/v1/events?runId=${RUN_A}`);
  clients.push(client);
  assert.equal(client.status, 200);
  await client.next((e) => e.event === 'ready', 'ready');
  const now = Date.now();
  await insert('learner_step', [{ ...sampleEvents.learner_step, runId: RUN_A, step: 99, policyVersion: 3, eventTimeMs: now }]);
  await insert('collapse_alert', [{ ...sampleEvents.collapse_alert, runId: RUN_A, alertId: `${RUN_A}-live`, eventTimeMs: now + 1 }]);
  await insert('rollout_stats', [{ ...rollout[0]!, batchId: 'batch-live', eventTimeMs: now + 2 }]);
  await insert('evaluation', [{ ...evaluationsA[2]!, policyVersion: 3, greedySuccess: 0.8, eventTimeMs: now + 3 }]);
  // Another run's rows must not show up in this stream.
  await insert('learner_step', [{ ...sampleEvents.learner_step, runId: RUN_B, step: 5, eventTimeMs: now }]);
  const step = await client.next((e) => e.event === 'learner-step', 'the learner step', 8000);
  assert.equal(JSON.parse(step.data).step, 99);
  assert.equal(step.id, String(now));
  const alert = await client.next((e) => e.event === 'alert', 'the alert', 8000);
  assert.equal(JSON.parse(alert.data).alertId, `${RUN_A}-live`);
  const batch = await client.next((e) => e.event === 'rollout-stats', 'the batch row', 8000);
  assert.equal(JSON.parse(batch.data).batchId, 'batch-live');
  const evaluation = await client.next((e) => e.event === 'evaluation', 'the evaluation', 8000);
  assert.deepEqual([JSON.parse(evaluation.data).policyVersion, JSON.parse(evaluation.data).greedySuccess], [3, 0.8]);
  assert.equal(evaluation.id, String(now + 3));
  assert.equal(client.events.filter((e) => e.event === 'learner-step').length, 1, 'only this run, and once');
  assert.equal(server.app.openStreams(), 1);
  client.close();
  await waitFor(() => server.app.openStreams() === 0, 'the stream to be cleaned up', 5000, 20);
});

test('GET /v1/lag: a group that consumed part of a topic lags by the rest; the project groups are listed', async () => {
  const topic = topicName(config, 'env.steps');
  const group = `${config.topicPrefix}.sink`;
  const producer = backbone.kafka.producer();
  await producer.connect();
  const send = (from: number, n: number) => producer.send({ topic, messages: Array.from({ length: n }, (_, i) => ({ key: `k${from + i}`, value: `v${from + i}`, partition: 0 })) });
  await send(0, 4);
  const consumer = backbone.kafka.consumer({ groupId: group });
  let seen = 0;
  try {
    await consumer.connect();
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async () => void seen++ });
    await waitFor(() => seen === 4, 'the consumer to read the first 4 messages', 20_000);
  } finally {
    await consumer.disconnect(); // commits what it processed
  }
  await send(4, 6);
  await producer.disconnect();

  const body = await ok('/v1/lag');
  assert.equal(body.prefix, config.topicPrefix);
  const ids = body.groups.map((g: { groupId: string }) => g.groupId);
  for (const name of ['processors', 'sink', 'learner']) assert.ok(ids.includes(`${config.topicPrefix}.${name}`), name);
  const sink = body.groups.find((g: { groupId: string }) => g.groupId === group);
  assert.equal(sink.lag, 6);
  const partition = sink.topics.find((t: { topic: string }) => t.topic === topic).partitions.find((p: { partition: number }) => p.partition === 0);
  assert.deepEqual(partition, { partition: 0, committedOffset: 4, lowWatermark: 0, highWatermark: 10, lag: 6 });
  assert.equal(body.groups.find((g: { groupId: string }) => g.groupId === `${config.topicPrefix}.learner`).lag, 0);
  assert.equal(body.totalLag, 6);
  const only = await ok(`/v1/lag?group=${enc(group)}`);
  assert.deepEqual(
    only.groups.map((g: { groupId: string }) => g.groupId),
    [group],
  );
});

test('GET /v1/runs after ClickHouse merged the redelivered step: the step rows are the distinct steps', async () => {
  await store.exec(`OPTIMIZE TABLE steps FINAL`);
  const a = (await ok('/v1/runs')).runs.find((r: { runId: string }) => r.runId === RUN_A);
  assert.equal(a.stepEvents, 3);
  assert.equal(a.episodes, 1);
});

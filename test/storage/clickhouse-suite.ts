// One suite for every ClickHouse version trajflow supports, run against the local 18.16 server
// (clickhouse-18.int.spec.ts) and a current release in process (clickhouse-26.int.spec.ts, chdb): the migrations
// through the project's runner (interrupted half-way through an ALTER and run again, so each version's form of
// it is exercised), then a run's events stored the way the sink writes them (some twice, as a redelivery
// would), then every read-model query of storage/query, the collapse detectors' history reads and every SQL block
// of the SQL cookbook, each checked against what was stored. Consumer lag (storage/query/lag.ts) asks Kafka, not
// ClickHouse, and is not here.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  listMigrations,
  runMigrations,
  splitStatements,
  statementsFor,
  parseServerVersion,
  type MigrationClient,
  type MigrationReport,
} from '../../infra/clickhouse/migrations.js';
import { queryAlerts } from '../../storage/query/alerts.js';
import { queryCurve } from '../../storage/query/curve.js';
import { queryDeadLetters } from '../../storage/query/dead-letters.js';
import { queryEpisodeOutcomes } from '../../storage/query/episode-outcomes.js';
import { queryEvaluations } from '../../storage/query/evaluations.js';
import { EVENT_TYPES, eventSql, eventView, type EventRow } from '../../storage/query/events.js';
import { queryLearnerMetrics } from '../../storage/query/learner-metrics.js';
import { queryPassAtK } from '../../storage/query/pass-at-k.js';
import { queryRolloutStats } from '../../storage/query/rollout-stats.js';
import { queryRuns } from '../../storage/query/runs.js';
import { read, type AnalyticsStore } from '../../storage/query/store.js';
import { queryEpisode, queryTrajectories } from '../../storage/query/trajectories.js';
import { eventRows, jsonEachRowBody, type Row, type TableName } from '../../storage/sink/rows.js';
import type { EventName, EventTypes, StepEvent, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { makeStep, sampleEvents } from '../../bench/load/events.js';
import { gradNormSpikeSql, historicalAlerts, learnerStepsSql, rolloutBatchesSql } from '../../detectors/history.js';
import { gatewayEnd } from '../helpers/gateway-ends.js';

/** A ClickHouse database to test: statements, JSON rows, and JSONEachRow bodies as the sink's rows make them. */
export interface ClickHouseUnderTest extends AnalyticsStore, MigrationClient {
  insertJsonEachRow(table: string, body: string | Buffer): Promise<void>;
}

export interface SuiteOptions {
  /** Opens an empty database; the returned function closes it (and deletes it). */
  readonly open: () => Promise<{ readonly target: ClickHouseUnderTest; readonly close: () => Promise<void> }>;
  /** The server version expected, e.g. /^18\.16\./. */
  readonly version: RegExp;
  /** The form the runner must pick for migration 5's ALTER TABLE … ADD COLUMN on this version. */
  readonly addColumnForm: RegExp;
}

/** The cookbook's run and episode ids, so its blocks run as printed. */
const RUN = 'train-FrozenLake-gigpo';
const E1 = 'some-episode-id';
const E2 = 'other-episode-id';
/** Has an episode with E1's id too, so the episode alone does not name its run. */
const RUN_B = 'other-run';
/** A run recorded by the gateway: three episodes finished by the agent (one end stored twice), one timed out. */
const RUN_G = 'gateway-run';
const GROUP = 'group-0';
/** A multiple of 10 s, ten minutes ago (the cookbook's last-hour query finds it). */
const T0 = Math.floor((Date.now() - 600_000) / 10_000) * 10_000;
/** The window every query is asked for. */
const W = { sinceMs: T0 - 3_600_000, untilMs: T0 + 3_600_000 };

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const unbiasedStd = (xs: readonly number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));
const close = (a: number | null | undefined, b: number, what: string) => assert.ok(a !== null && a !== undefined && Math.abs(a - b) < 1e-9, `${what}: ${a} ≈ ${b}`);

/** The rewards of each rollout batch; the stored statistics are computed from them. */
const BATCH_REWARDS = [
  [0, 0, 0, 1],
  [0, 1, 0, 1, 0, 0],
  [1, 1, 0, 0, 1, 0, 1, 0],
  [1, 1, 1, 0, 1, 1, 1, 0, 1, 1],
];
const MEAN_LENGTH = [2, 3, 4, 5];
const batchTime = (i: number) => T0 + 1000 * (i + 1);
const rates = BATCH_REWARDS.map(mean);
const rollout = BATCH_REWARDS.map((rewards, i): EventTypes['rollout_stats'] => ({
  ...sampleEvents.rollout_stats,
  runId: RUN,
  batchId: `batch-${i}`,
  groups: 2,
  trajectories: rewards.length,
  rewardMean: rates[i]!,
  rewardStd: unbiasedStd(rewards),
  meanInGroupRewardStd: 0.1 * i,
  successRate: rates[i]!,
  passAtK: { '1': rates[i]!, '4': Math.min(1, rates[i]! + 0.25) },
  passHatK: { '1': rates[i]!, '4': rates[i]! ** 4 },
  meanLength: MEAN_LENGTH[i]!,
  invalidActionRate: 0.1,
  incomplete: 0,
  droppedGroups: i,
  droppedByReason: i === 0 ? {} : { 'variance:flat': i },
  eventTimeMs: batchTime(i),
  // Batch 0 as a v1 event (no close reasons); then one full group and one closed by timeout (idle in the last).
  closedBy: i === 0 ? {} : { full: 1, [i === 3 ? 'idle' : 'timeout']: 1 },
}));

const stepsA: StepEvent[] = [0, 1, 2].map((i) =>
  makeStep(
    {
      runId: RUN,
      episodeId: E1,
      groupId: GROUP,
      stepIndex: i,
      eventId: `${E1}/s${i}`,
      eventTimeMs: T0 + 100 * i,
      terminated: i === 2,
      reward: i === 2 ? 1 : 0,
      actionValid: i !== 1,
      policyVersion: 0,
      metrics: i === 2 ? { success: 1 } : {},
    },
    i,
  ),
);

function trajectoryOf(steps: readonly StepEvent[], overrides: Partial<TrajectoryEvent> = {}): TrajectoryEvent {
  const first = steps[0]!;
  const last = steps[steps.length - 1]!;
  return {
    ...sampleEvents.trajectory,
    runId: first.runId,
    groupId: first.groupId,
    episodeId: first.episodeId,
    stepCount: steps.length,
    totalReward: steps.reduce((a, s) => a + s.reward, 0),
    success: true,
    invalidActions: steps.filter((s) => !s.actionValid).length,
    firstEventTimeMs: first.eventTimeMs,
    lastEventTimeMs: last.eventTimeMs,
    steps: [],
    metrics: { durationMs: 300 },
    ...overrides,
  };
}

const STEP_ADVANTAGES = [0.5, -0.25, 1];

/** The sample the processors would build from the steps: each turn's observation tokens, then its action tokens. */
function sampleOf(steps: readonly StepEvent[], overrides: Partial<TrainingSampleEvent>): TrainingSampleEvent {
  const turns = steps.map((s, i) => ({
    observation: s.observationTokenIds ?? [],
    action: s.actionTokenIds,
    advantage: Math.fround(STEP_ADVANTAGES[i] ?? 0),
    logProbs: s.actionLogProbs,
  }));
  return {
    ...sampleEvents.sample,
    sampleId: `${steps[0]!.episodeId}/sample`,
    runId: steps[0]!.runId,
    groupId: steps[0]!.groupId,
    episodeId: steps[0]!.episodeId,
    tokenIds: turns.flatMap((t) => [...t.observation, ...t.action]),
    lossMask: turns.flatMap((t) => [...t.observation.map(() => 0), ...t.action.map(() => 1)]),
    advantages: turns.flatMap((t) => [...t.observation.map(() => 0), ...t.action.map(() => t.advantage)]),
    behaviourLogProbs: turns.flatMap((t) => [...t.observation.map(() => 0), ...t.logProbs]),
    eventTimeMs: steps[steps.length - 1]!.eventTimeMs + 50,
    ...overrides,
  };
}

/** Held-out evaluations: versions 0, 1, 2, greedy success rising; v1's mean reward diverged. */
const GREEDY = [0.05, 0.4, 0.75];
const evaluationsA = GREEDY.map((greedySuccess, version): EventTypes['evaluation'] => ({
  ...sampleEvents.evaluation,
  runId: RUN,
  policyVersion: version,
  trainedIteration: version - 1,
  envSteps: version === 0 ? -1 : 500 * version,
  greedySuccess,
  meanReward: version === 1 ? Number.NaN : greedySuccess,
  randomSuccess: 0.015,
  eventTimeMs: T0 + 1700 + 1500 * version,
}));

const deadLetters: Array<EventTypes['dead_letter']> = [
  { ...sampleEvents.dead_letter, eventTimeMs: T0 + 2000 },
  { ...sampleEvents.dead_letter, reason: 'invalid-value', key: null, payload: Buffer.from('not avro'), eventTimeMs: T0 + 2100 },
];

/** Stores the runs' events through the sink's row mappers. */
async function seed(target: ClickHouseUnderTest): Promise<void> {
  let offset = 0;
  const insert = async <N extends EventName>(event: N, values: ReadonlyArray<EventTypes[N]>, includeSampleTokens = true): Promise<void> => {
    const byTable = new Map<TableName, Row[]>();
    for (const value of values) {
      for (const { table, row } of eventRows(event, value, { topic: 'test', partition: 0, offset: String(offset++) }, { includeSampleTokens })) {
        byTable.set(table, [...(byTable.get(table) ?? []), row]);
      }
    }
    for (const [table, tableRows] of byTable) {
      await target.insertJsonEachRow(table, jsonEachRowBody(tableRows));
    }
  };
  const trajectoryA = trajectoryOf(stepsA);
  await insert('step', [...stepsA, stepsA[1]!]);
  await insert('trajectory', [
    trajectoryA,
    trajectoryOf(stepsA.slice(0, 2), { episodeId: E2, outcome: 'truncated', success: false, totalReward: 0, stepCount: 5, lastEventTimeMs: T0 + 5000 }),
  ]);
  await insert('sample', [sampleOf(stepsA, { estimator: 'gigpo', stepAdvantages: STEP_ADVANTAGES })]);
  await insert('rollout_stats', [...rollout, rollout[2]!]);
  await insert(
    'rollout_stats',
    [0, 1].map((g) => ({ ...rollout[0]!, scope: 'group', groupId: `${GROUP}-${g}`, groups: 1, trajectories: 2 })),
  );
  await insert(
    'learner_step',
    [0, 1, 2].map((i) => ({
      ...sampleEvents.learner_step,
      runId: RUN,
      step: i,
      policyVersion: i,
      totalLoss: [0.5, Number.NaN, 0.25][i]!,
      clipFractionLow: i === 1 ? null : 0.01 * (i + 1),
      backend: 'cpu',
      metrics: { importanceWeightMean: 1 + i / 100, ppoKl: 0.01 * (i + 1) },
      eventTimeMs: T0 + 1500 * (i + 1),
    })),
  );
  await insert(
    'policy_version',
    [1, 2].map((version) => ({
      ...sampleEvents.policy_version,
      runId: RUN,
      version,
      parentVersion: version - 1,
      learnerStep: version - 1,
      metrics: { iteration: version - 1, envSteps: 500 * version },
      createdAtMs: T0 + 1600 + version,
    })),
  );
  await insert('collapse_alert', [
    {
      ...sampleEvents.collapse_alert,
      runId: RUN,
      alertId: `${RUN}-alert-1`,
      kind: 'entropy_collapse',
      severity: 'warning',
      learnerStep: 1,
      value: 0.2,
      threshold: 0.3,
      eventTimeMs: T0 + 3000,
    },
    {
      ...sampleEvents.collapse_alert,
      runId: RUN,
      alertId: `${RUN}-alert-2`,
      kind: 'nan',
      severity: 'critical',
      learnerStep: 2,
      value: Number.NaN,
      threshold: 0,
      evidence: { totalLoss: Number.NaN },
      eventTimeMs: T0 + 3100,
    },
  ]);
  await insert('evaluation', [evaluationsA[2]!, evaluationsA[0]!, evaluationsA[1]!, evaluationsA[1]!]);
  await insert('evaluation', [{ ...sampleEvents.evaluation, runId: RUN_B, policyVersion: 7, eventTimeMs: T0 + 1800 }]);
  // Run B: the same episode id, one step, a sample whose tokens the sink did not keep.
  const stepB = makeStep({ runId: RUN_B, episodeId: E1, groupId: GROUP, stepIndex: 0, eventId: `${RUN_B}/s0`, eventTimeMs: T0 + 50 }, 7);
  await insert('step', [stepB]);
  await insert('sample', [sampleOf([stepB], { estimator: 'grpo', stepAdvantages: null })], false);
  const end = (episode: number, reason: 'finish' | 'timeout') => gatewayEnd(RUN_G, episode, reason, T0 + 100 * episode);
  await insert('step', [end(0, 'finish'), end(1, 'finish'), end(2, 'finish'), end(2, 'finish'), end(3, 'timeout')]);
  await insert('dead_letter', deadLetters);
}

/** The ```sql blocks of a Markdown page, each with the heading it is under. */
export function sqlBlocks(markdown: string): Array<{ heading: string; sql: string }> {
  const blocks: Array<{ heading: string; sql: string }> = [];
  let heading = '';
  let open: string[] | null = null;
  for (const line of markdown.split('\n')) {
    if (open !== null) {
      if (/^```\s*$/.test(line)) {
        blocks.push({ heading, sql: open.join('\n') });
        open = null;
      } else open.push(line);
    } else if (/^```sql\s*$/.test(line)) open = [];
    else if (/^#{1,6} /.test(line)) heading = line.replace(/^#+ /, '').trim();
  }
  return blocks;
}

const COOKBOOK = fileURLToPath(new URL('../../docs/guides/sql-cookbook.md', import.meta.url));

type Rows = Array<Record<string, any>>;

/** What each cookbook block returns on the stored run; a block not named here must return some row. */
const COOKBOOK_EXPECTED: Record<string, (rows: Rows) => void> = {
  Runs: (rows) => {
    assert.deepEqual(rows.map((r) => r.run_id).sort(), [RUN_G, RUN_B, RUN].sort());
    const run = rows.find((r) => r.run_id === RUN)!;
    assert.deepEqual([run.env, Number(run.steps), Number(run.episodes), Number(run.latest_version)], ['FrozenLake', 3, 1, 0], 'FINAL: the step stored twice counts once');
  },
  'Learning curve: success by the policy version that sampled': (rows) => {
    assert.deepEqual(
      rows.map((r) => [Number(r.version), Number(r.episodes), r.success_rate]),
      [[0, 2, 0.5]],
    );
  },
  "Held-out evaluations (the run page's curve)": (rows) => {
    assert.deepEqual(
      rows.map((r) => [Number(r.policy_version), r.greedy_success]),
      GREEDY.map((g, v) => [v, g]),
    );
  },
  'Learner metrics, with the fields of `learner_step_details`': (rows) => {
    assert.deepEqual(
      rows.map((r) => Number(r.step)),
      [0, 1, 2],
    );
    rows.forEach((r, i) => close(r.ppo_kl, 0.01 * (i + 1), `ppo_kl of step ${i}`));
  },
  'Rollout batches: reward, success, in-group spread, pass@k': (rows) => {
    assert.deepEqual(
      rows.map((r) => r.batch_id),
      ['batch-0', 'batch-1', 'batch-2', 'batch-3'],
      'FINAL: the batch stored twice shows once',
    );
    rows.forEach((r, i) => close(r.pass_at_4, Math.min(1, rates[i]! + 0.25), `pass@4 of batch ${i}`));
  },
  'Collapse alerts with their evidence': (rows) => {
    assert.deepEqual(
      rows.map((r) => r.kind),
      ['entropy_collapse', 'nan'],
    );
    assert.deepEqual(rows[0]!.evidence_keys, Object.keys(sampleEvents.collapse_alert.evidence).sort());
  },
  'One episode, turn by turn': (rows) => {
    assert.deepEqual(
      rows.map((r) => [Number(r.step_index), r.action, Number(r.action_valid)]),
      stepsA.map((s) => [s.stepIndex, s.action, s.actionValid ? 1 : 0]),
    );
  },
  'Invalid actions and reply length by policy version': (rows) => {
    assert.equal(rows.length, 1);
    // Without FINAL: the step stored twice counts until ClickHouse merges it away.
    assert.ok([3, 4].includes(Number(rows[0]!.steps)), `steps ${rows[0]!.steps}`);
  },
  'Steps per minute over the last hour': (rows) => {
    assert.equal(rows.length, 1, 'the steps are ten minutes old, within one minute of each other');
    assert.ok([3, 4].includes(Number(rows[0]!.steps)), `steps ${rows[0]!.steps}`);
  },
  'Samples by estimator': (rows) => {
    assert.deepEqual(
      rows.map((r) => [r.estimator, Number(r.samples)]),
      [['gigpo', 1]],
    );
  },
  "Episode outcomes from the steps' metrics": (rows) => {
    assert.deepEqual(
      rows.map((r) => [r.episode_id, r.success]),
      [[E1, 1]],
    );
  },
  'Policy versions, their checkpoints and what they were trained on': (rows) => {
    assert.deepEqual(
      rows.map((r) => [Number(r.version), r.iteration, r.env_steps]),
      [
        [1, 0, 500],
        [2, 1, 1000],
      ],
    );
  },
  'Dead letters by reason': (rows) => {
    assert.deepEqual(rows.map((r) => [r.reason, Number(r.letters)]).sort(), [
      ['invalid-value', 1],
      ['unknown-fingerprint', 1],
    ]);
  },
};

/** Registers the suite's tests against one ClickHouse. */
export function clickHouseSuite(options: SuiteOptions): void {
  let target: ClickHouseUnderTest;
  let closeTarget: () => Promise<void> = async () => undefined;
  let report: Omit<MigrationReport, 'database'>;
  let again: Omit<MigrationReport, 'database'>;
  const log: string[] = [];
  const counts = { migrationStatements: 0, queries: 0, cookbookBlocks: 0 };
  let counting: AnalyticsStore;

  before(async () => {
    ({ target, close: closeTarget } = await options.open());
    const all = listMigrations();
    const last = all.at(-1)!;
    // Interrupted after the first statement of the last migration (in the form every version runs), then run again.
    await runMigrations(target, { migrations: all.slice(0, -1), log: (line) => log.push(line) });
    await target.exec(splitStatements(readFileSync(last.file, 'utf8'))[0]!);
    report = await runMigrations(target, { log: (line) => log.push(line) });
    again = await runMigrations(target);
    await seed(target);
    counting = {
      queryJson: <T>(sql: string) => {
        counts.queries += 1;
        return target.queryJson<T>(sql);
      },
    };
  });

  after(async () => {
    await closeTarget();
  });

  test('the migrations apply through the runner, in the form this version takes, and a second run has nothing to do', async (t) => {
    assert.match(report.server, options.version);
    const versions = listMigrations().map((m) => m.version);
    assert.deepEqual(report.versions, versions);
    assert.deepEqual(
      report.applied.map((m) => m.version),
      [versions.at(-1)],
    );
    assert.deepEqual(again.applied, []);
    assert.deepEqual(again.versions, versions);
    const forms = log.filter((line) => line.includes(`on ClickHouse ${report.server}`));
    assert.equal(forms.length, 1, log.join('\n'));
    assert.match(forms[0]!, options.addColumnForm);
    const columns = await target.queryJson<{ name: string; type: string }>(
      "SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'rollout_stats' AND name LIKE 'closed_by%' ORDER BY name",
    );
    assert.deepEqual(columns, [
      { name: 'closed_by_keys', type: 'Array(String)' },
      { name: 'closed_by_values', type: 'Array(UInt32)' },
    ]);
    const server = parseServerVersion(report.server);
    counts.migrationStatements = listMigrations().reduce((n, m) => n + statementsFor(readFileSync(m.file, 'utf8'), server).length, 0);
    t.diagnostic(`ClickHouse ${report.server}: ${counts.migrationStatements} migration statements`);
  });

  test('runs: each run with its env, times and counts; limit and truncated', async () => {
    const { runs } = await queryRuns(counting, { limit: 100, ...W });
    const a = runs.find((r) => r.runId === RUN)!;
    assert.ok(a.stepEvents === 3 || a.stepEvents === 4, `step rows ${a.stepEvents}`);
    assert.deepEqual(
      { ...a, stepEvents: 3 },
      {
        runId: RUN,
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
    assert.deepEqual(runs.map((r) => r.runId).sort(), [RUN_G, RUN_B, RUN].sort());
    const one = await queryRuns(counting, { limit: 1, ...W });
    assert.deepEqual([one.runs.length, one.truncated], [1, true]);
    const named = await queryRuns(counting, { limit: 100, ...W, runIds: [RUN_B, 'no-such-run'] });
    assert.deepEqual(
      named.runs.map((r) => r.runId),
      [RUN_B],
      'only the runs named, and only those that exist',
    );
  });

  test('curve: one point per batch (the duplicate once) with cumulative env steps; buckets pool exactly; auto buckets', async () => {
    const q = { runId: RUN, limit: 1000, ...W };
    const body = await queryCurve(counting, q);
    assert.deepEqual([body.batches, body.bucketMs, body.points.length], [4, null, 4]);
    let cumulative = 0;
    body.points.forEach((point, i) => {
      const rewards = BATCH_REWARDS[i]!;
      cumulative += rewards.length * MEAN_LENGTH[i]!;
      assert.deepEqual([point.batchId, point.timeMs, point.envSteps, point.cumulativeEnvSteps], [`batch-${i}`, batchTime(i), rewards.length * MEAN_LENGTH[i]!, cumulative]);
      // Versions 1 and 2 are published between the first and the second batch.
      assert.equal(point.policyVersion, i === 0 ? null : 2, `policy version of batch ${i}`);
      close(point.rewardMean, mean(rewards), 'rewardMean');
      close(point.rewardStd, unbiasedStd(rewards), 'rewardStd');
      close(point.passAtK['4'] ?? null, Math.min(1, mean(rewards) + 0.25), 'pass@4');
    });
    assert.deepEqual(
      body.points.map((p) => [p.closedFull, p.closedIdle, p.closedTimeout, p.closedEvicted]),
      [
        [0, 0, 0, 0],
        [1, 0, 1, 0],
        [1, 0, 1, 0],
        [1, 1, 0, 0],
      ],
    );
    const later = await queryCurve(counting, { ...q, sinceMs: batchTime(1), untilMs: batchTime(3) + 1 });
    assert.deepEqual(
      later.points.map((p) => p.cumulativeEnvSteps),
      [26, 58, 108],
    );
    const bucketed = await queryCurve(counting, { ...q, bucketMs: 2000 });
    assert.deepEqual(
      bucketed.points.map((p) => [p.timeMs, p.batches]),
      [
        [T0, 1],
        [T0 + 2000, 2],
        [T0 + 4000, 1],
      ],
    );
    const pooled = [...BATCH_REWARDS[1]!, ...BATCH_REWARDS[2]!];
    const middle = bucketed.points[1]!;
    close(middle.rewardMean, mean(pooled), 'pooled mean');
    close(middle.rewardStd, unbiasedStd(pooled), 'pooled std');
    close(middle.passAtK['1'] ?? null, (rates[1]! + rates[2]!) / 2, 'pass@1 weighted by groups');
    assert.deepEqual([middle.envSteps, middle.trajectories, middle.closedFull, middle.closedTimeout], [6 * 3 + 8 * 4, 14, 2, 2]);
    const auto = await queryCurve(counting, { ...q, limit: 2 });
    assert.equal(auto.autoBucketed, true);
    assert.ok(auto.points.length <= 2);
    assert.equal(
      auto.points.reduce((n, p) => n + p.batches, 0),
      4,
      'every batch is in some point',
    );
    assert.equal(auto.points.at(-1)?.cumulativeEnvSteps, 108);
  });

  test('pass@k: latest batch, the window pooled, per k, and over time', async () => {
    const body = await queryPassAtK(counting, { runId: RUN, limit: 1000, ...W });
    assert.deepEqual(body.ks, [1, 4]);
    assert.equal(body.latest?.batchId, 'batch-3');
    close(body.latest?.passAtK['1'], rates[3]!, 'latest pass@1');
    close(body.overall.passAtK['1'], mean(rates), 'overall pass@1');
    close(body.overall.passHatK['4'], mean(rates.map((r) => r ** 4)), 'overall pass^4');
    assert.equal(body.overall.batches, 4);
    assert.equal(body.overTime.points.length, 4);
    const bucketed = await queryPassAtK(counting, { runId: RUN, limit: 1000, bucketMs: 2000, ...W });
    assert.deepEqual(
      bucketed.overTime.points.map((p) => p.batches),
      [1, 2, 1],
    );
    close(bucketed.overTime.points[1]!.passHatK['1'], (rates[1]! + rates[2]!) / 2, 'bucketed pass^1');
  });

  test('rollout stats: batch rows, group rows, one batch; close reasons', async () => {
    const base = { runId: RUN, scope: 'batch' as const, limit: 100, order: 'asc' as const, ...W };
    const batches = await queryRolloutStats(counting, base);
    assert.deepEqual(
      batches.rolloutStats.map((r) => r.batchId),
      ['batch-0', 'batch-1', 'batch-2', 'batch-3'],
    );
    assert.equal(batches.rolloutStats[0]!.groupId, null);
    assert.deepEqual(batches.rolloutStats[2]!.droppedByReason, { 'variance:flat': 2 });
    assert.deepEqual(batches.rolloutStats[1]!.closedBy, { full: 1, timeout: 1 });
    assert.deepEqual(batches.rolloutStats[0]!.closedBy, {});
    const groups = await queryRolloutStats(counting, { ...base, scope: 'group', order: 'desc' });
    assert.deepEqual(
      groups.rolloutStats.map((r) => r.groupId),
      [`${GROUP}-1`, `${GROUP}-0`],
    );
    const one = await queryRolloutStats(counting, { ...base, batchId: 'batch-3', limit: 1 });
    assert.deepEqual([one.rolloutStats[0]?.trajectories, one.truncated], [10, false]);
  });

  test('learner metrics: every field per update, details joined, NaN as null named in nonFinite', async () => {
    const body = await queryLearnerMetrics(counting, { runId: RUN, limit: 1000, order: 'asc', ...W });
    assert.deepEqual(
      body.learnerSteps.map((s) => s.step),
      [0, 1, 2],
    );
    const [first, second] = body.learnerSteps;
    assert.deepEqual([first!.totalLoss, first!.clipFractionLow, first!.backend, first!.tokens], [0.5, 0.01, 'cpu', sampleEvents.learner_step.tokens]);
    assert.deepEqual(first!.metrics, { importanceWeightMean: 1, ppoKl: 0.01 });
    assert.deepEqual(first!.nonFinite, {});
    assert.deepEqual([second!.totalLoss, second!.clipFractionLow, second!.nonFinite], [null, null, { totalLoss: 'nan' }]);
    assert.deepEqual(
      body.learnerSteps.map((s) => s.envSteps),
      [8, 58, 108],
      "the run's env steps by each step (batch 2 stored twice counts once)",
    );
    const desc = await queryLearnerMetrics(counting, { runId: RUN, limit: 1, order: 'desc', ...W });
    assert.deepEqual([desc.learnerSteps[0]?.step, desc.truncated, desc.learnerSteps[0]?.envSteps], [2, true, 108]);
  });

  test('evaluations: per policy version in order, the redelivered one once, NaN as null', async () => {
    const body = await queryEvaluations(counting, { runId: RUN, limit: 1000, order: 'asc', ...W });
    assert.deepEqual(
      body.evaluations.map((e) => e.policyVersion),
      [0, 1, 2],
    );
    assert.deepEqual(body.evaluations[2], evaluationsA[2], 'every field as the event had it');
    assert.deepEqual(body.evaluations[0], evaluationsA[0], 'v0: -1 markers as stored');
    assert.equal(body.evaluations[1]!.meanReward, null);
    const desc = await queryEvaluations(counting, { runId: RUN, limit: 1, order: 'desc', ...W });
    assert.deepEqual([desc.evaluations.map((e) => e.policyVersion), desc.truncated], [[2], true]);
    const b = await queryEvaluations(counting, { runId: RUN_B, limit: 1000, order: 'asc', ...W });
    assert.deepEqual(
      b.evaluations.map((e) => [e.runId, e.policyVersion]),
      [[RUN_B, 7]],
    );
  });

  test('alerts: newest first with evidence; kind and severity filters', async () => {
    const q = { runId: RUN, limit: 100, order: 'desc' as const, ...W };
    const body = await queryAlerts(counting, q);
    assert.deepEqual(
      body.alerts.map((a) => a.kind),
      ['nan', 'entropy_collapse'],
    );
    assert.equal(body.alerts[0]!.value, null, 'a NaN value is null');
    assert.deepEqual(
      body.alerts.map((a) => a.envSteps),
      [58, 58],
    );
    assert.deepEqual(body.alerts[0]!.evidence, { totalLoss: null });
    assert.deepEqual(body.alerts[1]!.evidence, sampleEvents.collapse_alert.evidence);
    const warnings = await queryAlerts(counting, { ...q, kind: 'entropy_collapse', severity: 'warning' });
    assert.deepEqual(
      warnings.alerts.map((a) => a.alertId),
      [`${RUN}-alert-1`],
    );
  });

  test('trajectories: newest first with their metrics; success, outcome and group filters', async () => {
    const q = { runId: RUN, limit: 100, order: 'desc' as const, ...W };
    const body = await queryTrajectories(counting, q);
    assert.deepEqual(
      body.trajectories.map((t) => t.episodeId),
      [E2, E1],
    );
    const [e2, e1] = body.trajectories;
    assert.deepEqual([e1!.success, e1!.invalidActions, e1!.metrics, e2!.outcome], [true, 1, { durationMs: 300 }, 'truncated']);
    const successful = await queryTrajectories(counting, { ...q, success: true });
    assert.deepEqual(
      successful.trajectories.map((t) => t.episodeId),
      [E1],
    );
    const failed = await queryTrajectories(counting, { ...q, success: false, outcome: 'truncated', groupId: GROUP });
    assert.deepEqual(
      failed.trajectories.map((t) => t.episodeId),
      [E2],
    );
  });

  test('episode outcomes: trajectories by outcome; gateway episodes finished and timed out, each once', async () => {
    const a = await queryEpisodeOutcomes(counting, { runId: RUN, ...W });
    assert.deepEqual(a, { trajectories: { terminated: 1, truncated: 1, incomplete: 0 }, gateway: { finished: 0, timedOut: 0 } });
    const g = await queryEpisodeOutcomes(counting, { runId: RUN_G, ...W });
    assert.deepEqual(g.gateway, { finished: 3, timedOut: 1 }, 'the redelivered end counts once');
    const early = await queryEpisodeOutcomes(counting, { runId: RUN_G, sinceMs: T0 - 60_000, untilMs: T0 + 150 });
    assert.deepEqual(early.gateway, { finished: 2, timedOut: 0 }, 'the window bounds the ends read');
  });

  test('one episode turn by turn: steps, the sample tokens, each turn located in them with its advantage', async () => {
    const body = await queryEpisode(counting, { runId: RUN, episodeId: E1 });
    assert.equal(body.trajectory?.episodeId, E1);
    assert.equal(body.steps.length, 3, 'the step stored twice is shown once');
    assert.deepEqual([body.tokensStored, body.aligned, body.advantageSource], [true, true, 'sample-tokens']);
    const tokens = body.sample!.tokens!;
    body.steps.forEach((step, i) => {
      const source = stepsA[i]!;
      assert.deepEqual([step.observation, step.action, step.reward, step.actionValid], [source.observation, source.action, source.reward, source.actionValid]);
      close(step.advantage, Math.fround(STEP_ADVANTAGES[i]!), `advantage of step ${i}`);
      const span = step.sampleSpan!;
      assert.deepEqual(tokens.tokenIds.slice(span.actionStart, span.end), source.actionTokenIds);
      assert.deepEqual(tokens.tokenIds.slice(span.observationStart, span.actionStart), source.observationTokenIds);
    });
    assert.deepEqual(
      body.sample!.stepAdvantages?.map((a) => Math.round((a ?? 0) * 100) / 100),
      STEP_ADVANTAGES,
    );
    await assert.rejects(queryEpisode(counting, { episodeId: E1 }), /more than one run/);
    const b = await queryEpisode(counting, { runId: RUN_B, episodeId: E1 });
    assert.deepEqual([b.trajectory, b.steps.length, b.sample?.estimator, b.sample?.tokens, b.advantageSource], [null, 1, 'grpo', null, null]);
    const only = await queryEpisode(counting, { episodeId: E2 });
    assert.deepEqual([only.runId, only.steps], [RUN, []], 'an episode in one run is found without its run');
    await assert.rejects(queryEpisode(counting, { episodeId: 'no-such-episode' }), /no episode 'no-such-episode'/);
  });

  test('the event stream: each type reads its rows from a time on, oldest first, keyed', async () => {
    const expected: Record<(typeof EVENT_TYPES)[number], string[]> = {
      'rollout-stats': ['batch-0', 'batch-1', 'batch-2', 'batch-3'],
      'learner-step': ['0', '1', '2'],
      alert: [`${RUN}-alert-1`, `${RUN}-alert-2`],
      evaluation: ['0', '1', '2'],
    };
    for (const type of EVENT_TYPES) {
      const rows = await read<EventRow>(counting, eventSql(type, RUN, T0));
      assert.deepEqual(
        rows.map((r) => r.key),
        expected[type],
        type,
      );
      assert.ok(
        rows.every((r, i) => i === 0 || r.event_time_ms >= rows[i - 1]!.event_time_ms),
        `${type}: oldest first`,
      );
      assert.ok(eventView(type, rows[0]!), type);
    }
    const late = await read<EventRow>(counting, eventSql('rollout-stats', RUN, batchTime(3)));
    assert.deepEqual(
      late.map((r) => r.key),
      ['batch-3'],
    );
  });

  test('dead letters: key and payload bytes as stored, a missing key as null, the reason filter', async () => {
    const q = { limit: 10, sinceMs: T0, untilMs: T0 + 10_000, order: 'asc' as const };
    const letters = await queryDeadLetters(counting, q);
    assert.deepEqual(
      letters.map((l) => [l.reason, l.keyBase64, l.payloadBase64, l.payloadBytes]),
      deadLetters.map((d) => [d.reason, d.key === null ? null : d.key.toString('base64'), d.payload.toString('base64'), d.payload.length]),
    );
    const one = await queryDeadLetters(counting, { ...q, reason: 'invalid-value' });
    assert.deepEqual(
      one.map((l) => l.reason),
      ['invalid-value'],
    );
  });

  test("the detectors' history reads: learner steps with their details, batches once, the grad-norm rule in SQL", async () => {
    const steps = await counting.queryJson<Record<string, unknown>>(learnerStepsSql(RUN));
    assert.deepEqual(
      steps.map((r) => [Number(r.step), r.backend, r.clip_fraction_low]),
      [
        [0, 'cpu', 0.01],
        [1, 'cpu', null],
        [2, 'cpu', 0.03],
      ],
    );
    const batches = await counting.queryJson<Record<string, unknown>>(rolloutBatchesSql(RUN));
    // In topic order: FINAL keeps the copy stored last, so the redelivered batch-2 comes after batch-3.
    assert.deepEqual(
      batches.map((r) => r.batch_id),
      ['batch-0', 'batch-1', 'batch-3', 'batch-2'],
      'the batch stored twice once',
    );
    const spikes = await counting.queryJson<Record<string, unknown>>(gradNormSpikeSql(RUN));
    assert.deepEqual(
      spikes.map((r) => [Number(r.step), Number(r.previous), Number(r.spike)]),
      [
        [0, 0, 0],
        [1, 1, 0],
        [2, 2, 0],
      ],
    );
    assert.ok(Array.isArray(await historicalAlerts(counting, RUN)));
  });

  const blocks = sqlBlocks(readFileSync(COOKBOOK, 'utf8'));
  test('the SQL cookbook has blocks, each under its own heading', () => {
    assert.ok(blocks.length >= 10, `${blocks.length} blocks`);
    assert.equal(new Set(blocks.map((b) => b.heading)).size, blocks.length);
  });
  for (const block of blocks) {
    test(`cookbook: ${block.heading}`, async () => {
      const rows = await target.queryJson<Record<string, any>>(block.sql);
      counts.cookbookBlocks += 1;
      const check = COOKBOOK_EXPECTED[block.heading];
      if (check) check(rows);
      else assert.ok(rows.length > 0, 'the stored run has rows for every block');
    });
  }

  test('what ran', (t) => {
    t.diagnostic(`ClickHouse ${report.server}: ${counts.migrationStatements} migration statements, ${counts.queries} read-model queries, ${counts.cookbookBlocks} cookbook blocks`);
  });
}

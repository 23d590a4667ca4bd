// The pure parts of the read side: pooled bucket statistics, row views (NaN, maps, absent details), turn
// alignment in a sample's tokens, the event-stream cursor, and the consumer-lag arithmetic.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { batchPoint, bucketPoint, passMaps, type BatchPointRow } from '../../storage/query/curve.js';
import { learnerMetricsView, type LearnerMetricsRow } from '../../storage/query/learner-metrics.js';
import { rolloutStatsView, type RolloutStatsRow } from '../../storage/query/rollout-stats.js';
import { evaluationView, type EvaluationRow } from '../../storage/query/evaluations.js';
import { alignTurns, turnAdvantages, type SampleView } from '../../storage/query/trajectories.js';
import { StreamCursor } from '../../storage/query/events.js';
import { consumerLag, groupsToReport, topicLag, type LagAdmin } from '../../storage/query/lag.js';
import { kMap, ksOf, num } from '../../storage/query/store.js';

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const unbiasedStd = (xs: number[]) => Math.sqrt(xs.reduce((a, x) => a + (x - mean(xs)) ** 2, 0) / (xs.length - 1));

test('a bucket pools its batches as one batch: reward mean and unbiased std of all trajectories, weighted rates', () => {
  const batches = [
    [1, 0, 0, 1, 1],
    [0.5, 0.25, 0.75],
    [0, 0, 1, 1, 1, 1],
  ];
  const rows = batches.map((rewards) => ({
    n: rewards.length,
    m: mean(rewards),
    s: unbiasedStd(rewards),
    success: rewards.filter((r) => r === 1).length / rewards.length,
    length: 3,
  }));
  const point = bucketPoint({
    bucket_start_ms: 60_000,
    batches: 3,
    last_event_time_ms: 61_000,
    group_count: 6,
    trajectory_count: 14,
    reward_sum: rows.reduce((a, r) => a + r.m * r.n, 0),
    reward_square_sum: rows.reduce((a, r) => a + (r.n - 1) * r.s * r.s + r.n * r.m * r.m, 0),
    success_sum: rows.reduce((a, r) => a + r.success * r.n, 0),
    in_group_std_sum: 0.3 * 6,
    env_steps: 42,
    invalid_actions: 7,
    incomplete_count: 1,
    dropped_group_count: 2,
    closed_full_count: 4,
    closed_idle_count: 0,
    closed_timeout_count: 2,
    closed_evicted_count: 0,
  });
  const all = batches.flat();
  assert.ok(Math.abs(point.rewardMean! - mean(all)) < 1e-12);
  assert.ok(Math.abs(point.rewardStd! - unbiasedStd(all)) < 1e-12);
  assert.ok(Math.abs(point.successRate! - all.filter((r) => r === 1).length / all.length) < 1e-12);
  assert.equal(point.meanLength, 3);
  assert.equal(point.invalidActionRate, 7 / 42);
  assert.ok(Math.abs(point.meanInGroupRewardStd! - 0.3) < 1e-12);
  assert.equal(point.envSteps, 42);
  assert.deepEqual([point.closedFull, point.closedIdle, point.closedTimeout, point.closedEvicted], [4, 0, 2, 0]);
  assert.equal(point.batchId, null);
  assert.ok(Math.abs(point.rewardLow! - (point.rewardMean! - point.rewardStd!)) < 1e-12);
});

test('a bucket with one trajectory has std 0; one whose sums are NaN (ClickHouse null) has null statistics', () => {
  const base = {
    bucket_start_ms: 0,
    batches: 1,
    last_event_time_ms: 0,
    group_count: 1,
    trajectory_count: 1,
    reward_sum: 2,
    reward_square_sum: 4,
    success_sum: 1,
    in_group_std_sum: 0,
    env_steps: 0,
    invalid_actions: 0,
    incomplete_count: 0,
    dropped_group_count: 0,
    closed_full_count: 1,
    closed_idle_count: 0,
    closed_timeout_count: 0,
    closed_evicted_count: 0,
  };
  assert.equal(bucketPoint(base).rewardStd, 0);
  assert.equal(bucketPoint(base).invalidActionRate, 0);
  const nan = bucketPoint({ ...base, trajectory_count: 4, reward_sum: null, reward_square_sum: null, env_steps: null });
  assert.equal(nan.rewardMean, null);
  assert.equal(nan.rewardStd, null);
  assert.equal(nan.rewardLow, null);
  assert.equal(nan.envSteps, null);
});

test('a batch point: maps in k order, env steps from mean length, null for non-finite values', () => {
  const row: BatchPointRow = {
    batch_id: 'batch-1',
    event_time_ms: 5,
    groups: 2,
    trajectories: 8,
    reward_mean: 0.5,
    reward_std: null,
    mean_in_group_reward_std: 0.1,
    success_rate: 0.25,
    pass_at_k_keys: ['1', '10', '2'],
    pass_at_k_values: [0.25, 0.9, 0.5],
    pass_hat_k_keys: [],
    pass_hat_k_values: [],
    mean_length: 2.5,
    invalid_action_rate: 0,
    incomplete: 0,
    dropped_groups: 1,
    closed_full_count: 1,
    closed_idle_count: 1,
    closed_timeout_count: 0,
    closed_evicted_count: 0,
  };
  const point = batchPoint(row);
  assert.deepEqual([point.closedFull, point.closedIdle, point.closedTimeout, point.closedEvicted], [1, 1, 0, 0]);
  assert.deepEqual(Object.keys(point.passAtK), ['1', '2', '10']);
  assert.equal(point.envSteps, 20);
  assert.equal(point.rewardStd, null);
  assert.equal(point.rewardHigh, null);
  assert.deepEqual(passMaps({ bucket_start_ms: 0, keys: ['at:2', 'hat:2', 'at:1'], values: [0.5, 0.1, null], batches: 2 }), { passAtK: { 1: null, 2: 0.5 }, passHatK: { 2: 0.1 } });
  assert.deepEqual(ksOf({ 4: 1, 1: 1 }, { 2: 0 }, { x: 3 }), [1, 2, 4]);
  assert.deepEqual(kMap(['b', 'a'], [1, 2]), { a: 2, b: 1 });
  assert.equal(num('nan'), null);
  assert.equal(num(undefined), null);
});

test('learner metrics: nonFinite names NaN and infinite fields; a missing details row gives backend null', () => {
  const row = {
    step: 3,
    policy_version: 2,
    total_loss: null,
    policy_loss: 0.1,
    kl_loss: 0,
    entropy_loss: 0,
    entropy: 1.2,
    kl: 0.01,
    clip_fraction: 0.1,
    grad_norm_pre_clip: null,
    learning_rate: 1e-4,
    staleness_mean: 0.5,
    staleness_max: 1,
    duration_ms: 12,
    tokens: 100,
    samples: 4,
    event_time_ms: 9,
    clip_fraction_low: null,
    backend: '',
    metrics_keys: ['importanceWeightMean'],
    metrics_values: [null],
    has_details: 0,
    non_finite: ['totalLoss=nan', 'gradNormPreClip=inf', 'metrics.importanceWeightMean=-inf'],
  } satisfies LearnerMetricsRow;
  const view = learnerMetricsView(row);
  assert.deepEqual(view.nonFinite, { totalLoss: 'nan', gradNormPreClip: 'inf', 'metrics.importanceWeightMean': '-inf' });
  assert.equal(view.totalLoss, null);
  assert.equal(view.backend, null);
  assert.deepEqual(view.metrics, { importanceWeightMean: null });
  assert.equal(learnerMetricsView({ ...row, has_details: 1, backend: 'wasm' }).backend, 'wasm');
});

test("rollout stats: a batch row's '' group is null", () => {
  const row = {
    run_id: 'r',
    scope: 'batch',
    batch_id: 'b',
    group_id: '',
    groups: 1,
    trajectories: 2,
    reward_mean: 1,
    reward_std: 0,
    mean_in_group_reward_std: 0,
    success_rate: 1,
    pass_at_k_keys: ['1'],
    pass_at_k_values: [1],
    pass_hat_k_keys: ['1'],
    pass_hat_k_values: [1],
    mean_length: 1,
    invalid_action_rate: 0,
    incomplete: 0,
    dropped_groups: 0,
    dropped_by_reason_keys: ['variance:flat'],
    dropped_by_reason_values: [2],
    closed_by_keys: ['full', 'timeout'],
    closed_by_values: [1, 1],
    event_time_ms: 1,
  } satisfies RolloutStatsRow;
  assert.equal(rolloutStatsView(row).groupId, null);
  assert.equal(rolloutStatsView({ ...row, scope: 'group', group_id: 'g' }).groupId, 'g');
  assert.deepEqual(rolloutStatsView(row).droppedByReason, { 'variance:flat': 2 });
  assert.deepEqual(rolloutStatsView(row).closedBy, { full: 1, timeout: 1 });
});

test('evaluations: every event field by its event name; a non-finite float (ClickHouse null) is null; -1 markers kept', () => {
  const row = {
    run_id: 'r',
    policy_version: 3,
    trained_iteration: -1,
    env_steps: -1,
    env_name: 'FrozenLake',
    env_options: '{"slippery":false}',
    tasks: 200,
    greedy_success: 0.5,
    mean_reward: null,
    mean_steps: 6.5,
    random_success: 0.015,
    duration_ms: 812,
    event_time_ms: 9,
  } satisfies EvaluationRow;
  assert.deepEqual(evaluationView(row), {
    runId: 'r',
    policyVersion: 3,
    trainedIteration: -1,
    envSteps: -1,
    envName: 'FrozenLake',
    envOptions: '{"slippery":false}',
    tasks: 200,
    greedySuccess: 0.5,
    meanReward: null,
    meanSteps: 6.5,
    randomSuccess: 0.015,
    durationMs: 812,
    eventTimeMs: 9,
  });
});

// ----------------------------------------------------------------------------- turns in a sample

/** A sample laid out as the processors do: per kept turn, observation tokens (mask 0) then action tokens (mask 1). */
function layout(turns: Array<{ obs: number[]; act: number[]; adv: number }>) {
  const tokenIds: number[] = [];
  const lossMask: number[] = [];
  const advantages: number[] = [];
  for (const turn of turns) {
    for (const t of turn.obs) tokenIds.push(t), lossMask.push(0), advantages.push(0);
    for (const t of turn.act) tokenIds.push(t), lossMask.push(1), advantages.push(turn.adv);
  }
  return { tokenIds, lossMask, advantages, behaviourLogProbs: advantages.map(() => 0) };
}

const sampleOf = (tokens: ReturnType<typeof layout> | null, stepAdvantages: number[] | null = null): SampleView => ({
  sampleId: 's',
  policyVersion: 0,
  reward: 1,
  estimator: 'gigpo',
  groupSize: 4,
  groupRewardMean: 0,
  groupRewardStd: 1,
  tokenCount: tokens?.tokenIds.length ?? 0,
  lossTokenCount: 0,
  eventTimeMs: 0,
  tokens,
  stepAdvantages,
});

test('turns are located in the sample walking back from the end; dropped turns have no span', () => {
  const turns = [{ actionTokenIds: [10, 11] }, { actionTokenIds: [20] }, { actionTokenIds: [30, 31, 32] }];
  // The context window dropped turn 0 and trimmed turn 1's observation to one token.
  const tokens = layout([
    { obs: [2], act: [20], adv: 0.5 },
    { obs: [3, 3], act: [30, 31, 32], adv: -1 },
  ]);
  assert.deepEqual(alignTurns(turns, tokens), [null, { observationStart: 0, actionStart: 1, end: 2 }, { observationStart: 2, actionStart: 4, end: 7 }]);
  const result = turnAdvantages(turns, sampleOf(tokens));
  assert.deepEqual(result.advantages, [null, 0.5, -1]);
  assert.equal(result.source, 'sample-tokens');
  assert.equal(result.aligned, true);
});

test('turns that do not match the tokens are not aligned; stepAdvantages then fill the last turns', () => {
  const turns = [{ actionTokenIds: [10] }, { actionTokenIds: [20] }];
  const tokens = layout([
    { obs: [1], act: [10], adv: 1 },
    { obs: [2], act: [99], adv: 2 },
  ]);
  assert.equal(alignTurns(turns, tokens), null);
  const fromSteps = turnAdvantages(turns, sampleOf(tokens, [2]));
  assert.deepEqual(fromSteps.advantages, [null, 2]);
  assert.equal(fromSteps.source, 'step-advantages');
  assert.deepEqual(fromSteps.spans, [null, null]);
  // A trajectory-level estimator: the same advantage on every loss token applies to every turn.
  const flat = layout([
    { obs: [1], act: [10], adv: 0.7 },
    { obs: [2], act: [99], adv: 0.7 },
  ]);
  assert.deepEqual(turnAdvantages(turns, sampleOf(flat)).advantages, [0.7, 0.7]);
  assert.equal(turnAdvantages(turns, sampleOf(flat)).source, 'trajectory-advantage');
  // Leftover tokens before the first turn: not the steps the sample was built from.
  assert.equal(
    alignTurns(
      [{ actionTokenIds: [10] }],
      layout([
        { obs: [], act: [5], adv: 0 },
        { obs: [1], act: [10], adv: 0 },
      ]),
    ),
    null,
  );
});

test('without stored tokens there are no advantages or spans, and the source says so', () => {
  const result = turnAdvantages([{ actionTokenIds: [1] }], sampleOf(null));
  assert.deepEqual(result, { advantages: [null], spans: [null], source: null, aligned: false });
  assert.equal(turnAdvantages([{ actionTokenIds: [1] }], null).source, null);
});

// ------------------------------------------------------------------------------------------ cursor

test('the cursor sends each key once, trails the newest time by the lookback, and forgets keys behind it', () => {
  const cursor = new StreamCursor(1000, 100, 10);
  assert.deepEqual(
    cursor.take([
      { key: 'a', timeMs: 1000 },
      { key: 'b', timeMs: 1050 },
    ]),
    [0, 1],
  );
  assert.equal(cursor.from, 1000, 'trails 1050 by 100, not before where it started');
  // The same rows again (they are still in the window), plus one that arrived late with an older time.
  assert.deepEqual(
    cursor.take([
      { key: 'a', timeMs: 1000 },
      { key: 'late', timeMs: 1020 },
      { key: 'b', timeMs: 1050 },
    ]),
    [1],
  );
  assert.deepEqual(cursor.take([{ key: 'c', timeMs: 1300 }]), [0]);
  assert.equal(cursor.from, 1200);
  assert.equal(cursor.remembered, 1, 'keys older than the window are forgotten');
  assert.equal(cursor.behind, false);
});

test('a full page moves the cursor to its last row and says it is behind', () => {
  const cursor = new StreamCursor(0, 100, 3);
  const page = [
    { key: 'a', timeMs: 10 },
    { key: 'b', timeMs: 500 },
    { key: 'c', timeMs: 900 },
  ];
  assert.deepEqual(cursor.take(page), [0, 1, 2]);
  assert.equal(cursor.behind, true);
  assert.equal(cursor.from, 900);
  assert.deepEqual(
    cursor.take([
      { key: 'c', timeMs: 900 },
      { key: 'd', timeMs: 901 },
    ]),
    [1],
  );
  assert.equal(cursor.behind, false);
});

// --------------------------------------------------------------------------------------------- lag

test('lag per partition: high − committed; never committed: everything retained; below the low watermark: what is retained', () => {
  const lag = topicLag(
    't',
    [
      { partition: 0, offset: '7' },
      { partition: 1, offset: '-1' },
      { partition: 2, offset: '1' },
    ],
    [
      { partition: 0, high: '10', low: '0' },
      { partition: 1, high: '5', low: '2' },
      { partition: 2, high: '9', low: '4' },
      { partition: 3, high: '0', low: '0' },
    ],
  );
  assert.deepEqual(
    lag.partitions.map((p) => [p.partition, p.committedOffset, p.lag]),
    [
      [0, 7, 3],
      [1, null, 3],
      [2, 1, 5],
      [3, null, 0],
    ],
  );
  assert.equal(lag.lag, 11);
  const unknown = topicLag('gone', [{ partition: 0, offset: '3' }], null);
  assert.equal(unknown.lag, null);
  assert.equal(unknown.partitions[0]!.committedOffset, 3);
});

test('the groups reported: the project groups, the listed ones under the prefix, sorted; or just the one asked for', () => {
  assert.deepEqual(groupsToReport('p', ['p.extra', 'q.sink', 'p', 'p.sink']).groups, ['p.extra', 'p.learner', 'p.processors', 'p.sink']);
  assert.deepEqual(groupsToReport('p', ['p.x'], 'other.group').groups, ['other.group']);
  const many = Array.from({ length: 150 }, (_, i) => `p.g${i}`);
  const capped = groupsToReport('p', many);
  assert.equal(capped.groups.length, 100);
  assert.equal(capped.truncated, true);
});

test('consumerLag asks the admin for groups, offsets and watermarks and sums them', async () => {
  const calls: string[] = [];
  const admin = {
    listGroups: async () => ({
      groups: [
        { groupId: 'p.sink', protocolType: 'consumer' },
        { groupId: 'other', protocolType: 'consumer' },
      ],
    }),
    describeGroups: async (ids: string[]) => ({
      groups: ids.map((groupId) => ({ groupId, state: groupId === 'p.sink' ? 'Stable' : 'Dead', members: groupId === 'p.sink' ? [{}] : [] })),
    }),
    fetchOffsets: async ({ groupId }: { groupId: string }) => {
      calls.push(groupId);
      return groupId === 'p.sink' ? [{ topic: 'p.env.steps', partitions: [{ partition: 0, offset: '4', metadata: null }] }] : [];
    },
    fetchTopicOffsets: async () => [{ partition: 0, offset: '10', high: '10', low: '0' }],
  } as unknown as LagAdmin;
  const report = await consumerLag(admin, 'p');
  assert.deepEqual(calls.sort(), ['p.learner', 'p.processors', 'p.sink']);
  const sink = report.groups.find((g) => g.groupId === 'p.sink')!;
  assert.equal(sink.state, 'Stable');
  assert.equal(sink.members, 1);
  assert.equal(sink.lag, 6);
  assert.equal(report.groups.find((g) => g.groupId === 'p.learner')!.lag, 0, 'a group with no offsets has no lag');
});

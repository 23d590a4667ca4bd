// trajflow replay without services: the selection's checks, its SQL, the filter on events, rebuilding a
// trajectory from stored step rows, and the planning (groups → today's processing → marked samples).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { eventRows } from '../../../storage/sink/rows.js';
import { REPLAY_ESTIMATOR_PREFIX as LEARNER_PREFIX } from '../../../learner/loop/learner.js';
import { parseReplayArgs } from '../../../learner/replay/command.js';
import { REPLAY_ESTIMATOR_PREFIX } from '../../../learner/replay/marker.js';
import { buildReplayProcessing, planReplay } from '../../../learner/replay/run-replay.js';
import { buildSelection, matchesSelection, rebuildTrajectory, trajectorySelectSql, type StepRow, type TrajectoryRow } from '../../../learner/replay/select.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { batchProcessor } from '../../../processors/pipeline/process-batch.js';
import { sampleIdOf } from '../../../processors/samples/index.js';
import type { StepEvent, TrajectoryEvent } from '../../../schemas/index.js';
import { makeStep } from '../../../bench/load/events.js';

const RUN = 'run-replay-unit';

/** Steps of one episode (3 to 8 steps, the last terminated), reward 1 on the end step when `win`. */
function episodeSteps(group: number, episode: number, { win = episode % 2 === 0, version = group, steps = 3 + ((group + episode) % 4) } = {}): StepEvent[] {
  return Array.from({ length: steps }, (_, i) =>
    makeStep(
      {
        runId: RUN,
        groupId: `g${group}`,
        episodeId: `g${group}-e${episode}`,
        stepIndex: i,
        terminated: i === steps - 1,
        reward: i === steps - 1 && win ? 1 : 0,
        metrics: i === steps - 1 ? { success: win ? 1 : 0 } : {},
        info: { groupSize: '4' },
        policyVersion: version,
        eventTimeMs: 1_764_400_000_000 + group * 10_000 + episode * 100 + i,
      },
      group * 64 + episode * 8 + i,
    ),
  );
}

function trajectory(group: number, episode: number, options?: Parameters<typeof episodeSteps>[2]): TrajectoryEvent {
  return trajectoryFromSteps(episodeSteps(group, episode, options)).trajectory;
}

const fourOf = (group: number) => [0, 1, 2, 3].map((e) => trajectory(group, e));

test("the replay marker is the learner's", () => {
  assert.equal(REPLAY_ESTIMATOR_PREFIX, LEARNER_PREFIX);
});

test('buildSelection: checked fields, each error names the field', () => {
  const fails = (input: Record<string, unknown>, pattern: RegExp) =>
    assert.throws(
      () => buildSelection(input),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      JSON.stringify(input),
    );
  fails({}, /runId=undefined must be/);
  fails({ runId: "x' OR 1=1" }, /runId=.* must be 1-100 letters/);
  fails({ runId: 'r', source: 'postgres' }, /source="postgres" must be one of kafka, clickhouse/);
  fails({ runId: 'r', fromOffset: -1 }, /fromOffset must be an integer >= 0/);
  fails({ runId: 'r', fromMs: 1.5 }, /fromMs must be an integer/);
  fails({ runId: 'r', fromMs: 10, toMs: 10 }, /fromMs \(10\) must be below toMs \(10\)/);
  fails({ runId: 'r', fromOffset: 5, toOffset: 2 }, /fromOffset \(5\) must be below toOffset/);
  fails({ runId: 'r', minPolicyVersion: 3, maxPolicyVersion: 2 }, /minPolicyVersion \(3\) must be at most maxPolicyVersion/);
  fails({ runId: 'r', limit: 0 }, /limit must be an integer >= 1/);
  fails({ runId: 'r', success: 'yes' }, /success must be true or false/);
  fails({ runId: 'r', minReward: Number.NaN }, /minReward must be a finite number/);
  fails({ runId: 'r', fetch: 'steps' }, /fetch applies to source clickhouse only/);
  fails({ runId: 'r', source: 'clickhouse', fetch: 'disk' }, /fetch="disk" must be one of auto, kafka, steps/);
  fails({ runId: 'r', reward: 1 }, /unknown field 'reward'/);
  assert.deepEqual(buildSelection({ runId: 'r' }), { runId: 'r', source: 'kafka' });
  assert.deepEqual(buildSelection({ runId: 'r', source: 'clickhouse', success: false, minPolicyVersion: 0, maxPolicyVersion: 0, fetch: 'steps' }), {
    runId: 'r',
    source: 'clickhouse',
    success: false,
    minPolicyVersion: 0,
    maxPolicyVersion: 0,
    fetch: 'steps',
  });
});

test('matchesSelection: run, time, versions, reward, success, incomplete', () => {
  const t = trajectory(2, 0, { win: true }); // versions 2..2, reward 1, success
  const s = (extra: Record<string, unknown>) => buildSelection({ runId: RUN, ...extra });
  assert.ok(matchesSelection(t, s({})));
  assert.ok(!matchesSelection(t, buildSelection({ runId: 'other' })));
  assert.ok(matchesSelection(t, s({ fromMs: t.lastEventTimeMs, toMs: t.lastEventTimeMs + 1 })));
  assert.ok(!matchesSelection(t, s({ toMs: t.lastEventTimeMs })), 'toMs is exclusive');
  assert.ok(matchesSelection(t, s({ minPolicyVersion: 2, maxPolicyVersion: 2 })));
  assert.ok(!matchesSelection(t, s({ minPolicyVersion: 3 })));
  assert.ok(!matchesSelection(t, s({ maxPolicyVersion: 1 })));
  assert.ok(matchesSelection(t, s({ minReward: 1 })) && !matchesSelection(t, s({ minReward: 1.5 })));
  assert.ok(matchesSelection(t, s({ success: true })) && !matchesSelection(t, s({ success: false })));
  const incomplete = trajectoryFromSteps(episodeSteps(1, 1).slice(0, -1)).trajectory;
  assert.equal(incomplete.outcome, 'incomplete');
  assert.ok(!matchesSelection(incomplete, s({})) && matchesSelection(incomplete, s({ includeIncomplete: true })));
});

test('trajectorySelectSql: every condition, literals only from checked values', () => {
  const sql = trajectorySelectSql(
    buildSelection({
      runId: 'r-1',
      source: 'clickhouse',
      fromMs: 5,
      toMs: 9,
      partition: 2,
      fromOffset: 10,
      toOffset: 20,
      minPolicyVersion: 1,
      maxPolicyVersion: 4,
      minReward: 0.5,
      success: true,
      limit: 7,
    }),
    "pre.fix's.trajectories",
  );
  for (const part of [
    "run_id = 'r-1'",
    "kafka_topic = 'pre.fix\\'s.trajectories'",
    "outcome != 'incomplete'",
    'last_event_time_ms >= 5',
    'last_event_time_ms < 9',
    'kafka_partition = 2',
    'kafka_offset >= 10',
    'kafka_offset < 20',
    'min_policy_version >= 1',
    'max_policy_version <= 4',
    'total_reward >= 0.5',
    'success = 1',
    'FROM trajectories FINAL',
    'LIMIT 7',
  ]) {
    assert.ok(sql.includes(part), `${part} in ${sql}`);
  }
  assert.match(trajectorySelectSql(buildSelection({ runId: 'r', minReward: -1e-21 }), 't'), /total_reward >= toFloat64\('-1e-21'\)/);
  assert.doesNotMatch(trajectorySelectSql(buildSelection({ runId: 'r', includeIncomplete: true }), 't'), /incomplete/);
});

/** The rows the sink stores for an episode's steps and its trajectory, through JSON as ClickHouse returns them. */
function storedRows(steps: readonly StepEvent[], t: TrajectoryEvent): { stepRows: StepRow[]; row: TrajectoryRow } {
  const source = (offset: number) => ({ topic: 'p.env.steps', partition: 0, offset: String(offset) });
  const stepRows = steps.map((s, i) => JSON.parse(JSON.stringify(eventRows('step', s, source(i))[0]!.row)) as StepRow);
  const row = JSON.parse(JSON.stringify(eventRows('trajectory', t, { topic: 'p.trajectories', partition: 0, offset: '0' })[0]!.row)) as TrajectoryRow;
  return { stepRows, row };
}

test('rebuildTrajectory: the steps table gives back the assembled trajectory, or says why not', () => {
  const steps = episodeSteps(3, 1);
  // Float32 log-probs as Avro carries them.
  const float32 = steps.map((s) => ({ ...s, actionLogProbs: s.actionLogProbs.map(Math.fround) }));
  const t = trajectoryFromSteps(float32).trajectory;
  const { stepRows, row } = storedRows(float32, t);
  assert.deepEqual(rebuildTrajectory(row, stepRows, t.metrics), t);
  // A duplicate step (new event id, later offset): the first copy wins, as in the assembler.
  const dup = { ...stepRows[1]!, event_id: 'another', reward: 5, kafka_offset: 99 };
  assert.deepEqual(rebuildTrajectory(row, [...stepRows, dup], t.metrics), t);
  assert.deepEqual(rebuildTrajectory(row, [], undefined), { episodeId: t.episodeId, reason: 'no-steps', detail: `no rows in steps for episode ${t.episodeId}` });
  const gap = rebuildTrajectory(
    row,
    stepRows.filter((s) => s.step_index !== 1),
    t.metrics,
  );
  assert.ok('reason' in gap && gap.reason === 'rebuild-mismatch', JSON.stringify(gap));
  assert.match((gap as { detail: string }).detail, /outcome stored terminated, rebuilt incomplete/);
});

test("planReplay: groups, today's processing, marked samples with scoped ids", () => {
  const trajectories = [...fourOf(0), ...fourOf(1), trajectory(2, 0)];
  const settings = buildReplayProcessing({ replayId: 'r1' });
  const plan = planReplay(trajectories, settings);
  assert.equal(plan.groups, 3);
  assert.equal(plan.keptGroups, 2);
  assert.deepEqual(plan.dropped, [{ groupId: 'g2', reason: 'too-small', detail: '1 selected trajectories, minGroupSize 2' }]);
  assert.equal(plan.samples.length, 8);
  // The same samples the live processors would build, but for three fields.
  const live = batchProcessor(settings.processing)([
    { groupId: 'g0', trajectories: fourOf(0) },
    { groupId: 'g1', trajectories: fourOf(1) },
  ]).samples;
  assert.deepEqual(
    plan.samples.map(({ sampleId: _a, estimator: _b, ...rest }) => rest),
    live.map(({ sampleId: _a, estimator: _b, ...rest }) => rest),
  );
  for (const s of plan.samples) {
    assert.equal(s.estimator, 'replay:grpo');
    assert.equal(s.sampleId, sampleIdOf(RUN, s.episodeId, 'replay-r1'));
    assert.notEqual(s.sampleId, sampleIdOf(RUN, s.episodeId), 'never a live sample id');
  }
  assert.ok(
    plan.samples.some((s) => s.advantages.some((a) => a !== 0)),
    'group-relative advantages recomputed',
  );
  // Input order does not matter.
  assert.deepEqual(planReplay([...trajectories].reverse(), settings).samples, plan.samples);
  // Another estimator and run.
  const rloo = planReplay([...trajectories, trajectory(2, 1)], buildReplayProcessing({ replayId: 'r2', processing: { estimator: { name: 'rloo' } }, intoRunId: 'fresh-run' }));
  assert.equal(rloo.samples.length, 10);
  assert.ok(rloo.samples.every((s) => s.estimator === 'replay:rloo' && s.runId === 'fresh-run' && s.sampleId === sampleIdOf(RUN, s.episodeId, 'replay-r2')));
});

test('planReplay: complete groups, filters and unbuildable samples are accounted as dropped groups', () => {
  const threeOfFour = fourOf(0).slice(0, 3);
  assert.equal(threeOfFour[0]!.metrics.groupSize, 4);
  const complete = planReplay([...threeOfFour, ...fourOf(1)], buildReplayProcessing({ replayId: 'c', completeGroups: true }));
  assert.deepEqual(
    complete.dropped.map((d) => [d.groupId, d.reason]),
    [['g0', 'incomplete-group']],
  );
  assert.equal(complete.samples.length, 4);

  const allLose = [0, 1, 2, 3].map((e) => trajectory(5, e, { win: false }));
  const filtered = planReplay([...allLose, ...fourOf(1)], buildReplayProcessing({ replayId: 'f', processing: { filters: [{ name: 'dynamic_sampling' }] } }));
  assert.equal(filtered.dropped.length, 1);
  assert.equal(filtered.dropped[0]!.groupId, 'g5');
  assert.match(filtered.dropped[0]!.reason, /^dynamic_sampling\//);
  assert.equal(filtered.samples.length, 4);

  const broken = fourOf(2).map((t, i) => (i === 0 ? { ...t, steps: t.steps.map((s) => ({ ...s, actionLogProbs: [] })) } : t));
  const isolated = planReplay([...broken, ...fourOf(1)], buildReplayProcessing({ replayId: 'b' }));
  assert.deepEqual(
    isolated.dropped.map((d) => [d.groupId, d.reason]),
    [['g2', 'sample-error']],
  );
  assert.equal(isolated.samples.length, 4);
  assert.ok(isolated.samples.every((s) => s.groupId === 'g1'));
});

test('replay flags: selection and processing checked, switches without values', () => {
  const fails = (args: string[], pattern: RegExp) =>
    assert.throws(
      () => parseReplayArgs(args),
      (e: unknown) => e instanceof ConfigError && pattern.test(e.message),
      `${args.join(' ')} → ${pattern}`,
    );
  fails([], /--run-id is required/);
  fails(['--run-id', 'r', '--nope', '1'], /unknown option '--nope'/);
  fails(['--run-id', 'r', '--success', 'yes'], /--success needs true or false/);
  fails(['--run-id', 'r', '--from-offset', '-3'], /--from-offset needs an integer >= 0/);
  fails(['--run-id', 'r', '--min-version', '4', '--max-version', '2'], /minPolicyVersion \(4\) must be at most/);
  fails(['--run-id', 'r', '--source', 'clickhouse', '--fetch', 'ftp'], /fetch="ftp"/);
  fails(['--run-id', 'r', '--estimator', 'ppo'], /unknown advantage estimator 'ppo'/);
  fails(['--run-id', 'r', '--filters', 'dynamic_sampling,magic'], /unknown filter "magic"/);
  fails(['--run-id', 'r', '--limit', '0'], /--limit needs a positive integer/);
  fails(['--run-id', 'r', '--min-group-size', '1'], /minGroupSize must be an integer >= 2 \(a group of one has no reward std\)/);
  fails(['--run-id', 'r', '--replay-id', 'a b'], /replayId="a b" must be/);
  fails(['--run-id', 'r', '--processing', '/nonexistent/processing.json'], /--processing \/nonexistent\/processing.json: ENOENT/);
  fails(['--run-id', 'r', '--replay-id', '--json'], /--replay-id needs a value/);
  const parsed = parseReplayArgs([
    '--run-id',
    'r',
    '--dry-run',
    '--source',
    'clickhouse',
    '--success',
    'true',
    '--min-version',
    '2',
    '--estimator',
    'rloo',
    '--filters',
    'dynamic_sampling',
    '--replay-id',
    'x1',
    '--json',
  ]);
  assert.deepEqual(parsed.selection, { runId: 'r', source: 'clickhouse', success: true, minPolicyVersion: 2 });
  assert.equal(parsed.processing.processing.estimator.name, 'rloo');
  assert.deepEqual(parsed.processing.processing.filters, [{ name: 'dynamic_sampling' }]);
  assert.equal(parsed.processing.replayId, 'x1');
  assert.equal(parsed.dryRun, true);
  assert.equal(parsed.json, true);
  const defaults = parseReplayArgs(['--run-id', 'r']);
  assert.equal(defaults.processing.processing.estimator.name, 'grpo');
  assert.equal(defaults.processing.minGroupSize, 2);
  assert.match(defaults.processing.replayId, /^[a-z0-9]+-[0-9a-f]{6}$/);
});

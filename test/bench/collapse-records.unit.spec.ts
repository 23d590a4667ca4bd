// Unit: `bench collapse`'s flags (bench/collapse-flags.ts) and the pure steps of one run (bench/collapse-records.ts)
// — the detector inputs of a batch and an update with their deterministic times, an iteration's record and progress
// line, the alerts as the report lists them, and the report's fall and lead time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { collapseBenchConfig, COLLAPSE_DEFAULTS } from '../../bench/collapse-flags.js';
import { alertMarks, batchInfo, batchInputs, iterationLine, iterationRecord, learnerStepInput, NO_BATCH, runReport, type IterationRecord } from '../../bench/collapse-records.js';
import { headerLines } from '../../bench/collapse.js';
import { ConfigError } from '../../core/errors.js';
import type { RaisedAlert } from '../../detectors/engine.js';
import type { CurvePoint } from '../../learner/local/local-run.js';
import type { UpdateMetrics } from '../../learner/train/update-tally.js';
import type { BatchOutput, RawGroup } from '../../processors/pipeline/process-batch.js';
import type { TrajectoryEvent } from '../../schemas/index.js';

const raised = (kind: string, message = `${kind} fired`): RaisedAlert => ({ alert: { kind, at: 3, severity: 'warning', message } }) as unknown as RaisedAlert;
const update = { entropy: 0.5, gradNorm: 1.25, ppoKl: 0.0125 } as unknown as UpdateMetrics;
const point = (iteration: number, extra: Partial<CurvePoint> = {}): CurvePoint => ({ iteration, envSteps: 640, trainSuccess: 0.5, trainReward: 0.4, samples: 64, ...extra });

test('the defaults: both runs, the default algorithms, and the settings the results page was measured with', () => {
  const s = collapseBenchConfig(['collapse']);
  assert.deepEqual(s.runs, ['collapse', 'stable']);
  assert.deepEqual(s.algorithms, { collapse: 'grpo', stable: 'starpo-s' });
  assert.equal(s.iterations, COLLAPSE_DEFAULTS.iterations);
  assert.equal(s.templateEvery, 2);
  assert.equal(s.optimizer.learningRate, 1e-2);
  assert.equal(s.optimizer.warmupUpdates, 10);
  assert.equal(s.model.gridNeighbours, false);
  const one = collapseBenchConfig(['collapse', '--runs', 'stable', '--template-every', '0', '--stable', 'gigpo', '--json']);
  assert.deepEqual(one.runs, ['stable']);
  assert.equal(one.templateEvery, 0);
  assert.equal(one.algorithms.stable, 'gigpo');
});

test('an unknown run, algorithm or env is a ConfigError naming the choices', () => {
  assert.throws(
    () => collapseBenchConfig(['collapse', '--runs', 'both']),
    (e: unknown) => e instanceof ConfigError && /use collapse, stable or both/.test(e.message),
  );
  assert.throws(
    () => collapseBenchConfig(['collapse', '--collapse', 'ppo']),
    (e: unknown) => e instanceof ConfigError && /--collapse: unknown 'ppo'/.test(e.message),
  );
  assert.throws(() => collapseBenchConfig(['collapse', '--env', 'Go']), ConfigError);
});

test("a batch's inputs: its trajectories first, then its rollout_stats at iteration·1000 + 100", () => {
  const trajectory = (episodeId: string) => ({ episodeId }) as unknown as TrajectoryEvent;
  const groups: RawGroup[] = [
    { groupId: 'g0', trajectories: [trajectory('e0'), trajectory('e1')] },
    { groupId: 'g1', trajectories: [trajectory('e2')] },
  ];
  const output = {
    samples: [],
    keptGroupIds: ['g1'],
    dropped: [],
    stats: {
      groups: 2,
      trajectories: 3,
      rewardMean: 0.5,
      rewardStd: 0.5,
      meanInGroupRewardStd: 0.25,
      successRate: 0.5,
      passAtK: {},
      passHatK: {},
      meanLength: 3,
      invalidActionRate: 0,
      incomplete: 0,
      droppedGroups: 1,
      droppedByReason: {},
      perGroup: [{ groupId: 'g1', size: 1, rewardMean: 1, rewardStd: 0, successRate: 1, passAtK: {}, passHatK: {}, meanLength: 3, invalidActionRate: 0, incomplete: 0 }],
    },
  } as unknown as BatchOutput;
  const inputs = batchInputs('run', 4, groups, output);
  assert.deepEqual(
    inputs.slice(0, 3).map((i) => i.type === 'trajectory' && [i.event.episodeId, i.source]),
    [
      ['e0', 'local'],
      ['e1', 'local'],
      ['e2', 'local'],
    ],
  );
  assert.deepEqual(
    inputs.slice(3).map((i) => i.type === 'rollout_stats' && [i.event.scope, i.event.eventTimeMs]),
    [
      ['batch', 4100],
      ['group', 4100],
    ],
  );
  assert.deepEqual(batchInfo(groups, output, []), { kept: 1, groups: 2, inGroupStd: 0.25, rewardMetrics: {}, raised: [] });
});

test("an update's learner_step input at iteration·1000 + 500, as the learner's step and version", () => {
  const input = learnerStepInput('run', point(7), { ...update, totalLoss: 0, samples: 1, tokens: 1, durationMs: 1 } as UpdateMetrics, 'cpu');
  assert.equal(input.type, 'learner_step');
  if (input.type === 'learner_step') {
    assert.equal(input.event.eventTimeMs, 7500);
    assert.equal(input.event.step, 7);
    assert.equal(input.event.runId, 'run');
  }
});

test("an iteration's record and line: the batch's statistics, the update's metrics, the template MI, the alerts", () => {
  const batch = { kept: 6, groups: 8, inGroupStd: 0.3, rewardMetrics: {}, raised: [raised('entropy_collapse')] };
  const record = iterationRecord(point(5, { update, template: { mutualInformation: 0.5, miUpperBound: 2 } as never }), batch, [...batch.raised, raised('policy_shift_spike')]);
  assert.deepEqual(record, {
    iteration: 5,
    envSteps: 640,
    trainSuccess: 0.5,
    trainReward: 0.4,
    keptGroups: 6,
    groups: 8,
    meanInGroupRewardStd: 0.3,
    entropy: 0.5,
    gradNorm: 1.25,
    ppoKl: 0.0125,
    templateMi: 0.25,
    alerts: ['entropy_collapse', 'policy_shift_spike'],
  });
  assert.equal(
    iterationLine('collapse', 'grpo', record, 12.4),
    '  collapse (grpo) it   5: 640 env steps, 12 s, success 0.500, in-group std 0.300, kept 6/8, entropy 0.500, grad 1.25, ppo-kl 0.013, MI/logN 0.250  ALERT entropy_collapse, policy_shift_spike',
  );
  const bare = iterationRecord(point(0), NO_BATCH, []);
  assert.equal(bare.entropy, null);
  assert.equal(bare.templateMi, null);
  assert.equal(
    iterationLine('stable', 'starpo-s', bare, 0),
    '  stable (starpo-s) it   0: 640 env steps, 0 s, success 0.500, in-group std NaN, kept 0/0, entropy -, grad -, ppo-kl -',
  );
});

test('alert marks carry the iteration, and the alerts flushed at the end say so', () => {
  assert.deepEqual(alertMarks(3, [raised('cliff', 'fell')]), [{ iteration: 3, kind: 'cliff', at: 3, severity: 'warning', message: 'fell' }]);
  assert.equal(alertMarks(39, [raised('cliff', 'fell')], ' (at the end of the run)')[0]!.message, 'fell (at the end of the run)');
});

test('the report: the fall under the default rule and the lead of the first alert over it', () => {
  const success = [0.2, 0.4, 0.6, 0.8, 0.8, 0.8, 0.8, 0.8, 0.2, 0.1, 0.1, 0.1, 0.1];
  const records = success.map((trainSuccess, iteration) => ({ ...iterationRecord(point(iteration), NO_BATCH, []), trainSuccess }) as IterationRecord);
  const alerts = alertMarks(6, [raised('entropy_collapse')]);
  const report = runReport({ label: 'collapse', algorithm: 'grpo', heldOutGreedy: 0.1, seconds: 3 }, records, alerts);
  assert.deepEqual(Object.keys(report), ['label', 'algorithm', 'iterations', 'alerts', 'fall', 'lead', 'heldOutGreedy', 'seconds']);
  assert.ok(report.fall !== null);
  assert.equal(report.lead.leadIterations, report.fall.fallIndex - 6);
  assert.equal(runReport({ label: 'stable', algorithm: 'starpo-s', heldOutGreedy: null, seconds: 1 }, records.slice(0, 5), []).fall, null);
});

test('the header: the settings, then the fall rule', () => {
  const [settings, rule] = headerLines(collapseBenchConfig(['collapse']));
  assert.equal(settings, 'FrozenLake, 8 fixed training tasks, 8 groups × 8, lr 0.01 (warm-up 10 updates), 4 epochs × 4 minibatches, seed 1; detectors: default configuration');
  assert.equal(rule, '"fell": first iteration whose rolling mean (5) of train success is < 0.8 × its running peak and ≥ 0.15 below it; lead = fall − first alert');
});

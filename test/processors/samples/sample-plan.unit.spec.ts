// The plan on counts both sample makers share (processors/samples/sample-plan.ts): which turns, how many
// tokens of each, which advantage, the policy versions, the sample's other fields, and its errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TrajectoryEvent, TrajectoryStep } from '../../../schemas/index.js';
import { SampleError, sampleIdOf } from '../../../processors/samples/index.js';
import { advantagePerStep, planSampleOnCounts, type BuildSampleOptions } from '../../../processors/samples/sample-plan.js';

function step(stepIndex: number, policyVersion: number): TrajectoryStep {
  return {
    stepIndex,
    observation: '',
    observationTokenIds: [],
    action: '',
    actionTokenIds: [],
    actionLogProbs: [],
    policyVersion,
    reward: 0,
    actionValid: true,
    stateKey: null,
    eventTimeMs: 0,
  };
}

const trajectory: TrajectoryEvent = {
  runId: 'run-1',
  envName: 'FrozenLake',
  envVersion: 'v1',
  groupId: 'g1',
  episodeId: 'e1',
  outcome: 'terminated',
  stepCount: 3,
  totalReward: 1,
  success: true,
  invalidActions: 0,
  gapCount: 0,
  minPolicyVersion: 1,
  maxPolicyVersion: 3,
  firstEventTimeMs: 10,
  lastEventTimeMs: 20,
  steps: [step(0, 1), step(1, 2), step(2, 3)],
  metrics: {},
};
const options: BuildSampleOptions = { estimator: 'gigpo', group: { size: 4, rewardMean: 0.5, rewardStd: 0.25 } };
const gigpo = { level: 'step', stepAdvantages: [1, 2, 0.1] } as const;
// Turns of 3+2, 2+2 and 2+2 tokens: 13 in all.
const lengths = [
  { observationTokens: 3, actionTokens: 2 },
  { observationTokens: 2, actionTokens: 2 },
  { observationTokens: 2, actionTokens: 2 },
];

test('keeps the turns the window holds, with their counts, float32 advantages and the oldest kept version', () => {
  const stepAdvantage = advantagePerStep(trajectory.steps, gigpo);
  const plan = planSampleOnCounts(trajectory, gigpo, stepAdvantage, lengths, { ...options, maxContextTokens: 11 });
  assert.deepEqual(plan.turns, [
    { index: 1, observationFrom: 0, observationCount: 2, actionCount: 2, advantage: 2 },
    { index: 2, observationFrom: 0, observationCount: 2, actionCount: 2, advantage: Math.fround(0.1) },
  ]);
  assert.equal(plan.tokenCount, 8);
  assert.deepEqual(plan.policyVersions, { min: 2, max: 3 });
  assert.deepEqual(plan.fields, {
    sampleId: sampleIdOf('run-1', 'e1'),
    runId: 'run-1',
    groupId: 'g1',
    episodeId: 'e1',
    policyVersion: 2,
    reward: 1,
    estimator: 'gigpo',
    groupSize: 4,
    groupRewardMean: 0.5,
    groupRewardStd: 0.25,
    stepAdvantages: [2, Math.fround(0.1)],
    eventTimeMs: 20,
    batch: null,
  });
});

test('trims the observation of a last turn too long alone; a trajectory-level advantage gives no stepAdvantages', () => {
  const level = { level: 'trajectory', advantage: -0.5 } as const;
  const plan = planSampleOnCounts(trajectory, level, advantagePerStep(trajectory.steps, level), lengths, { ...options, maxContextTokens: 3, reward: 0.75, sampleIdScope: 's' });
  assert.deepEqual(plan.turns, [{ index: 2, observationFrom: 1, observationCount: 1, actionCount: 2, advantage: -0.5 }]);
  assert.equal(plan.tokenCount, 3);
  assert.equal(plan.fields.stepAdvantages, null);
  assert.equal(plan.fields.reward, 0.75);
  assert.equal(plan.fields.sampleId, sampleIdOf('run-1', 'e1', 's'));
});

test('refuses a sample whose kept turns have no action tokens', () => {
  const silent = lengths.map((l) => ({ ...l, actionTokens: 0 }));
  assert.throws(
    () => planSampleOnCounts(trajectory, gigpo, [1, 2, 3], silent, options),
    (error: unknown) => {
      assert.ok(error instanceof SampleError);
      assert.match(error.message, /episode e1 has no action tokens in its 3 kept turns/);
      return true;
    },
  );
});

// Unit: what an evaluation reports (evaluation-event.ts): the event from the version's progress and the comparison,
// and the line `trajflow train` reads (with the env steps only when the version recorded them).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { evaluationEvent, evaluationLine } from '../../../learner/eval/evaluation-event.js';
import type { EvalComparison } from '../../../learner/eval/compare.js';
import type { PolicyVersionEvent } from '../../../schemas/index.js';

const version = (metrics: Record<string, number>): PolicyVersionEvent => ({
  runId: 'r',
  version: 7,
  weightsUri: 'file:///ck/v7',
  checksum: 'c',
  parentVersion: 6,
  learnerStep: 6,
  createdAtMs: 1,
  metrics,
});
const result: EvalComparison = {
  policy: { tasks: 32, greedySuccess: 0.90625, meanReward: 0.9, meanSteps: 1, passAtK: {}, passHatK: {} },
  random: { success: 0.4375, meanReward: 0.4, meanSteps: 1, passAtK: {}, passHatK: {} },
};

test("the event: the version, what it was trained on, the environment, both policies' results, timing", () => {
  const event = evaluationEvent('r', version({ iteration: 6, envSteps: 448 }), { envName: 'Bandit', envOptions: { arms: 2 } }, result, 1500, 99);
  assert.deepEqual(event, {
    runId: 'r',
    policyVersion: 7,
    trainedIteration: 6,
    envSteps: 448,
    envName: 'Bandit',
    envOptions: '{"arms":2}',
    tasks: 32,
    greedySuccess: 0.90625,
    meanReward: 0.9,
    meanSteps: 1,
    randomSuccess: 0.4375,
    durationMs: 1500,
    eventTimeMs: 99,
  });
  assert.equal(evaluationLine(event), 'evaluator: v7 held-out 0.906 (random 0.438, 32 tasks, 448 env steps, 1.5 s)');
});

test('a version without progress metrics: -1 for both, and no env steps in the line', () => {
  const event = evaluationEvent('r', version({}), { envName: 'Bandit', envOptions: {} }, result, 250, 99);
  assert.deepEqual([event.trainedIteration, event.envSteps], [-1, -1]);
  assert.equal(evaluationLine(event), 'evaluator: v7 held-out 0.906 (random 0.438, 32 tasks, 0.3 s)');
});

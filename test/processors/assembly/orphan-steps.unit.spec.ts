// Unit: steps a later step names orphans (info.orphans) stay in the trajectory — its indices whole, their text
// kept — without their tokens, so the training sample holds only the turns the episode continued from.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StepEvent } from '../../../schemas/index.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { orphanIndices } from '../../../processors/assembly/orphan-steps.js';
import { buildSample } from '../../../processors/samples/build-sample.js';
import { chatStep } from './steps.js';

const turn = (stepIndex: number, obs: number[], act: number[], info: Record<string, string> = {}, end = false): StepEvent =>
  chatStep(stepIndex, { obs, act, reward: end ? 1 : 0, info, end });

test('an orphan keeps its place and text in the trajectory, and adds no token to the sample', () => {
  const steps = [turn(0, [1], [2]), turn(1, [3], [4, 4]), turn(2, [3], [5], { orphans: '[1]' }), turn(3, [], [], {}, true)];
  const { trajectory } = trajectoryFromSteps(steps);
  assert.deepEqual([trajectory.outcome, trajectory.stepCount, trajectory.gapCount, trajectory.metrics.orphanSteps], ['terminated', 4, 0, 1]);
  assert.deepEqual([trajectory.steps[1]!.action, trajectory.steps[1]!.actionTokenIds, trajectory.steps[1]!.observationTokenIds], ['a1', [], []]);
  const sample = buildSample(trajectory, { level: 'trajectory', advantage: 1 }, { estimator: 'grpo', group: { size: 1, rewardMean: 1, rewardStd: 0 } });
  assert.deepEqual(sample.tokenIds, [1, 2, 3, 5]);
  assert.deepEqual(sample.lossMask, [0, 1, 0, 1]);
});

test('orphan lists: only earlier indices of well-formed lists count', () => {
  assert.deepEqual([...orphanIndices([turn(3, [], [], { orphans: '[0, 2, 3, 7, -1, "x"]' }), turn(4, [], [], { orphans: 'not json' })])], [0, 2]);
});

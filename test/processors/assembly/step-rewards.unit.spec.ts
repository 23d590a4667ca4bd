// Unit: rewards a later step names for earlier ones (info.stepRewards) are moved onto those steps, so the per-step
// returns an estimator reads credit the turn while the trajectory's return stays the same.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { StepEvent } from '../../../schemas/index.js';
import { trajectoryFromSteps } from '../../../processors/assembly/open-episode.js';
import { namedStepRewards } from '../../../processors/assembly/step-rewards.js';
import { buildRewardFn } from '../../../processors/rewards/build.js';
import { computeAdvantages } from '../../../processors/advantages/registry.js';
import { chatStep } from './steps.js';

const step = (stepIndex: number, reward: number, info: Record<string, string> = {}, end = false): StepEvent =>
  chatStep(stepIndex, { obs: [stepIndex], act: end ? [] : [10 + stepIndex], reward, info, end });

test("the outcome step's named step rewards move onto their turns; the total stays", () => {
  // Episode reward 1, turn 0 rewarded 0.25 and turn 2 rewarded −0.5: the outcome step holds 1 + 0.25 − 0.5.
  const steps = [step(0, 0), step(1, 0), step(2, 0), step(3, 0.75, { stepRewards: '{"0":0.25,"2":-0.5}' }, true)];
  const { trajectory } = trajectoryFromSteps(steps);
  assert.deepEqual(
    trajectory.steps.map((s) => s.reward),
    [0.25, 0, -0.5, 1],
  );
  assert.deepEqual([trajectory.totalReward, trajectory.metrics.rewardedSteps], [0.75, 2]);
  const rewards = buildRewardFn({ terms: [{ kind: 'env_return' }] })(trajectory);
  assert.deepEqual(rewards.perStep, [0.25, 0, -0.5, 1]);
  assert.deepEqual(rewards.returns, [0.75, 0.5, 0.5, 1]);
});

test('per-step estimators credit the rewarded turn: REINFORCE++ and GiGPO step returns', () => {
  const rewarded = trajectoryFromSteps([step(0, 0), step(1, 0), step(2, 1.5, { stepRewards: '{"1":0.5}' }, true)]).trajectory;
  const plain = trajectoryFromSteps([step(0, 0), step(1, 0), step(2, 1.5, {}, true)]).trajectory;
  const reward = buildRewardFn({ terms: [{ kind: 'env_return' }] });
  const group = { groupId: 'g', trajectories: [rewarded, plain], rewards: [reward(rewarded), reward(plain)] };
  const [rpp] = computeAdvantages('reinforce_plus_plus', [group], { gamma: 0.5, weighting: 'unit' });
  // γ = 0.5: the rewarded trajectory's returns are 0.5, 1, 1; the plain one's 0.375, 0.75, 1.5.
  assert.ok(rpp!.perStep[0]![1]! > rpp!.perStep[1]![1]!, "the rewarded turn's advantage is above the same turn of the other");
  assert.ok(rpp!.perStep[0]![2]! < rpp!.perStep[1]![2]!, 'the outcome step holds less of the return');
  const withState = (t: typeof rewarded) => ({ ...t, steps: t.steps.map((s) => ({ ...s, stateKey: `s${s.stepIndex}` })) });
  const anchored = { ...group, trajectories: [withState(rewarded), withState(plain)] };
  const [gigpo] = computeAdvantages('gigpo', [anchored], { gamma: 0.5 });
  // Same totals, so the episode advantage is 0; the step advantage of turn 1 is its return against the other's.
  assert.ok(Math.abs(gigpo!.perStep[0]![1]! - (1 - 0.875)) < 1e-9);
  assert.ok(Math.abs(gigpo!.perStep[1]![1]! - (0.75 - 0.875)) < 1e-9);
});

test('only well-formed step rewards for earlier steps count; a step missing from the trajectory keeps its reward where it is', () => {
  assert.deepEqual(
    [...namedStepRewards(step(3, 0, { stepRewards: '{"0":1,"2":-1}' }))],
    [
      [0, 1],
      [2, -1],
    ],
  );
  for (const bad of ['[1]', 'not json', '{"3":1}', '{"-1":1}', '{"x":1}', '{"0":"1"}', 'null']) assert.equal(namedStepRewards(step(3, 0, { stepRewards: bad })).size, 0, bad);
  const { trajectory } = trajectoryFromSteps([step(0, 0), step(2, 2, { stepRewards: '{"1":1}' }, true)]);
  assert.deepEqual([trajectory.outcome, trajectory.steps.map((s) => s.reward), trajectory.metrics.rewardedSteps], ['incomplete', [0, 2], undefined]);
});

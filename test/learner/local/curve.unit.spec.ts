// Unit: the in-process loop's learning curve (learner/local/curve.ts): when it evaluates, what a point records, and
// the episodes grouped into trajectories as the processors receive them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { curvePoint, evaluatesAfter, rawGroupsOf, startPoint, stepsOf, type PlayedEpisode } from '../../../learner/local/curve.js';
import type { StepEvent } from '../../../schemas/index.js';

test('evaluatesAfter: every evalEvery iterations and after the last', () => {
  const run = { evalEvery: 3, iterations: 7 };
  assert.deepEqual(
    Array.from({ length: 7 }, (_, i) => evaluatesAfter(i, run)),
    [false, false, true, false, false, true, true],
  );
  assert.ok(Array.from({ length: 4 }, (_, i) => i).every((i) => evaluatesAfter(i, { evalEvery: 1, iterations: 4 })));
});

test('a point: success and mean reward of the training episodes, the update, the cross-scoring only when measured', () => {
  const episodes: PlayedEpisode[] = [
    { steps: [], success: true, reward: 1 },
    { steps: [], success: false, reward: 0.5 },
    { steps: [], success: false, reward: 0 },
    { steps: [], success: true, reward: 1 },
  ];
  const point = curvePoint({ iteration: 2, envSteps: 40, episodes, samples: 4, update: undefined, template: null, evaluation: undefined });
  assert.deepEqual(point, { iteration: 2, envSteps: 40, trainSuccess: 0.5, trainReward: 0.625, samples: 4, update: undefined, eval: undefined });
  assert.deepEqual(Object.keys(point), ['iteration', 'envSteps', 'trainSuccess', 'trainReward', 'samples', 'update', 'eval'], 'the order curves are written in');
  const template = { mutualInformation: 0.1 } as never;
  assert.equal(curvePoint({ iteration: 2, envSteps: 40, episodes, samples: 4, update: undefined, template, evaluation: undefined }).template, template);
  const start = startPoint({ tasks: 4, greedySuccess: 0.25, meanReward: 0.25, meanSteps: 3, passAtK: {}, passHatK: {} });
  assert.deepEqual([start.iteration, start.envSteps, start.samples, start.eval?.greedySuccess], [-1, 0, 0, 0.25]);
});

test('rawGroupsOf: one trajectory per episode, grouped by group in the order the groups came; stepsOf counts every step', () => {
  const step = (groupId: string, episodeId: string, stepIndex: number, last: boolean) =>
    ({
      eventId: `${episodeId}/s${stepIndex}`,
      runId: 'r',
      groupId,
      episodeId,
      stepIndex,
      env: { name: 'Bandit', version: 'v1' },
      policyVersion: 0,
      observation: 'o',
      action: 'a',
      reward: last ? 1 : 0,
      terminated: last,
      truncated: false,
      info: { groupSize: '2' },
      metrics: {},
      eventTimeMs: 1,
      observationTokenIds: null,
      actionTokenIds: [],
      behaviourLogProbs: [],
      stateKey: 's',
    }) as unknown as StepEvent;
  const episode = (groupId: string, episodeId: string, steps: number): PlayedEpisode => ({
    steps: Array.from({ length: steps }, (_, i) => step(groupId, episodeId, i, i === steps - 1)),
    success: true,
    reward: 1,
  });
  const episodes = [episode('g1', 'g1/e0', 2), episode('g0', 'g0/e0', 1), episode('g1', 'g1/e1', 1)];
  const groups = rawGroupsOf(episodes);
  assert.deepEqual(
    groups.map((g) => [g.groupId, g.trajectories.map((t) => t.episodeId)]),
    [
      ['g1', ['g1/e0', 'g1/e1']],
      ['g0', ['g0/e0']],
    ],
  );
  assert.equal(stepsOf(episodes), 4);
});

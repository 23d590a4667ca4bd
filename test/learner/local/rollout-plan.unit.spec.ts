// Unit: which episodes an iteration of the in-process loop plays (learner/local/rollout-plan.ts): the same ids, task
// seeds and iteration as the actors' episode of the same ordinal (rollout/ids.ts), group by group; cycling
// over `tasks` distinct tasks when asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coordinatesOf, episodeIdOf, groupIdOf, groupSeedOf } from '../../../rollout/ids.js';
import { taskSeedBase } from '../../../envs/seeds.js';
import { iterationEpisodes } from '../../../learner/local/rollout-plan.js';

const plan = { runId: 'local-r', env: { name: 'FrozenLake', version: 'v1' }, groups: 3, groupSize: 4, seed: 5 };

test("iteration 2: P·G episodes in the actors' order, each with the actors' ids, task seed and iteration", () => {
  const episodes = iterationEpisodes(plan, 2);
  assert.equal(episodes.length, 12);
  episodes.forEach((episode, i) => {
    const c = coordinatesOf(2 * 12 + i, plan.groups, plan.groupSize);
    const groupId = groupIdOf('local-r', c.groupIndex);
    assert.deepEqual(episode, {
      runId: 'local-r',
      env: plan.env,
      groupId,
      episodeId: episodeIdOf(groupId, c.rollout),
      groupSize: 4,
      groupSeed: groupSeedOf(taskSeedBase(5), c.groupIndex),
      rollout: c.rollout,
      iteration: c.iteration,
      batchGroups: 3,
    });
  });
  assert.deepEqual(
    episodes.slice(0, 5).map((e) => e.episodeId),
    ['local-r/g6/e0', 'local-r/g6/e1', 'local-r/g6/e2', 'local-r/g6/e3', 'local-r/g7/e0'],
  );
  assert.equal(episodes[0]!.groupSeed, 5_000_006);
});

test('tasks: the groups cycle over that many task seeds; the group ids stay distinct', () => {
  const episodes = iterationEpisodes({ ...plan, tasks: 2 }, 1);
  assert.deepEqual([...new Set(episodes.map((e) => e.groupSeed))], [5_000_001, 5_000_000]);
  assert.deepEqual([...new Set(episodes.map((e) => e.groupId))], ['local-r/g3', 'local-r/g4', 'local-r/g5']);
});

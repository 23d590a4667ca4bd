import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { TrajflowError } from '../../../core/errors.js';
import { batchStats, groupStats, passAtK, passHatK } from '../../../processors/stats/index.js';
import { scoreGroup } from '../../../processors/group.js';
import { buildRewardFn } from '../../../processors/rewards/index.js';
import { close, makeTrajectory } from '../rewards/fixtures.js';

test('pass@k and pass^k, hand-computed for n = 5, c = 2', () => {
  assert.ok(close(passAtK(5, 2, 1), 0.4)); // 1 − C(3,1)/C(5,1) = 1 − 3/5
  assert.ok(close(passAtK(5, 2, 2), 0.7)); // 1 − C(3,2)/C(5,2) = 1 − 3/10
  assert.ok(close(passAtK(5, 2, 3), 0.9)); // 1 − C(3,3)/C(5,3) = 1 − 1/10
  assert.equal(passAtK(5, 2, 4), 1); // n − c = 3 < 4: every 4-subset holds a success
  assert.ok(close(passHatK(5, 2, 1), 0.4)); // C(2,1)/C(5,1) = 2/5
  assert.ok(close(passHatK(5, 2, 2), 0.1)); // C(2,2)/C(5,2) = 1/10
  assert.equal(passHatK(5, 2, 3), 0); // c < k
  assert.equal(passAtK(4, 0, 2), 0);
  assert.equal(passHatK(4, 4, 4), 1);
});

test('pass@k stays finite and exact where binomials would overflow', () => {
  // C(1000, 500) ≈ 2.7e299 is near the float limit; the product form never forms it.
  const p = passAtK(1000, 10, 500);
  assert.ok(p > 0.99 && p < 1);
  const h = passHatK(1000, 990, 500);
  assert.ok(h > 0 && h < 1e-3);
  assert.throws(() => passAtK(3, 1, 4), TrajflowError);
  assert.throws(() => passHatK(3, 4, 1), /0 ≤ c ≤ n/);
});

test('pass@k is monotone in k, pass^k ≤ pass@k, and both equal c/n at k = 1', () => {
  const nc = fc.integer({ min: 1, max: 60 }).chain((n) => fc.tuple(fc.constant(n), fc.integer({ min: 0, max: n })));
  fc.assert(
    fc.property(nc, ([n, c]) => {
      for (let k = 1; k <= n; k++) {
        assert.ok(passHatK(n, c, k) <= passAtK(n, c, k) + 1e-12);
        if (k > 1) {
          assert.ok(passAtK(n, c, k) >= passAtK(n, c, k - 1) - 1e-12);
          assert.ok(passHatK(n, c, k) <= passHatK(n, c, k - 1) + 1e-12);
        }
      }
      assert.ok(close(passAtK(n, c, 1), c / n, 1e-12) && close(passHatK(n, c, 1), c / n, 1e-12));
    }),
    { seed: 42, numRuns: 200 },
  );
});

const rewardFn = buildRewardFn({ terms: [{ kind: 'env_return' }] });
// Rewards [1, 0, 0, 1], lengths [1, 2, 3, 2] = 8 steps, 1 invalid, successes 2, one incomplete.
const four = scoreGroup(
  'four',
  [
    makeTrajectory([{ reward: 1 }], { episodeId: 'a', success: true }),
    makeTrajectory([{ reward: 0 }, { reward: 0, valid: false }], { episodeId: 'b' }),
    makeTrajectory([{}, {}, {}], { episodeId: 'c', outcome: 'incomplete' }),
    makeTrajectory([{ reward: 0.5 }, { reward: 0.5 }], { episodeId: 'd', success: true }),
  ],
  rewardFn,
);
const single = scoreGroup('single', [makeTrajectory([{ reward: 1 }], { episodeId: 'e', success: true })], rewardFn);

test('group statistics', () => {
  const stats = groupStats(four);
  assert.equal(stats.size, 4);
  assert.equal(stats.rewardMean, 0.5);
  assert.ok(close(stats.rewardStd, Math.sqrt(1 / 3))); // ss = 4·0.25 = 1, /3
  assert.equal(stats.successes, 2);
  assert.equal(stats.successRate, 0.5);
  assert.ok(close(stats.passAtK[2]!, 5 / 6)); // 1 − C(2,2)/C(4,2) = 1 − 1/6
  assert.equal(stats.passAtK[3], 1);
  assert.ok(close(stats.passHatK[2]!, 1 / 6));
  assert.equal(stats.passHatK[3], 0);
  assert.deepEqual(Object.keys(stats.passAtK), ['1', '2', '3', '4']);
  assert.equal(stats.meanLength, 2);
  assert.equal(stats.invalidActionRate, 1 / 8);
  assert.equal(stats.incomplete, 1);
  assert.equal(groupStats(single).rewardStd, 0);
  assert.deepEqual(Object.keys(groupStats(four, { ks: [1, 8] }).passAtK), ['1']);
});

test('batch statistics aggregate groups and count drops by reason', () => {
  const stats = batchStats({
    groups: [four, single],
    incompleteTrajectories: 2,
    dropped: [
      { groupId: 'x', filter: 'dynamic_sampling', reason: 'all_rewards_equal', detail: '' },
      { groupId: 'y', filter: 'dynamic_sampling', reason: 'all_rewards_equal', detail: '' },
      { groupId: 'z', filter: 'group_assembly', reason: 'too_small', detail: '' },
    ],
  });
  assert.equal(stats.groups, 2);
  assert.equal(stats.trajectories, 5);
  assert.ok(close(stats.rewardMean, 0.6)); // (1 + 0 + 0 + 1 + 1)/5
  assert.ok(close(stats.rewardStd, Math.sqrt(0.3))); // ss = 3·0.16 + 2·0.36 = 1.2, /4
  assert.ok(close(stats.meanInGroupRewardStd, Math.sqrt(1 / 3) / 2));
  assert.equal(stats.successRate, 3 / 5);
  assert.equal(stats.passAtK[1], 0.75); // mean(0.5, 1)
  assert.ok(close(stats.passAtK[2]!, 5 / 6)); // only the group of 4 has n ≥ 2
  assert.equal(stats.meanLength, 9 / 5);
  assert.equal(stats.invalidActionRate, 1 / 9);
  assert.equal(stats.incomplete, 3);
  assert.equal(stats.droppedGroups, 3);
  assert.deepEqual(stats.droppedByReason, { 'dynamic_sampling:all_rewards_equal': 2, 'group_assembly:too_small': 1 });
});

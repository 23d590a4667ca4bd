// Group-Bellman step values (GiGPO option stepReturns 'group_bellman'), worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { computeAdvantages, gigpoAdvantages, type GigpoTrajectory } from '../../../processors/advantages/index.js';
import { groupBellmanValues } from '../../../processors/advantages/group-bellman.js';
import { scoreGroup } from '../../../processors/group.js';
import { buildRewardFn } from '../../../processors/rewards/index.js';
import { close, makeTrajectory } from '../rewards/fixtures.js';

const approx = (actual: readonly number[], expected: readonly number[]) => {
  assert.equal(actual.length, expected.length, `${actual} vs ${expected}`);
  actual.forEach((a, i) => assert.ok(close(a, expected[i]!, 1e-9), `index ${i}: ${a} vs ${expected[i]}`));
};

// A deterministic 4-state world, γ = 0.5. From s0 'R' leads to s1, 'D' to a hole (end, 0).
// From s1 'R' reaches the goal (reward 1, end), 'L' goes back to s0.
//   A: s0 -R-> s1 -L-> s0 -D-> hole          (fails, but its first move was good)
//   B: s0 -D-> hole                           (fails)
//   C: s0 -R-> s1 -R-> goal (1)               (succeeds)
const A = [
  { anchor: 's0', action: 'R', reward: 0 },
  { anchor: 's1', action: 'L', reward: 0 },
  { anchor: 's0', action: 'D', reward: 0 },
];
const B = [{ anchor: 's0', action: 'D', reward: 0 }];
const C = [
  { anchor: 's0', action: 'R', reward: 0 },
  { anchor: 's1', action: 'R', reward: 1 },
];

test('Q(s, a) backs up the best continuation the group observed, not the trajectory’s own', () => {
  // Q(s1,R) = 1; V(s1) = max(1, Q(s1,L)) = 1; Q(s0,R) = 0.5·1 = 0.5; Q(s0,D) = 0;
  // V(s0) = 0.5; Q(s1,L) = 0.5·V(s0) = 0.25.
  const q = groupBellmanValues([A, B, C], 0.5);
  approx(q[0]!, [0.5, 0.25, 0]);
  approx(q[1]!, [0]);
  approx(q[2]!, [0.5, 1]);
});

test('repeated (state, action) with different outcomes averages them', () => {
  // s0 'X' once gives 1 (end) and once leads to s2 whose only move gives 0: Q(s0,X) = (1 + 0.5·0)/2.
  const q = groupBellmanValues(
    [
      [{ anchor: 's0', action: 'X', reward: 1 }],
      [
        { anchor: 's0', action: 'X', reward: 0 },
        { anchor: 's2', action: 'Y', reward: 0 },
      ],
    ],
    0.5,
  );
  approx(q[0]!, [0.5]);
  approx(q[1]!, [0.5, 0]);
});

test('a null anchor is a state of its own, and self-loops converge', () => {
  // s0 'bump' stays in s0 (γ·V(s0)), 'go' reaches the goal: V(s0) = 1, Q(bump) = 0.9.
  const q = groupBellmanValues(
    [
      [
        { anchor: 's0', action: 'bump', reward: 0 },
        { anchor: 's0', action: 'go', reward: 1 },
      ],
      [
        { anchor: null, action: 'go', reward: 0 },
        { anchor: 's0', action: 'go', reward: 1 },
      ],
      [{ anchor: null, action: 'go', reward: 0.25 }],
    ],
    0.9,
  );
  approx(q[0]!, [0.9, 1]);
  // The first null-anchor step leads to s0 (0.9·1); the second is a different state with its own reward.
  approx(q[1]!, [0.9, 1]);
  approx(q[2]!, [0.25]);
});

test("GiGPO stepReturns 'group_bellman' normalises Q within anchor clusters", () => {
  const trajectories: GigpoTrajectory[] = [A, B, C].map((steps) => ({ score: steps.reduce((s, x) => s + x.reward, 0), steps }));
  const out = gigpoAdvantages(trajectories, { gamma: 0.5, omega: 1, mode: 'mean_norm', stepReturns: 'group_bellman' });
  approx(out.stepReturns[0]!, [0.5, 0.25, 0]);
  // Cluster s0 = {A0 0.5, A2 0, B0 0, C0 0.5}, mean 0.25; s1 = {A1 0.25, C1 1}, mean 0.625.
  approx(out.stepAdvantages[0]!, [0.25, -0.375, -0.25]);
  approx(out.stepAdvantages[1]!, [-0.25]);
  approx(out.stepAdvantages[2]!, [0.25, 0.375]);
  // With the paper's returns A's good first move (return 0) would score below the mean of s0.
  const paper = gigpoAdvantages(trajectories, { gamma: 0.5, omega: 1, mode: 'mean_norm' });
  assert.ok(paper.stepAdvantages[0]![0]! < 0);
  assert.throws(() => gigpoAdvantages(trajectories, { stepReturns: 'bellman' as never }), ConfigError);
  assert.throws(() => gigpoAdvantages(trajectories, { stepReturn: 'group_bellman' } as never), /unknown option\(s\) stepReturn/);
  assert.throws(() => gigpoAdvantages(trajectories, { stepReturns: 'group_bellman', similarity: { fn: () => 1, threshold: 0.5 } }), /exact anchor keys/);
});

test('the gigpo registry entry passes each step’s action text to the group graph', () => {
  const rewardFn = buildRewardFn({ terms: [{ kind: 'env_return' }] });
  const g = scoreGroup(
    'g',
    [
      makeTrajectory(
        [
          { reward: 0, stateKey: 's0', action: 'R' },
          { reward: 0, stateKey: 's1', action: 'L' },
        ],
        { episodeId: 'a' },
      ),
      makeTrajectory(
        [
          { reward: 0, stateKey: 's0', action: 'R' },
          { reward: 1, stateKey: 's1', action: 'R' },
        ],
        { episodeId: 'b' },
      ),
    ],
    rewardFn,
  );
  const [out] = computeAdvantages('gigpo', [g], { gamma: 1, omega: 1, stepReturns: 'group_bellman' });
  // Rows [0, 0, 1, 1], mean 0.5 → A^E ∓0.5. Q: s0 R = 1 (both rows); s1 L = 0, s1 R = 1 → ∓0.5.
  approx(out!.perStep[0]!, [-0.5, -1]);
  approx(out!.perStep[1]!, [0.5, 1]);
});

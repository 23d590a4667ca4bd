// GiGPO golden numbers (docs/algorithms.md §3), worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { buildAnchorGroups, computeAdvantages, gigpoAdvantages, type GigpoTrajectory } from '../../../processors/advantages/index.js';
import { scoreGroup } from '../../../processors/group.js';
import { buildRewardFn } from '../../../processors/rewards/index.js';
import { close, makeTrajectory } from '../rewards/fixtures.js';

const approx = (actual: readonly number[], expected: readonly number[], tolerance = 1e-9) => {
  assert.equal(actual.length, expected.length, `${actual} vs ${expected}`);
  actual.forEach((a, i) => assert.ok(close(a, expected[i]!, tolerance), `index ${i}: ${a} vs ${expected[i]}`));
};

// Three trajectories from the same initial state s0. A and B both pass through s1, A at step 1 and B at
// step 2; C ends in its own state. γ = 0.5.
//   A: s0 (r 0) → s1 (r 0) → s2 (r 1)          score 1   returns [0.25, 0.5, 1]
//   B: s0 (r 0) → s3 (r 0) → s1 (r 0) → s4 (r 0) score 0  returns [0, 0, 0, 0]
//   C: s0 (r 0) → s6 (r 0.5)                    score 0.5 returns [0.25, 0.5]
const group: GigpoTrajectory[] = [
  {
    score: 1,
    steps: [
      { reward: 0, anchor: 's0' },
      { reward: 0, anchor: 's1' },
      { reward: 1, anchor: 's2' },
    ],
  },
  {
    score: 0,
    steps: [
      { reward: 0, anchor: 's0' },
      { reward: 0, anchor: 's3' },
      { reward: 0, anchor: 's1' },
      { reward: 0, anchor: 's4' },
    ],
  },
  {
    score: 0.5,
    steps: [
      { reward: 0, anchor: 's0' },
      { reward: 0.5, anchor: 's6' },
    ],
  },
];

test('GiGPO mean_norm: a state visited at different steps by two trajectories forms one anchor group', () => {
  const out = gigpoAdvantages(group, { gamma: 0.5, omega: 1, mode: 'mean_norm' });
  approx(out.stepReturns[0]!, [0.25, 0.5, 1]);
  approx(out.stepReturns[2]!, [0.25, 0.5]);
  // Clusters in row order: s0 = 0 {A0, B0, C0}, s1 = 1 {A1, B2}, s2 = 2, s3 = 3, s4 = 4, s6 = 5 (singletons).
  assert.deepEqual(out.anchorGroups, [
    [0, 1, 2],
    [0, 3, 1, 4],
    [0, 5],
  ]);
  assert.deepEqual(out.anchorGroupSizes, [3, 2, 1, 1, 1, 1]);
  // Episode level over all 9 step rows: (3·1 + 4·0 + 2·0.5)/9 = 4/9.
  // A^E: A 1 − 4/9 = 5/9; B −4/9; C 0.5 − 4/9 = 1/18.
  approx(out.episodeAdvantages[0]!, [5 / 9, 5 / 9, 5 / 9]);
  approx(out.episodeAdvantages[1]!, [-4 / 9, -4 / 9, -4 / 9, -4 / 9]);
  approx(out.episodeAdvantages[2]!, [1 / 18, 1 / 18]);
  // Step level: s0 returns {0.25, 0, 0.25}, mean 1/6 → A0 1/12, B0 −1/6, C0 1/12.
  //             s1 returns {A1 0.5, B2 0}, mean 0.25 → A1 0.25, B2 −0.25. Singletons → 0.
  approx(out.stepAdvantages[0]!, [1 / 12, 0.25, 0]);
  approx(out.stepAdvantages[1]!, [-1 / 6, 0, -0.25, 0]);
  approx(out.stepAdvantages[2]!, [1 / 12, 0]);
  // A = A^E + ω·A^S with ω = 1.
  approx(out.advantages[0]!, [5 / 9 + 1 / 12, 5 / 9 + 0.25, 5 / 9]);
  approx(out.advantages[1]!, [-4 / 9 - 1 / 6, -4 / 9, -4 / 9 - 0.25, -4 / 9]);
  approx(out.advantages[2]!, [1 / 18 + 1 / 12, 1 / 18]);
});

test('GiGPO mean_std_norm divides by the unbiased std + 1e-6 at both levels', () => {
  const out = gigpoAdvantages(group, { gamma: 0.5, omega: 0.5, mode: 'mean_std_norm' });
  // Episode rows: ss = 3·(5/9)² + 4·(4/9)² + 2·(1/18)² = 75/81 + 64/81 + 2/324 = 279/162; var = ss/8 = 279/1296.
  const sE = Math.sqrt(279 / 1296) + 1e-6; // ≈ 0.463981
  // s0: {0.25, 0, 0.25}, mean 1/6, ss = 2/144 + 4/144 = 1/24, var = 1/48
  const s0 = Math.sqrt(1 / 48) + 1e-6; // ≈ 0.144339
  // s1: {0.5, 0}, mean 0.25, var = 2·0.0625/1 = 0.125
  const s1 = Math.sqrt(0.125) + 1e-6; // ≈ 0.353554
  approx(out.stepAdvantages[0]!, [1 / 12 / s0, 0.25 / s1, 0]); // singleton: (x − x)/(1 + 1e-6) = 0
  approx(out.stepAdvantages[1]!, [-1 / 6 / s0, 0, -0.25 / s1, 0]);
  approx(out.advantages[0]!, [5 / 9 / sE + 0.5 * (1 / 12 / s0), 5 / 9 / sE + 0.5 * (0.25 / s1), 5 / 9 / sE]);
  approx(out.advantages[2]!, [1 / 18 / sE + 0.5 * (1 / 12 / s0), 1 / 18 / sE]);
  assert.ok(close(5 / 9 / sE, 1.197366, 1e-5)); // 0.555556/0.463981
});

test("GiGPO episodeStatsOver 'trajectories' counts each trajectory once", () => {
  // scores [1, 0, 0.5], mean 0.5 → A^E: A 0.5, B −0.5, C 0 on every row.
  const out = gigpoAdvantages(group, { gamma: 0.5, episodeStatsOver: 'trajectories' });
  approx(out.episodeAdvantages[0]!, [0.5, 0.5, 0.5]);
  approx(out.episodeAdvantages[1]!, [-0.5, -0.5, -0.5, -0.5]);
  approx(out.episodeAdvantages[2]!, [0, 0]);
});

test('GiGPO invalid-action penalty: subtracted from the row score and from R_t after discounting', () => {
  const penalised = group.map((traj, i) => (i === 1 ? { ...traj, steps: traj.steps.map((step, t) => ({ ...step, actionValid: t !== 1 })) } : traj));
  const out = gigpoAdvantages(penalised, { gamma: 0.5, invalidActionPenalty: 0.1 });
  // B returns: discounted first ([0, 0, 0, 0]), then step 1 − 0.1 → [0, −0.1, 0, 0]; B0 is not −0.05.
  approx(out.stepReturns[1]!, [0, -0.1, 0, 0]);
  // Row scores: 3·1 + (0 − 0.1) + 3·0 + 2·0.5 = 3.9 over 9 rows → mean 3.9/9 = 0.4333…
  approx(out.episodeAdvantages[1]!, [-0.39 / 0.9, -0.1 - 0.39 / 0.9, -0.39 / 0.9, -0.39 / 0.9]);
});

test('GiGPO singleton group: one trajectory of one step keeps its score; longer ones centre to 0', () => {
  // One row: mean 0, std 1 → A^E = score; its cluster is a singleton → A^S = 0.
  approx(gigpoAdvantages([{ score: 0.8, steps: [{ reward: 0.8, anchor: 's' }] }]).advantages[0]!, [0.8]);
  approx(gigpoAdvantages([{ score: 0.8, steps: [{ reward: 0.8, anchor: 's' }] }], { mode: 'mean_std_norm' }).advantages[0]!, [0.8 / (1 + 1e-6)]);
  // One trajectory of 2 steps: rows [0.8, 0.8], mean 0.8 → A^E = 0; distinct states → A^S = 0.
  approx(
    gigpoAdvantages([
      {
        score: 0.8,
        steps: [
          { reward: 0, anchor: 'a' },
          { reward: 0.8, anchor: 'b' },
        ],
      },
    ]).advantages[0]!,
    [0, 0],
  );
});

test('GiGPO: a null anchor is a cluster of one (no step-level advantage)', () => {
  const out = gigpoAdvantages(
    [
      { score: 1, steps: [{ reward: 1, anchor: null }] },
      { score: 0, steps: [{ reward: 0, anchor: null }] },
    ],
    { gamma: 1 },
  );
  assert.deepEqual(out.anchorGroupSizes, [1, 1]);
  approx(out.stepAdvantages.flat(), [0, 0]);
  approx(out.advantages.flat(), [0.5, -0.5]);
});

// Same characters at the same positions, over the longer length.
const positional = (a: string, b: string) => {
  let same = 0;
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] === b[i]) same++;
  return same / Math.max(a.length, b.length);
};

test('similarity clustering is greedy against each cluster’s first member', () => {
  // 'aaab' ~ 'aaaa' (0.75 ≥ 0.7) joins; 'xyz' opens cluster 1; 'aabb' ~ 'aaaa' is 0.5 — although it is
  // 0.75 from 'aaab', only the representative counts — so it opens cluster 2.
  const { clusterOf, sizes } = buildAnchorGroups(['aaaa', 'aaab', 'xyz', 'aabb', null], { fn: positional, threshold: 0.7 });
  assert.deepEqual(clusterOf, [0, 0, 1, 2, 3]);
  assert.deepEqual(sizes, [2, 1, 1, 1]);
  assert.throws(() => buildAnchorGroups(['a'], { fn: positional, threshold: 1 }), ConfigError);
  assert.throws(() => gigpoAdvantages(group, { mode: 'std' as never }), /mean_norm/);
});

test('the gigpo registry entry takes stateKey as anchor and the reward pipeline for scores', () => {
  const rewardFn = buildRewardFn({ terms: [{ kind: 'env_return' }] });
  const g = scoreGroup(
    'g',
    [
      makeTrajectory(
        [
          { reward: 0, stateKey: 's0' },
          { reward: 1, stateKey: 's1' },
        ],
        { episodeId: 'a' },
      ),
      makeTrajectory(
        [
          { reward: 0, stateKey: 's0' },
          { reward: 0, stateKey: 's2' },
        ],
        { episodeId: 'b' },
      ),
    ],
    rewardFn,
  );
  const [out] = computeAdvantages('gigpo', [g], { gamma: 1 });
  // Rows [1, 1, 0, 0], mean 0.5 → A^E ±0.5. s0 returns {1, 0} → ±0.5; others singletons.
  approx(out!.perStep[0]!, [1, 0.5]);
  approx(out!.perStep[1]!, [-1, -0.5]);
  assert.equal(out!.perTrajectory, null);
});

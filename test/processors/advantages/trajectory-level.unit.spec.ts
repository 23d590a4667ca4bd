// Golden numbers for the trajectory-level estimators, worked by hand in the comments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { drGrpoAdvantages, grpoAdvantages, rlooAdvantages, starpoAdvantages } from '../../../processors/advantages/index.js';
import { close } from '../rewards/fixtures.js';

const approx = (actual: readonly number[], expected: readonly number[], tolerance = 1e-9) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => assert.ok(close(a, expected[i]!, tolerance), `index ${i}: ${a} vs ${expected[i]}`));
};

test('GRPO: (r − mean)/(unbiased std + 1e-6)', () => {
  // r = [1, 2, 3]: mean 2, unbiased var ((1 + 0 + 1)/2) = 1, std 1 → ±1/(1 + 1e-6)
  approx(grpoAdvantages([1, 2, 3]), [-1 / (1 + 1e-6), 0, 1 / (1 + 1e-6)]);
  // r = [1, 0, 0, 1]: mean 0.5, var (4·0.25)/3 = 1/3, std 0.57735 → ±0.5/(0.57735 + 1e-6) ≈ ±0.866024
  const a = 0.5 / (Math.sqrt(1 / 3) + 1e-6);
  approx(grpoAdvantages([1, 0, 0, 1]), [a, -a, -a, a]);
  assert.ok(close(a, 0.866024, 1e-6));
});

test('GRPO: a group of one gets mean 0 and std 1, so A = r/(1 + 1e-6); equal rewards give 0', () => {
  approx(grpoAdvantages([0.7]), [0.7 / (1 + 1e-6)]);
  approx(grpoAdvantages([0.4, 0.4, 0.4]), [0, 0, 0]);
});

test('Dr. GRPO: r − mean, and r for a group of one', () => {
  approx(drGrpoAdvantages([1, 2, 3]), [-1, 0, 1]);
  approx(drGrpoAdvantages([1, 0, 0, 0]), [0.75, -0.25, -0.25, -0.25]);
  approx(drGrpoAdvantages([0.7]), [0.7]);
});

test('RLOO: r·n/(n−1) − mean·n/(n−1) = r − mean of the others', () => {
  // n = 3, mean 2, n/(n−1) = 1.5: 1·1.5 − 3 = −1.5 (= 1 − (2+3)/2); 0; 3·1.5 − 3 = 1.5 (= 3 − 1.5)
  approx(rlooAdvantages([1, 2, 3]), [-1.5, 0, 1.5]);
  // n = 2: each is r minus the other one
  approx(rlooAdvantages([1, 0]), [1, -1]);
  approx(rlooAdvantages([0.7]), [0.7]);
});

test('StarPO mean_std: (x − mean)/(std + 1e-6), or 0 when std ≤ 1e-6 or the group is a singleton', () => {
  approx(starpoAdvantages([1, 2, 3]), [-1 / (1 + 1e-6), 0, 1 / (1 + 1e-6)]);
  approx(starpoAdvantages([0.5, 0.5]), [0, 0]);
  approx(starpoAdvantages([0.5, 0.5 + 1e-7]), [0, 0]); // std 7e-8 ≤ 1e-6
  approx(starpoAdvantages([0.7]), [0]);
});

test('StarPO asym_clip clamps mean_std to [−1, 3]; mean and identity', () => {
  // 15 zeros and one 10: mean 0.625, ss = 15·0.390625 + 87.890625 = 93.75, var 93.75/15 = 6.25, std 2.5
  // → zeros (−0.625)/2.5 = −0.25, the ten (9.375)/2.5 = 3.75 → clamped to 3
  const scores = [...Array<number>(15).fill(0), 10];
  const clipped = starpoAdvantages(scores, { normalization: 'asym_clip' });
  approx(clipped.slice(0, 15), Array<number>(15).fill(-0.625 / (2.5 + 1e-6)));
  assert.equal(clipped[15], 3);
  // mirrored: one 0 among fifteen 10s → the 0 gets −3.75 → −1
  assert.equal(starpoAdvantages([...Array<number>(15).fill(10), 0], { normalization: 'asym_clip' })[15], -1);
  approx(starpoAdvantages([1, 2, 3], { normalization: 'mean' }), [-1, 0, 1]);
  approx(starpoAdvantages([1, 2, 3], { normalization: 'identity' }), [1, 2, 3]);
  assert.throws(() => starpoAdvantages([1], { normalization: 'z' as never }), ConfigError);
});

test('the registry broadcasts trajectory-level advantages to every step and names its estimators', async () => {
  const { computeAdvantages, estimatorByName, estimatorNames } = await import('../../../processors/advantages/index.js');
  const { groupOfRewards } = await import('../rewards/fixtures.js');
  const [out] = computeAdvantages('rloo', [groupOfRewards('g', [1, 2, 3])]);
  approx(out!.perTrajectory!, [-1.5, 0, 1.5]);
  assert.deepEqual(out!.perStep, [[-1.5], [0], [1.5]]);
  assert.deepEqual(estimatorNames, ['grpo', 'dr_grpo', 'rloo', 'starpo', 'reinforce_plus_plus', 'reinforce_plus_plus_baseline', 'gigpo']);
  assert.throws(
    () => estimatorByName('ppo'),
    (e: unknown) => e instanceof ConfigError && /use one of grpo, dr_grpo/.test(e.message),
  );
  const misaligned = { ...groupOfRewards('bad', [1, 0]), rewards: [] };
  assert.throws(() => computeAdvantages('grpo', [misaligned]), /2 trajectories but 0 rewards/);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TrajflowError } from '../../../core/errors.js';
import { computeAdvantages, maskedDiscountedReturns, reinforcePlusPlusAdvantages, reinforcePlusPlusBaselineAdvantages } from '../../../processors/advantages/index.js';
import { scoreGroup } from '../../../processors/group.js';
import { buildRewardFn } from '../../../processors/rewards/index.js';
import { close, makeTrajectory } from '../rewards/fixtures.js';

const approx = (actual: readonly number[], expected: readonly number[], tolerance = 1e-6) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => assert.ok(close(a, expected[i]!, tolerance), `index ${i}: ${a} vs ${expected[i]}`));
};

test("masked discounted returns reset after a masked position, as verl's loop", () => {
  // γ = 0.5, mask all 1: G2 = 1, G1 = 0.5, G0 = 0.25
  assert.deepEqual(maskedDiscountedReturns([0, 0, 1], [1, 1, 1], 0.5), [0.25, 0.5, 1]);
  // γ = 1, mask [1, 0, 1]: G2 = 1; G1 = 0 + 1 = 1, then reset (mask 0); G0 = 0 + 0 = 0
  assert.deepEqual(maskedDiscountedReturns([0, 0, 1], [1, 0, 1], 1), [0, 1, 1]);
});

test('REINFORCE++: returns whitened over every valid position of the batch', () => {
  // A: rewards [0, 0, 1], mask [1, 1, 1] → returns [1, 1, 1]
  // B: rewards [0, 0.5, 0], mask [1, 1, 0] → returns [0.5, 0.5, 0] (the padded position is out)
  // valid values [1, 1, 1, 0.5, 0.5]: mean 0.8; ss = 3·0.04 + 2·0.09 = 0.3; var = 0.3/5 · 5/4 = 0.075
  const scale = 1 / Math.sqrt(0.075 + 1e-8);
  const [a, b] = reinforcePlusPlusAdvantages([{ rewards: [0, 0, 1] }, { rewards: [0, 0.5, 0], mask: [1, 1, 0] }]);
  approx(a!, [0.2 * scale, 0.2 * scale, 0.2 * scale]); // ≈ 0.730297
  approx(b!, [-0.3 * scale, -0.3 * scale, 0]); // ≈ −1.095445
  assert.ok(close(0.2 * scale, 0.730297, 1e-6));
});

test('REINFORCE++ refuses a batch with fewer than 2 valid positions (verl raises too)', () => {
  assert.throws(() => reinforcePlusPlusAdvantages([{ rewards: [1] }]), TrajflowError);
});

test('REINFORCE++-baseline: r − group mean (0 for a group of one), whitened over the batch', () => {
  // groups [[1, 0], [1, 1, 1]] → centred [[0.5, −0.5], [0, 0, 0]]; mean 0, ss 0.5, var 0.5/4 = 0.125
  const s = 1 / Math.sqrt(0.125 + 1e-8); // ≈ 2.828427
  const [g1, g2] = reinforcePlusPlusBaselineAdvantages([
    [1, 0],
    [1, 1, 1],
  ]);
  approx(g1!, [0.5 * s, -0.5 * s]); // ≈ ±1.414213
  approx(g2!, [0, 0, 0]);
  // singleton [2] keeps 2 (mean 0); [1, 0] → [0.5, −0.5]. Values [2, 0.5, −0.5]: mean 2/3,
  // deviations 4/3, −1/6, −7/6; ss = 16/9 + 1/36 + 49/36 = 19/6; var = (19/6)/2 = 19/12
  const t = 1 / Math.sqrt(19 / 12 + 1e-8);
  const [single, pair] = reinforcePlusPlusBaselineAdvantages([[2], [1, 0]]);
  approx(single!, [(4 / 3) * t]);
  approx(pair!, [(-1 / 6) * t, (-7 / 6) * t]);
});

test('REINFORCE++-baseline with token counts equals whitening each token', () => {
  // [[1, 0]] with 3 and 1 tokens = values [0.5, 0.5, 0.5, −0.5]: mean 0.25, ss = 3·0.0625 + 0.5625 = 0.75,
  // var 0.75/3 = 0.25, std 0.5 → [0.25/0.5, −0.75/0.5] = [0.5, −1.5]
  const [g] = reinforcePlusPlusBaselineAdvantages([[1, 0]], { tokenCounts: [[3, 1]] });
  approx(g!, [0.5, -1.5]);
});

test('the registry runs REINFORCE++ per step, weighting each step by its action tokens', () => {
  const rewardFn = buildRewardFn({ terms: [{ kind: 'env_return' }] });
  const group = scoreGroup(
    'g',
    [
      makeTrajectory(
        [
          { reward: 0, tokens: 2 },
          { reward: 1, tokens: 1 },
        ],
        { episodeId: 'a' },
      ),
      makeTrajectory([{ reward: 0, tokens: 1 }], { episodeId: 'b' }),
    ],
    rewardFn,
  );
  const [out] = computeAdvantages('reinforce_plus_plus', [group]);
  // γ = 1 step returns: a = [1, 1], b = [0]; as tokens: [1, 1, 1, 0] → mean 0.75, ss = 3·0.0625 + 0.5625 = 0.75,
  // var 0.75/3 = 0.25, std 0.5 → a steps 0.25/0.5 = 0.5, b −0.75/0.5 = −1.5
  assert.equal(out!.perTrajectory, null);
  approx(out!.perStep[0]!, [0.5, 0.5]);
  approx(out!.perStep[1]!, [-1.5]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { buildRewardFn, dapoOverlongPenalty, discountedReturns, registerReward, unregisterReward, validateRewardSpec } from '../../../processors/rewards/index.js';
import { close, makeTrajectory } from './fixtures.js';

const approx = (actual: readonly number[], expected: readonly number[]) => {
  assert.equal(actual.length, expected.length);
  actual.forEach((a, i) => assert.ok(close(a, expected[i]!), `index ${i}: ${a} vs ${expected[i]}`));
};

test('every term, weighted and summed per step, with γ-discounted returns (hand-computed)', () => {
  // 3 steps, rewards [0, −0.1, 1], step 1 invalid, success, action tokens [2, 5, 4] = 11.
  const trajectory = makeTrajectory(
    [
      { reward: 0, tokens: 2 },
      { reward: -0.1, valid: false, tokens: 5 },
      { reward: 1, tokens: 4 },
    ],
    { success: true },
  );
  const reward = buildRewardFn({
    gamma: 0.5,
    terms: [
      { kind: 'env_return' },
      { kind: 'success', weight: 2 },
      { kind: 'invalid_action_penalty', penalty: 0.1 },
      { kind: 'step_penalty', penalty: 0.01 },
      // L_max 12, L_buf 4: expected 8, exceed 11 − 8 = 3, penalty −3/4·1 = −0.75 on the last step.
      { kind: 'overlong_penalty', maxLength: 12, cacheLength: 4 },
    ],
  })(trajectory);
  // step 0: 0 − 0.01 = −0.01
  // step 1: −0.1 − 0.1 − 0.01 = −0.21
  // step 2: 1 + 2 − 0.01 − 0.75 = 2.24
  approx(reward.perStep, [-0.01, -0.21, 2.24]);
  assert.ok(close(reward.total, 2.02));
  // G2 = 2.24; G1 = −0.21 + 0.5·2.24 = 0.91; G0 = −0.01 + 0.5·0.91 = 0.445
  approx(reward.returns, [0.445, 0.91, 2.24]);
  assert.ok(close(reward.parts.env_return!, 0.9));
  assert.equal(reward.parts.success, 2);
  assert.ok(close(reward.parts.invalid_action_penalty!, -0.1));
  assert.ok(close(reward.parts.step_penalty!, -0.03));
  assert.ok(close(reward.parts.overlong_penalty!, -0.75));
});

test('the total is exactly the sum of the per-step rewards', () => {
  const trajectory = makeTrajectory([{ reward: 0.1 }, { reward: 0.2 }, { reward: 0.3 }], { success: true });
  const reward = buildRewardFn({ terms: [{ kind: 'env_return' }, { kind: 'success', weight: 0.7 }] })(trajectory);
  assert.equal(
    reward.total,
    reward.perStep.reduce((s, r) => s + r, 0),
  );
});

test("DAPO overlong penalty: 0 before L_max − L_buf, linear to −factor at L_max (verl's doc example)", () => {
  const options = { maxLength: 20480, cacheLength: 4096 };
  assert.equal(dapoOverlongPenalty(16384, options), 0); // exceed 0 → min(−0, 0)
  assert.equal(dapoOverlongPenalty(1000, options), 0);
  assert.equal(dapoOverlongPenalty(18432, options), -0.5); // −(18432 − 16384)/4096 = −0.5
  assert.equal(dapoOverlongPenalty(20480, options), -1);
  assert.equal(dapoOverlongPenalty(20480, { ...options, factor: 0.5 }), -0.5);
  assert.equal(dapoOverlongPenalty(24576, options), -2); // not clamped, as verl's formula
});

test("overlong penalty with scope 'turn' penalises each step on its own length", () => {
  // L_max 5, L_buf 2 → expected 3. Lengths 2, 5, 4 → 0, −(5−3)/2 = −1, −(4−3)/2 = −0.5.
  const trajectory = makeTrajectory([{ tokens: 2 }, { tokens: 5 }, { tokens: 4 }]);
  const reward = buildRewardFn({ terms: [{ kind: 'overlong_penalty', maxLength: 5, cacheLength: 2, scope: 'turn' }] })(trajectory);
  approx(reward.perStep, [0, -1, -0.5]);
});

test('discounted returns: G_t = r_t + γ·G_{t+1}', () => {
  // γ = 0.9: G2 = 1; G1 = 0 + 0.9 = 0.9; G0 = 0.5 + 0.81 = 1.31
  approx(discountedReturns([0.5, 0, 1], 0.9), [1.31, 0.9, 1]);
  assert.deepEqual(discountedReturns([], 0.9), []);
});

test('custom reward functions plug in inline or through the registry, and are weighted', () => {
  const trajectory = makeTrajectory([{ reward: 1 }, { reward: 0 }], { success: true });
  registerReward('test_fast_success', (t) => (t.success ? 1 / t.stepCount : 0));
  try {
    const reward = buildRewardFn({
      terms: [
        { kind: 'custom', name: 'test_fast_success', weight: 2 }, // 2 · 1/2 = 1 on the last step
        { kind: 'custom', name: 'per_step_bonus', fn: (t) => ({ perStep: t.steps.map((s) => s.stepIndex * 0.1) }) },
      ],
    })(trajectory);
    approx(reward.perStep, [0, 1.1]);
    assert.equal(reward.parts.test_fast_success, 1);
    assert.ok(close(reward.parts.per_step_bonus!, 0.1));
    assert.throws(() => registerReward('test_fast_success', () => 0), /already registered/);
  } finally {
    unregisterReward('test_fast_success');
  }
});

test('a custom function that returns the wrong shape fails with a message naming it', () => {
  const fn = buildRewardFn({ terms: [{ kind: 'custom', name: 'bad', fn: () => ({ perStep: [1] }) }] });
  assert.throws(() => fn(makeTrajectory([{}, {}])), /custom reward 'bad' must return .* 2 finite values/);
});

test('config errors say how to fix them', () => {
  const cases: [unknown, RegExp][] = [
    [{ terms: [] }, /non-empty array/],
    [{ terms: [{ kind: 'env_retrun' }] }, /kind must be one of env_return, success/],
    [{ terms: [{ kind: 'step_penalty', penalty: -0.1 }] }, /positive number such as 0.1/],
    [{ terms: [{ kind: 'invalid_action_penalty' }] }, /penalty must be a finite number/],
    [{ terms: [{ kind: 'overlong_penalty', maxLength: 100, cacheLength: 200 }] }, /must not exceed maxLength/],
    [{ terms: [{ kind: 'overlong_penalty', maxLength: 100, cacheLength: 0 }] }, /must be > 0/],
    [{ terms: [{ kind: 'env_return' }, { kind: 'env_return' }] }, /distinct name/],
    [{ terms: [{ kind: 'custom', name: 'nobody' }] }, /registerReward\('nobody', fn\)/],
    [{ terms: [{ kind: 'env_return' }], gamma: 1.5 }, /gamma must be in \[0, 1\]/],
    [{ terms: [{ kind: 'env_return', weight: Number.NaN }] }, /weight must be a finite number/],
  ];
  for (const [spec, message] of cases) {
    assert.throws(
      () => validateRewardSpec(spec),
      (error: unknown) => error instanceof ConfigError && message.test(error.message),
    );
  }
});

test('an empty trajectory has no per-step rewards but keeps its trajectory-level parts', () => {
  const reward = buildRewardFn({ terms: [{ kind: 'success' }] })(makeTrajectory([], { success: true }));
  assert.deepEqual(reward.perStep, []);
  assert.equal(reward.total, 1);
});

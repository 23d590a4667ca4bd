// Unit: the line `trajflow train` starts with about what to expect from a preset (cli/train/expectations.ts) says
// the measured figures and nothing when none were measured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectationLine, TRAIN_EXPECTATIONS } from '../../cli/train/expectations.js';
import { TRAIN_PRESETS } from '../../cli/train/presets.js';

test('measured env steps and minutes make the line', () => {
  assert.equal(
    expectationLine('FrozenLake', { target: 0.9, envStepsToTarget: 48_000, minutesOn2Cores: 6 }),
    'trajflow train: FrozenLake preset — held-out ≥ 0.9 typically by 48,000 env steps, ≈ 6 minutes on 2 cores (docs/results/learning.md)',
  );
  assert.equal(
    expectationLine('Sokoban', { target: 0.5, envStepsToTarget: 120_500, minutesOn2Cores: 17.4 }),
    'trajflow train: Sokoban preset — held-out ≥ 0.5 typically by 120,500 env steps, ≈ 17 minutes on 2 cores (docs/results/learning.md)',
  );
  assert.match(expectationLine('Bandit', { target: 0.9, envStepsToTarget: 640, minutesOn2Cores: 1 })!, /≈ 1 minute on 2 cores/);
  assert.match(expectationLine('Bandit', { target: 0.9, envStepsToTarget: 640, minutesOn2Cores: 0.75 })!, /≈ 0\.8 minutes on 2 cores/);
});

test('env steps without minutes: the line leaves the time out', () => {
  assert.equal(
    expectationLine('FrozenLake', { target: 0.9, envStepsToTarget: 48_000 }),
    'trajflow train: FrozenLake preset — held-out ≥ 0.9 typically by 48,000 env steps (docs/results/learning.md)',
  );
});

test('nothing measured, or an env without expectations: no line', () => {
  assert.equal(expectationLine('FrozenLake', { target: 0.9 }), undefined);
  assert.equal(expectationLine('FrozenLake', { target: 0.9, minutesOn2Cores: 6 }), undefined, 'minutes alone say too little');
  assert.equal(expectationLine('ToolUse', undefined), undefined);
});

test("every preset has a target; Sokoban's is 0.5, the others' 0.9", () => {
  assert.deepEqual(Object.keys(TRAIN_EXPECTATIONS).sort(), Object.keys(TRAIN_PRESETS).sort());
  assert.equal(TRAIN_EXPECTATIONS.Sokoban!.target, 0.5);
  assert.equal(TRAIN_EXPECTATIONS.FrozenLake!.target, 0.9);
  assert.equal(TRAIN_EXPECTATIONS.Bandit!.target, 0.9);
});

// Unit: when a learning curve first reached a target held-out success (bench/learning-summary.ts) — per seed in env
// steps and wall seconds, over seeds as a count and a median where a seed that never reached it counts as +∞ —
// under the generic keys and the target's own (envStepsTo09 for 0.9).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { firstReaching, seedsToTarget, seedToTarget, targetKeySuffix, withTargetNames, type HeldOutPoint } from '../../bench/learning-summary.js';

const curve = (...points: [envSteps: number, greedy: number, seconds?: number][]): HeldOutPoint[] =>
  points.map(([envSteps, greedy, seconds]) => (seconds === undefined ? { envSteps, greedy } : { envSteps, greedy, seconds }));

test('a seed: the env steps and wall seconds of the first evaluation at or above the target, under both names', () => {
  const c = curve([0, 0.1, 2], [3200, 0.85, 40], [6400, 0.9, 81.5], [9600, 0.95, 120], [12_800, 0.7, 160]);
  assert.deepEqual(seedToTarget(c, 0.9), {
    target: 0.9,
    envStepsToTarget: 6400,
    wallSecondsToTarget: 81.5,
    envStepsTo09: 6400,
    wallSecondsTo09: 81.5,
  });
  assert.deepEqual(seedToTarget(c, 0.5), { target: 0.5, envStepsToTarget: 3200, wallSecondsToTarget: 40, envStepsTo05: 3200, wallSecondsTo05: 40 });
});

test('a seed that never reached the target, or whose curve has no wall times: null', () => {
  assert.deepEqual(seedToTarget(curve([0, 0.1, 1], [3200, 0.89, 30]), 0.9), {
    target: 0.9,
    envStepsToTarget: null,
    wallSecondsToTarget: null,
    envStepsTo09: null,
    wallSecondsTo09: null,
  });
  assert.deepEqual(seedToTarget([], 0.9).envStepsTo09, null);
  const untimed = seedToTarget(curve([0, 0.2], [640, 1]), 0.9);
  assert.equal(untimed.envStepsTo09, 640);
  assert.equal(untimed.wallSecondsTo09, null);
  assert.equal(firstReaching(curve([0, 0.95, 1]), 0.9)?.envSteps, 0, 'an untrained policy already at the target reaches it at 0 steps');
});

test('over seeds: the count that reached the target and the median with never as +∞', () => {
  const reaches = (steps: number) => curve([0, 0.1], [steps, 0.92]);
  const never = curve([0, 0.1], [50_000, 0.4]);
  assert.deepEqual(seedsToTarget([reaches(48_000), never, reaches(30_000), reaches(90_000), never], 0.9), {
    target: 0.9,
    seeds: 5,
    seedsReachingTarget: 3,
    medianEnvStepsToTarget: 90_000,
    medianWallSecondsToTarget: null,
    seedsReaching09: 3,
    medianEnvStepsTo09: 90_000,
    medianWallSecondsTo09: null,
  });
  assert.equal(seedsToTarget([reaches(48_000), never, never, reaches(30_000), never], 0.9).medianEnvStepsTo09, null, 'the median seed never reached it');
  assert.equal(seedsToTarget([reaches(40_000), reaches(20_000)], 0.9).medianEnvStepsTo09, 30_000, 'even count: the mean of the middle two');
  assert.equal(seedsToTarget([reaches(40_000), never], 0.9).medianEnvStepsTo09, null, 'even count with a middle seed that never reached it');
  assert.deepEqual(seedsToTarget([], 0.5), {
    target: 0.5,
    seeds: 0,
    seedsReachingTarget: 0,
    medianEnvStepsToTarget: null,
    medianWallSecondsToTarget: null,
    seedsReaching05: 0,
    medianEnvStepsTo05: null,
    medianWallSecondsTo05: null,
  });
});

test('over seeds: the median wall seconds to the target, null when a reaching seed recorded none', () => {
  const timed = (steps: number, seconds: number) => curve([0, 0.1, 1], [steps, 0.92, seconds]);
  const never = curve([0, 0.1, 1], [50_000, 0.4, 300]);
  const s = seedsToTarget([timed(48_000, 200), never, timed(30_000, 100)], 0.9);
  assert.equal(s.medianWallSecondsTo09, 200, 'the middle of 100, 200 and never');
  assert.equal(seedsToTarget([timed(48_000, 200), never, never], 0.9).medianWallSecondsTo09, null, 'the median seed never reached it');
  assert.equal(seedsToTarget([timed(48_000, 200), curve([0, 0.1], [640, 0.95])], 0.9).medianWallSecondsTo09, null, 'a reaching seed without wall time');
});

test('the in-process curve maps as it is; extra fields of a point are ignored', () => {
  const inProcess = [
    { envSteps: 0, greedy: 0.1, sampled: 0.2 },
    { envSteps: 640, greedy: 0.93, entropy: 0.4, seconds: 12 },
  ];
  assert.equal(seedsToTarget([inProcess], 0.9).medianEnvStepsTo09, 640);
});

test('key names: the target without its point, only for the …Target keys', () => {
  assert.equal(targetKeySuffix(0.9), '09');
  assert.equal(targetKeySuffix(0.75), '075');
  assert.equal(targetKeySuffix(1), '1');
  assert.deepEqual(withTargetNames({ target: 0.5, seeds: 2, seedsReachingTarget: 1 }), { target: 0.5, seeds: 2, seedsReachingTarget: 1, seedsReaching05: 1 });
});

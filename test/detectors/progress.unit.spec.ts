// Unit: when a run counts as improving (detectors/progress.ts), and what a detector's breach becomes then.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { heldWhileImproving, progressConfig, ProgressTrend } from '../../detectors/progress.js';
import { ConfigError } from '../../core/errors.js';

const states = (means: readonly number[]) => {
  const trend = new ProgressTrend();
  return means.map((m) => trend.push(m));
};

test('a run whose reward climbs well past its early level is improving once its recent level has gained 3 noise levels', () => {
  // early 0.2 (noise floor 0.02: the gain must be ≥ 0.06); recent at index 6 is 0.256, at index 7 0.32.
  const means = [0.2, 0.22, 0.18, 0.21, 0.19, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.85, 0.9];
  const improving = states(means);
  assert.deepEqual(improving.slice(0, 8), [false, false, false, false, false, false, false, true]);
  assert.ok(improving.slice(8).every(Boolean));
});

test('a flat run is never improving, whatever its noise', () => {
  const means = Array.from({ length: 60 }, (_, i) => 0.3 + 0.02 * Math.sin(i * 1.7));
  assert.ok(states(means).every((s) => !s));
});

test('a run that loses more than a quarter of its gain stops improving', () => {
  const rise = [0.2, 0.2, 0.2, 0.2, 0.2, 0.8, 0.8, 0.8, 0.8, 0.8];
  const fall = [0.5, 0.5, 0.5, 0.5, 0.5];
  const improving = states([...rise, ...fall]);
  assert.equal(improving[rise.length - 1], true);
  assert.equal(improving.at(-1), false, 'recent 0.5 is below 0.8 − 0.25 · 0.6 = 0.65');
});

test('a run is declining once it has gained clearly and given back more than a quarter of that gain', () => {
  const trend = new ProgressTrend();
  const declining = (means: readonly number[]) => means.map((m) => (trend.push(m), trend.declining));
  assert.equal(trend.declining, undefined, 'unknown before the early level is');
  assert.ok(
    declining([0.2, 0.2, 0.2, 0.2, 0.2, 0.8, 0.8, 0.8, 0.8, 0.8]).every((d) => !d),
    'rising and holding',
  );
  // recent 0.68 ≥ 0.8 − 0.25 · 0.6 = 0.65, then 0.56 below it.
  assert.deepEqual(declining([0.6, 0.5, 0.5, 0.5]), [false, false, true, true]);
  const flat = new ProgressTrend();
  for (let i = 0; i < 60; i++) flat.push(0.3 + 0.02 * Math.sin(i * 1.7));
  assert.equal(flat.declining, false, 'a run that never gained has nothing to give back');
});

test('negative rewards: the gain counts in early standard deviations, not as a ratio', () => {
  const means = [-1.0, -0.9, -1.1, -1.0, -0.95, 0.5, 1.0, 1.5, 2.0, 2.5];
  assert.equal(states(means).at(-1), true);
});

test('non-finite and missing reward means are skipped', () => {
  const trend = new ProgressTrend();
  for (const m of [0.2, Number.NaN, 0.2, undefined, 0.2, 0.2, 0.2]) trend.push(m);
  assert.equal(trend.improving, false);
});

test('a breach while improving is neither a fire nor a clear; other states pass through', () => {
  assert.equal(heldWhileImproving('breach', true), 'neutral');
  assert.equal(heldWhileImproving('breach', false), 'breach');
  assert.equal(heldWhileImproving('breach', undefined), 'breach');
  assert.equal(heldWhileImproving('clear', true), 'clear');
});

test('the config is checked with messages that say how to fix it', () => {
  assert.throws(() => progressConfig({ earlyPoints: 1 }), ConfigError);
  assert.throws(() => progressConfig({ keepGain: 2 }), /keepGain/);
});

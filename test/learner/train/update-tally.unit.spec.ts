// Unit: the decisions one update's optimizer steps take on numbers alone (update-tally.ts, no tensors): stop early
// once a minibatch's PPO-KL passes 1.5 × targetKl, skip a step whose gradient norm is not finite (counted, and the
// norm still reported), scale a gradient down to gradClip; losses averaged over the steps applied, in order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clipScale, UpdateTally, type MinibatchValues } from '../../../learner/train/update-tally.js';

const context = { learningRate: 1e-3, klCoeff: 0.5, entropyCoeff: 0.01, lossTokens: 40, tokens: 100, samples: 4, durationMs: 12 };
const values = (loss: number, ppoKl = 0.01): MinibatchValues => ({ loss, pgLoss: loss / 2, entropy: 1, kl: 0.2, ppoKl, clipFracHigh: 0.1, clipFracLow: 0.05, clipFracDual: 0 });

test('targetKl: stops only past 1.5 × targetKl, and records the PPO-KL it stopped at; null never stops', () => {
  const tally = new UpdateTally();
  assert.equal(tally.stopsEarly(0.15, 0.1), false, 'exactly 1.5 × is not past');
  assert.equal(tally.stopsEarly(10, null), false);
  assert.equal(tally.stopsEarly(Number.NaN, 0.1), false, 'an unreadable PPO-KL does not stop the update');
  assert.equal(tally.metrics(context).klEarlyStop, 0);
  assert.equal(tally.stopsEarly(0.2, 0.1), true);
  const m = tally.metrics(context);
  assert.deepEqual([m.klEarlyStop, m.klAtStop, m.optimizerSteps], [1, 0.2, 0]);
});

test('a non-finite gradient norm skips its step: counted in optimizerSteps and skippedSteps, the norm reported, no loss summed', () => {
  const tally = new UpdateTally();
  assert.equal(tally.step(0.5), true);
  tally.add(values(1));
  assert.equal(tally.step(Number.POSITIVE_INFINITY), false);
  assert.equal(tally.step(Number.NaN), false);
  const m = tally.metrics(context);
  assert.deepEqual([m.optimizerSteps, m.skippedSteps], [3, 2]);
  assert.ok(Number.isNaN(m.gradNorm), 'Math.max over the norms: NaN once a NaN came');
  assert.equal(m.loss, 1, 'averaged over the one step applied');
});

test('metrics: sums in step order, averaged over applied steps; the KL and entropy terms as they entered the loss', () => {
  const tally = new UpdateTally();
  for (const [norm, loss] of [
    [0.3, 0.1],
    [0.9, 0.2],
    [0.4, 0.3],
  ] as const) {
    assert.equal(tally.step(norm), true);
    tally.add(values(loss));
  }
  const m = tally.metrics(context);
  assert.equal(m.loss, (0.1 + 0.2 + 0.3) / 3, 'the same additions in the same order');
  assert.equal(m.gradNorm, 0.9, 'the largest norm of the update');
  assert.equal(m.klLoss, (0.5 * (0.2 + 0.2 + 0.2)) / 3);
  assert.equal(m.entropyLoss, (-0.01 * 3) / 3);
  assert.deepEqual([m.optimizerSteps, m.skippedSteps, m.learningRate, m.lossTokens, m.tokens, m.samples, m.durationMs], [3, 0, 1e-3, 40, 100, 4, 12]);
  assert.deepEqual([m.importanceWeightMean, m.importanceWeightMax, m.truncatedWeights], [1, 1, 0], 'no importance weights: neutral');
});

test('an update with no step applied reports zero losses, not NaN', () => {
  const m = new UpdateTally().metrics(context);
  assert.deepEqual([m.loss, m.entropy, m.kl, m.optimizerSteps], [0, 0, 0, 0]);
});

test('importance weights: mean over the loss tokens (1 without any), max and truncated count', () => {
  const tally = new UpdateTally();
  tally.importanceWeights(50, 3, 2, 40);
  assert.deepEqual([tally.metrics(context).importanceWeightMean, tally.metrics(context).importanceWeightMax, tally.metrics(context).truncatedWeights], [1.25, 3, 2]);
  tally.importanceWeights(0, 0, 0, 0);
  assert.equal(tally.metrics(context).importanceWeightMean, 1);
});

test('clipScale: 1 within gradClip, gradClip / norm (with its ε) above it', () => {
  assert.equal(clipScale(0.5, 1), 1);
  assert.equal(clipScale(4, 1), 1 / (4 + 1e-6));
  assert.ok(clipScale(4, 1) * 4 < 1);
});

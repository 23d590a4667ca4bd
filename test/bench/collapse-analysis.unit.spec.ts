// bench collapse's pure parts: the rolling mean, the "success fell" rule, the lead time and the text charts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { defaultFallRule, findFall, leadTime, markerRow, rollingMean, sparkline } from '../../bench/collapse-analysis.js';

test('rollingMean is a trailing mean over full windows only', () => {
  const r = rollingMean([1, 2, 3, 4, 5], 3);
  assert.ok(Number.isNaN(r[0]!) && Number.isNaN(r[1]!));
  assert.deepEqual(r.slice(2), [2, 3, 4]);
  assert.deepEqual(rollingMean([0.5, 1], 1), [0.5, 1]);
  assert.throws(() => rollingMean([1], 0), RangeError);
});

const rule3 = { window: 3, ratio: 0.8, minDrop: 0.1 };

test('findFall: a rise and a fall gives the peak and the first iteration below 0.8 × peak and ≥ minDrop below it', () => {
  //                  0    1    2    3    4    5    6    7    8    9
  const success = [0.2, 0.3, 0.5, 0.7, 0.9, 0.9, 0.9, 0.6, 0.5, 0.4];
  // rolling(3) from index 2: .333 .5 .7 .833 .9 .8 .667 .5
  const fall = findFall(success, rule3);
  assert.ok(fall);
  assert.equal(fall.peakIndex, 6);
  assert.ok(Math.abs(fall.peak - 0.9) < 1e-12);
  // index 7: 0.8 is not < 0.72; index 8: 0.667 < 0.72 and 0.233 ≥ 0.1.
  assert.equal(fall.fallIndex, 8);
  assert.ok(Math.abs(fall.value - 2 / 3) < 1e-12);
});

test('findFall with the default rule (rolling 5, 0.8 × peak, ≥ 0.15 below): a sustained fall counts, one bad batch does not', () => {
  assert.deepEqual(defaultFallRule, { window: 5, ratio: 0.8, minDrop: 0.15 });
  // One 0.52 batch among 0.8s (measured in a real run): the mean of 5 moves by ~0.06.
  assert.equal(findFall([0.3, 0.5, 0.8, 0.85, 0.9, 0.88, 0.84, 0.89, 0.84, 0.8, 0.77, 0.78, 0.77, 0.52, 0.84, 0.78]), null);
  //                0    1    2    3    4    5    6    7    8    9   10   11   12
  const success = [0.3, 0.5, 0.8, 0.9, 0.9, 0.9, 0.9, 0.6, 0.5, 0.4, 0.3, 0.3, 0.3];
  // rolling(5): i4 .68, i5 .8, i6 .88 (peak), i7 .84, i8 .76, i9 .66 (< .704 and .22 below) → fall at 9.
  const fall = findFall(success);
  assert.deepEqual(fall && { peak: fall.peakIndex, at: fall.fallIndex }, { peak: 6, at: 9 });
});

test('findFall: noise around a low level is not a fall (the absolute margin), a flat or rising curve neither', () => {
  // 0.25 → 0.18 is < 0.8 × 0.25 but only 0.07 below it.
  assert.equal(findFall([0.25, 0.25, 0.25, 0.18, 0.18, 0.18], rule3), null);
  assert.equal(findFall([0.5, 0.5, 0.5, 0.5, 0.5]), null);
  assert.equal(findFall([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), null);
  assert.equal(findFall([1, 0], rule3), null, 'shorter than one window');
  // The same drop with a smaller margin required is a fall.
  assert.equal(findFall([0.25, 0.25, 0.25, 0.18, 0.18, 0.18], { window: 3, ratio: 0.8, minDrop: 0.05 })?.fallIndex, 5);
});

test('findFall: the fall is measured against the running peak, not the last value', () => {
  // Slow decline: each step only a little lower, but the peak is remembered.
  const success = [0.8, 0.8, 0.8, 0.75, 0.7, 0.65, 0.6, 0.55, 0.5];
  const fall = findFall(success, { window: 1, ratio: 0.8, minDrop: 0.1 });
  assert.deepEqual(fall && { peak: fall.peakIndex, at: fall.fallIndex }, { peak: 0, at: 6 });
});

test('leadTime: fall − first alert, counting alerts before the peak and before the fall', () => {
  const fall = { peakIndex: 6, fallIndex: 8 };
  const lead = leadTime(
    [
      { iteration: 9, kind: 'entropy_collapse' },
      { iteration: 5, kind: 'reward_variance_cliff' },
      { iteration: 7, kind: 'template_collapse' },
    ],
    fall,
  );
  assert.deepEqual(lead.firstAlert, { iteration: 5, kind: 'reward_variance_cliff' });
  assert.equal(lead.leadIterations, 3);
  assert.equal(lead.alertsBeforePeak, 1);
  assert.equal(lead.alertsBeforeFall, 2);
  // A late alert gives a negative lead; no alert or no fall gives none.
  assert.equal(leadTime([{ iteration: 10, kind: 'x' }], fall).leadIterations, -2);
  assert.equal(leadTime([], fall).leadIterations, null);
  assert.equal(leadTime([{ iteration: 1, kind: 'x' }], null).leadIterations, null);
  assert.equal(leadTime([{ iteration: 1, kind: 'x' }], null).firstAlert?.iteration, 1);
});

test('sparkline and markerRow', () => {
  assert.equal(sparkline([0, 0.5, 1, Number.NaN, 2, -1], 0, 1), '▁▅█·█▁');
  assert.equal(markerRow(8, [2, 5], 5), '  !  *');
  assert.equal(markerRow(8, [1], 6), ' !    ^');
  assert.equal(markerRow(4, [], null), '');
});

// Golden tests for the group filters, with the in-group stds worked by hand.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError } from '../../../core/errors.js';
import { applyFilters, dynamicSamplingFilter, groupFilter, snrFilter, varianceFilter } from '../../../processors/filters/index.js';
import { groupOfRewards } from '../rewards/fixtures.js';

const ids = (groups: readonly { groupId: string }[]) => groups.map((g) => g.groupId);
const reasons = (dropped: readonly { groupId: string; reason: string }[]) => dropped.map((d) => `${d.groupId}:${d.reason}`);

test('DAPO dynamic sampling drops groups whose rewards are all equal, keeps singletons', () => {
  const groups = [
    groupOfRewards('mixed', [1, 0]),
    groupOfRewards('all-half', [0.5, 0.5, 0.5]),
    groupOfRewards('all-tenth', [0.1, 0.1, 0.1]), // np.std is 1.4e-17 here; exact equality still drops it
    groupOfRewards('single', [1]),
    groupOfRewards('empty', []),
  ];
  const { kept, dropped } = dynamicSamplingFilter(groups);
  assert.deepEqual(ids(kept), ['mixed', 'single']);
  assert.deepEqual(reasons(dropped), ['all-half:all_rewards_equal', 'all-tenth:all_rewards_equal', 'empty:empty_group']);
  assert.match(dropped[0]!.detail, /all 3 trajectories got reward 0.5/);
  assert.deepEqual(
    reasons(dynamicSamplingFilter(groups, { keepSingletons: false }).dropped).filter((r) => r.startsWith('single')),
    ['single:singleton_group'],
  );
});

// Groups of two rewards [0, d]: unbiased std = sqrt(2·(d/2)²/1) = d/√2, so the ranking follows d.
const byD = (ds: readonly number[]) => ds.map((d, i) => groupOfRewards(`g${i}`, [0, d]));

test('StarPO-S keeps the top int(0.25·n) groups by in-group std; ties go to the earlier group', () => {
  // d = [0, 4, 1, 3, 2, 3, 0, 1]: k = int(0.25·8) = 2 → g1 (4), then g3 and g5 tie at 3 → g3 (earlier).
  const groups = byD([0, 4, 1, 3, 2, 3, 0, 1]);
  const { kept, dropped } = varianceFilter(groups);
  assert.deepEqual(ids(kept), ['g1', 'g3']);
  assert.equal(dropped.length, 6);
  assert.ok(dropped.every((d) => d.reason === 'below_top_fraction' && d.filter === 'starpo_s_variance'));
  // std_rev keeps the lowest: g0 and g6 (d = 0).
  assert.deepEqual(ids(varianceFilter(groups, { type: 'std_rev' }).kept), ['g0', 'g6']);
  // ratio 0.5 → 4: g1 (4), g3 (3), g5 (3), g4 (2) — kept in input order.
  assert.deepEqual(ids(varianceFilter(groups, { ratio: 0.5 }).kept), ['g1', 'g3', 'g4', 'g5']);
  assert.equal(varianceFilter(groups, { ratio: 1 }).kept.length, 8);
});

test('StarPO-S rounding: int() truncates, as in RAGEN v1', () => {
  // 3 groups × 0.25 = 0.75 → 0 kept (v1 keeps none); atLeastOne keeps the top one.
  const three = byD([1, 3, 2]);
  assert.deepEqual(ids(varianceFilter(three).kept), []);
  assert.deepEqual(ids(varianceFilter(three, { atLeastOne: true }).kept), ['g1']);
  // 0.29·100 = 28.999999999999996 in floating point → 28, exactly as Python's int().
  assert.equal(varianceFilter(byD(Array.from({ length: 100 }, (_, i) => i)), { ratio: 0.29 }).kept.length, 28);
  assert.throws(() => varianceFilter(three, { ratio: 0 }), ConfigError);
  assert.throws(() => varianceFilter(three, { ratio: 1.5 }), /in \(0, 1\]/);
});

// Groups [−s, 0, s]: mean 0, ss = 2s², unbiased var = s², std = s exactly.
const byStd = (stds: readonly number[]) => stds.map((s, i) => groupOfRewards(`h${i}`, s === 0 ? [1, 1, 1] : [-s, 0, s]));

test('RAGEN-2 SNR top-p keeps the highest-std groups until they hold p of the total std', () => {
  // stds [0, 4, 3, 2, 1]; zero dropped first. Σ = 10, threshold 0.9·10 − 0.01 = 8.99.
  // sorted 4, 3, 2, 1: 4 → 7 → 9 ≥ 8.99 → keep h1, h2, h3; h4 below.
  const groups = byStd([0, 4, 3, 2, 1]);
  const { kept, dropped } = snrFilter(groups);
  assert.deepEqual(ids(kept), ['h1', 'h2', 'h3']);
  assert.deepEqual(reasons(dropped), ['h0:zero_std', 'h4:below_top_p']);
  // p = 0.5: threshold 4.99 → 4, 7 ≥ 4.99 → h1, h2.
  assert.deepEqual(ids(snrFilter(groups, { value: 0.5 }).kept), ['h1', 'h2']);
  // p = 1 keeps every non-zero group.
  assert.deepEqual(ids(snrFilter(groups, { value: 1 }).kept), ['h1', 'h2', 'h3', 'h4']);
  // includeZero: h0 is a candidate but never selected (the loop stops at a score ≤ 0).
  assert.deepEqual(reasons(snrFilter(groups, { includeZero: true }).dropped), ['h0:below_top_p', 'h4:below_top_p']);
});

test('RAGEN-2 SNR top-p with no reward variance anywhere keeps nothing (the step is skipped)', () => {
  const { kept, dropped } = snrFilter(byStd([0, 0]));
  assert.deepEqual(kept, []);
  assert.deepEqual(reasons(dropped), ['h0:zero_std', 'h1:zero_std']);
  assert.throws(() => snrFilter(byStd([1]), { value: 0 }), ConfigError);
});

test('filters chain; every drop is recorded with its filter', () => {
  const groups = [groupOfRewards('same', [1, 1]), ...byStd([4, 3, 2, 1])];
  const { kept, dropped } = applyFilters(groups, [groupFilter('dynamic_sampling'), groupFilter('starpo_s_variance', { ratio: 0.5 })]);
  // dynamic sampling drops 'same'; variance keeps int(0.5·4) = 2 of the rest: h0 (4), h1 (3).
  assert.deepEqual(ids(kept), ['h0', 'h1']);
  assert.deepEqual(
    dropped.map((d) => `${d.filter}:${d.groupId}`),
    ['dynamic_sampling:same', 'starpo_s_variance:h2', 'starpo_s_variance:h3'],
  );
  assert.throws(() => groupFilter('nope' as never), /unknown group filter 'nope'/);
});

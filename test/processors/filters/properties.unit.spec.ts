// Property tests: whatever the groups and options, each filter accounts for every group exactly once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { applyFilters, groupFilter, type GroupFilter } from '../../../processors/filters/index.js';
import { groupOfRewards } from '../rewards/fixtures.js';

// Rewards from a small set so that equal rewards, equal stds and zero-std groups are common.
const rewards = fc.array(fc.constantFrom(0, 0.5, 1, -0.1), { minLength: 1, maxLength: 5 });
const batch = fc.array(rewards, { minLength: 0, maxLength: 12 }).map((all) => all.map((r, i) => groupOfRewards(`g${i}`, r)));
const filter: fc.Arbitrary<GroupFilter> = fc.oneof(
  fc.boolean().map((keepSingletons) => groupFilter('dynamic_sampling', { keepSingletons })),
  fc
    .record({ ratio: fc.double({ min: 0.01, max: 1, noNaN: true }), type: fc.constantFrom('std' as const, 'std_rev' as const), atLeastOne: fc.boolean() })
    .map((options) => groupFilter('starpo_s_variance', options)),
  fc.record({ value: fc.double({ min: 0.05, max: 1.2, noNaN: true }), includeZero: fc.boolean() }).map((options) => groupFilter('ragen2_snr_top_p', options)),
);

test('filters never keep a dropped group and count every group exactly once', () => {
  fc.assert(
    fc.property(batch, fc.array(filter, { minLength: 1, maxLength: 3 }), (groups, filters) => {
      const { kept, dropped } = applyFilters(groups, filters);
      const keptIds = kept.map((g) => g.groupId);
      const droppedIds = dropped.map((d) => d.groupId);
      assert.ok(keptIds.every((id) => !droppedIds.includes(id)));
      assert.deepEqual([...keptIds, ...droppedIds].sort(), groups.map((g) => g.groupId).sort());
      // kept groups stay in input order
      assert.deepEqual(
        keptIds,
        groups.map((g) => g.groupId).filter((id) => keptIds.includes(id)),
      );
      assert.ok(dropped.every((d) => d.reason.length > 0 && d.detail.length > 0));
    }),
    { seed: 42, numRuns: 200 },
  );
});

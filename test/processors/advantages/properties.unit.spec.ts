// Property tests (fast-check, seeded): the identities each estimator must satisfy for any rewards.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { drGrpoAdvantages, gigpoAdvantages, grpoAdvantages, rlooAdvantages } from '../../../processors/advantages/index.js';

const reward = fc.double({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true });
const group = fc.array(reward, { minLength: 2, maxLength: 16 });
const runs = { seed: 42, numRuns: 200 };
const sum = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0);

test('GRPO advantages sum to ~0 within a group', () => {
  fc.assert(
    fc.property(group, (scores) => Math.abs(sum(grpoAdvantages(scores))) < 1e-6),
    runs,
  );
});

test('Dr. GRPO advantages have mean ~0', () => {
  fc.assert(
    fc.property(group, (scores) => Math.abs(sum(drGrpoAdvantages(scores)) / scores.length) < 1e-9),
    runs,
  );
});

test('RLOO equals r minus the mean of the others', () => {
  fc.assert(
    fc.property(group, (scores) =>
      rlooAdvantages(scores).every((a, i) => {
        const others = scores.filter((_, j) => j !== i);
        return Math.abs(a - (scores[i]! - sum(others) / others.length)) < 1e-9;
      }),
    ),
    runs,
  );
});

test('GiGPO (mean_norm): step advantages sum to 0 in every anchor group, episode advantages over all rows', () => {
  const step = fc.record({ reward, anchor: fc.constantFrom('a', 'b', 'c', 'd') });
  const trajectory = fc.record({ score: reward, steps: fc.array(step, { minLength: 1, maxLength: 6 }) });
  fc.assert(
    fc.property(fc.array(trajectory, { minLength: 2, maxLength: 6 }), (trajectories) => {
      const out = gigpoAdvantages(trajectories, { gamma: 0.95 });
      const byCluster = new Map<number, number>();
      out.anchorGroups.flat().forEach((c, row) => byCluster.set(c, (byCluster.get(c) ?? 0) + out.stepAdvantages.flat()[row]!));
      assert.ok([...byCluster.values()].every((s) => Math.abs(s) < 1e-9));
      assert.ok(Math.abs(sum(out.episodeAdvantages.flat())) < 1e-9);
    }),
    runs,
  );
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { coordinatesOf, episodeIdOf, firstOrdinalOf, groupIdOf, groupSeedOf, samplingKeyOf, stepEventIdOf, turnSeedOf } from '../../rollout/index.js';

test('episode ordinals run iteration by iteration, group by group, rollout by rollout', () => {
  const P = 3;
  const G = 4;
  assert.deepEqual(coordinatesOf(0, P, G), { ordinal: 0, iteration: 0, groupIndex: 0, rollout: 0 });
  assert.deepEqual(coordinatesOf(5, P, G), { ordinal: 5, iteration: 0, groupIndex: 1, rollout: 1 });
  assert.deepEqual(coordinatesOf(11, P, G), { ordinal: 11, iteration: 0, groupIndex: 2, rollout: 3 });
  assert.deepEqual(coordinatesOf(12, P, G), { ordinal: 12, iteration: 1, groupIndex: 3, rollout: 0 });
  assert.equal(firstOrdinalOf(2, P, G), 24);
  assert.equal(coordinatesOf(firstOrdinalOf(7, P, G), P, G).iteration, 7);
});

test('group, episode and event ids are built from the run id and the indices', () => {
  const groupId = groupIdOf('run-7', 12);
  assert.equal(groupId, 'run-7/g12');
  assert.equal(episodeIdOf(groupId, 3), 'run-7/g12/e3');
  assert.equal(stepEventIdOf(episodeIdOf(groupId, 3), 0), 'run-7/g12/e3/s0');
});

test('every rollout of a group shares the group seed; groups get consecutive seeds', () => {
  assert.equal(groupSeedOf(1000, 0), 1000);
  assert.equal(groupSeedOf(1000, 41), 1041);
});

test('turn seeds are stable, 32-bit, and differ between turns and episodes', () => {
  const seeds = new Set<number>();
  for (let g = 0; g < 20; g++) {
    for (let e = 0; e < 8; e++) {
      for (let t = 0; t < 5; t++) {
        const seed = turnSeedOf(episodeIdOf(groupIdOf('r', g), e), t);
        assert.ok(Number.isInteger(seed) && seed >= 0 && seed < 2 ** 32);
        seeds.add(seed);
      }
    }
  }
  assert.equal(seeds.size, 20 * 8 * 5);
  assert.equal(turnSeedOf('r/g0/e0', 0), turnSeedOf('r/g0/e0', 0));
});

test("sampling keys come from the episode's task seed, iteration and rollout, not its run's name", () => {
  assert.equal(samplingKeyOf({ groupSeed: 1_000_007, iteration: 3, rollout: 5 }), '1000007:3:5');
  const keys = new Set<string>();
  for (let g = 0; g < 4; g++) for (let i = 0; i < 3; i++) for (let r = 0; r < 4; r++) keys.add(samplingKeyOf({ groupSeed: 100 + g, iteration: i, rollout: r }));
  assert.equal(keys.size, 4 * 3 * 4, 'every episode of a run has its own key');
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { FrozenLakeEnv } from '../../envs/frozen-lake.js';
import { generateLakeMap, hasPath } from '../../envs/frozen-lake-map.js';
import { Rng } from '../../core/rng.js';

const act = (...actions: string[]) => `<answer>${actions.join(' || ')}</answer>`;
const MAP = ['SFFF', 'FHFH', 'FFFH', 'HFFG'];

describe('FrozenLake rendering (docs/algorithms.md §4.5)', () => {
  test('P player, _ frozen and start, O hole, G goal', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.loadMap(MAP);
    assert.equal(env.render(), ['P___', '_O_O', '___O', 'O__G'].join('\n'));
    env.step(act('Right'));
    assert.equal(env.render(), ['_P__', '_O_O', '___O', 'O__G'].join('\n'), 'the start shows as _ once left');
  });

  test('X player in a hole: the episode terminates with reward 0', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.loadMap(MAP);
    const r = env.step(act('Right', 'Down', 'Left'));
    assert.equal(r.observation, ['____', '_X_O', '___O', 'O__G'].join('\n'));
    assert.deepEqual([r.reward, r.terminated, r.truncated, r.metrics.success, r.info.endReason], [0, true, false, 0, 'hole']);
    assert.equal(r.metrics.actionsExecuted, 2, 'actions after the hole are not executed');
  });

  test('√ player on the goal: reward 1, terminated, success', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.loadMap(MAP);
    let r = env.step(act('Down', 'Down', 'Right'));
    assert.deepEqual([r.reward, r.terminated], [0, false]);
    r = env.step(act('Right', 'Down', 'Right'));
    assert.equal(r.observation, ['____', '_O_O', '___O', 'O__√'].join('\n'));
    assert.deepEqual([r.reward, r.terminated, r.metrics.success, r.info.endReason], [1, true, 1, 'goal']);
  });

  test('walking off the edge leaves the player in place', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.loadMap(MAP);
    const before = env.render();
    const r = env.step(act('Up', 'Left'));
    assert.equal(r.observation, before);
    assert.equal(r.metrics.actionEffective, 0);
    assert.equal(r.actionValid, true);
  });
});

describe('FrozenLake limits (RAGEN v1: 5 turns, 5 actions per turn, 10 per episode)', () => {
  test('the 10th action truncates; a 6th action in a turn is ignored', () => {
    const env = new FrozenLakeEnv({ slippery: false });
    env.loadMap(['SFFF', 'FFFF', 'FFFF', 'FFFG']);
    let r = env.step(act('Left', 'Left', 'Left', 'Left', 'Left', 'Left'));
    assert.deepEqual([r.metrics.actionsExecuted, r.metrics.actionsIgnored, r.truncated], [5, 1, false]);
    r = env.step(act('Up', 'Up', 'Up', 'Up', 'Up'));
    assert.deepEqual([r.metrics.actionsExecuted, r.truncated, r.terminated, r.info.endReason, r.metrics.success], [5, true, false, 'max-actions', 0]);
  });

  test('an invalid turn executes nothing but uses a turn', () => {
    const env = new FrozenLakeEnv();
    const reset = env.reset(11);
    const r = env.step('<answer>Jump</answer>');
    assert.deepEqual([r.actionValid, r.reward, r.metrics.actionsExecuted, r.metrics.turn], [false, 0, 0, 1]);
    assert.equal(r.observation, reset.observation);
    assert.equal(r.stateKey, reset.stateKey);
  });
});

describe('FrozenLake maps', () => {
  test('every map is 4×4 with one start, one goal, distinct, and a path between them', () => {
    let holes = 0;
    const n = 3000;
    for (let seed = 0; seed < n; seed++) {
      const map = generateLakeMap(new Rng(seed, 1), 4, 0.8);
      assert.equal(map.tiles.length, 16);
      assert.equal(map.tiles.filter((t) => t === 'S').length, 1);
      assert.equal(map.tiles.filter((t) => t === 'G').length, 1);
      assert.notEqual(map.start, map.goal);
      assert.ok(hasPath(map.tiles, 4));
      holes += map.tiles.filter((t) => t === 'H').length;
    }
    // Holes among the 14 other tiles: a bit under 0.2 because maps without a path are redrawn.
    const rate = holes / (n * 14);
    assert.ok(rate > 0.13 && rate < 0.2, `hole rate ${rate}`);
  });

  test('hasPath: DFS over non-hole tiles', () => {
    assert.equal(hasPath([...'SHFFHHFFFFFFFFFG'] as never, 4), false);
    assert.equal(hasPath([...'SFFFHHHFFFFFFFFG'] as never, 4), true);
  });

  test('the map depends only on the seed', () => {
    const a = new FrozenLakeEnv({ slippery: true }).reset(99).observation;
    const b = new FrozenLakeEnv({ slippery: false }).reset(99).observation;
    assert.equal(a, b);
  });
});

describe('FrozenLake slippery dynamics (gymnasium)', () => {
  // From the centre of an open map, count where one "Down" lands.
  const count = (options: { slippery: boolean; successRate?: number }, n: number) => {
    const env = new FrozenLakeEnv(options);
    const landed = { intended: 0, left: 0, right: 0, other: 0 };
    for (let seed = 0; seed < n; seed++) {
      env.loadMap(['FFFF', 'FSFF', 'FFFF', 'FFFG'], seed);
      env.step(act('Down'));
      const cell = env.playerCell;
      if (cell === 9) landed.intended += 1;
      else if (cell === 4)
        landed.left += 1; // gymnasium's (a − 1) mod 4 = Left
      else if (cell === 6)
        landed.right += 1; // (a + 1) mod 4 = Right
      else landed.other += 1;
    }
    return landed;
  };

  test('intended direction 1/3, each perpendicular 1/3, never backwards', () => {
    const n = 6000;
    const c = count({ slippery: true }, n);
    assert.equal(c.other, 0);
    for (const k of ['intended', 'left', 'right'] as const) assert.ok(Math.abs(c[k] / n - 1 / 3) < 0.025, `${k} ${c[k] / n}`);
  });

  test('successRate 0.8 (RAGEN-2): 0.8 intended, 0.1 each side', () => {
    const n = 6000;
    const c = count({ slippery: true, successRate: 0.8 }, n);
    assert.ok(Math.abs(c.intended / n - 0.8) < 0.02);
    assert.ok(Math.abs(c.left / n - 0.1) < 0.02 && Math.abs(c.right / n - 0.1) < 0.02);
  });

  test('not slippery: always the intended direction', () => {
    assert.deepEqual(count({ slippery: false }, 200), { intended: 200, left: 0, right: 0, other: 0 });
  });
});

describe('FrozenLake distanceShaping (potential-based, off by default)', () => {
  // Φ = 1 − d/16 with d the steps to G over non-holes: start d 6 (0.625), (0,1) d 5, holes 0, G 1.
  test('a move adds c·(Φ(after) − Φ(before)): closer +, a wall bump 0, a hole −Φ(before)', () => {
    const env = new FrozenLakeEnv({ slippery: false, distanceShaping: 1 });
    env.loadMap(MAP);
    assert.equal(env.step(act('Up')).reward, 0, 'bumping the edge leaves Φ unchanged');
    assert.equal(env.step(act('Right')).reward, 0.0625);
    const r = env.step(act('Down'));
    assert.deepEqual([r.reward, r.terminated, r.info.endReason], [-0.6875, true, 'hole']);
  });

  test('over an episode the shaping sums to c·(Φ(last) − Φ(start)); success is unchanged', () => {
    const env = new FrozenLakeEnv({ slippery: false, distanceShaping: 2 });
    env.loadMap(MAP);
    const first = env.step(act('Down', 'Down', 'Right'));
    const last = env.step(act('Right', 'Down', 'Right'));
    assert.equal(first.reward, 2 * (0.8125 - 0.625));
    assert.deepEqual([last.reward, last.metrics.success], [1 + 2 * (1 - 0.8125), 1]);
    assert.equal(first.reward + last.reward, 1 + 2 * (1 - 0.625));
    const plain = new FrozenLakeEnv({ slippery: false });
    plain.loadMap(MAP);
    assert.equal(plain.step(act('Right')).reward, 0, 'off by default');
    assert.throws(() => new FrozenLakeEnv({ distanceShaping: -1 }), /distanceShaping must be a number ≥ 0/);
  });

  test('with shapingDiscount γ a wall bump costs c·(1 − γ)·Φ', () => {
    const env = new FrozenLakeEnv({ slippery: false, distanceShaping: 1, shapingDiscount: 0.5 });
    env.loadMap(MAP);
    assert.equal(env.step(act('Up')).reward, -0.5 * 0.625);
    assert.equal(env.step(act('Right')).reward, 0.5 * 0.6875 - 0.625);
    assert.throws(() => new FrozenLakeEnv({ shapingDiscount: 2 }), /shapingDiscount/);
  });
});

describe('FrozenLake holeReward (0 by default)', () => {
  test('falling into a hole pays holeReward and still ends the episode; the goal and other moves are unchanged', () => {
    const env = new FrozenLakeEnv({ slippery: false, holeReward: -1 });
    env.loadMap(MAP);
    assert.equal(env.step(act('Right')).reward, 0);
    const r = env.step(act('Down'));
    assert.deepEqual([r.reward, r.terminated, r.info.endReason, r.metrics.success], [-1, true, 'hole', 0]);
    const plain = new FrozenLakeEnv({ slippery: false });
    plain.loadMap(MAP);
    plain.step(act('Right'));
    assert.equal(plain.step(act('Down')).reward, 0, 'gymnasium pays nothing for a hole');
    assert.throws(() => new FrozenLakeEnv({ holeReward: 1 }), /holeReward must be a number ≤ 0/);
  });

  test('wallBumpReward is paid for a move that leaves the player in place, and only then', () => {
    const env = new FrozenLakeEnv({ slippery: false, wallBumpReward: -0.1 });
    env.loadMap(MAP);
    const bump = env.step(act('Up'));
    assert.deepEqual([bump.reward, bump.terminated], [-0.1, false]);
    assert.equal(env.step(act('Right')).reward, 0);
    assert.throws(() => new FrozenLakeEnv({ wallBumpReward: 0.5 }), /wallBumpReward must be a number ≤ 0/);
  });
});

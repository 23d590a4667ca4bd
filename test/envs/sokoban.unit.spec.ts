import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng, RngStream } from '../../core/rng.js';
import { SokobanEnv } from '../../envs/sokoban.js';
import { Cell, generateRoom, roomTopology } from '../../envs/sokoban-room.js';
import { sokobanRoom, solveSokoban } from './helpers.js';

const act = (...actions: string[]) => `<answer>${actions.join(' || ')}</answer>`;
const close = (a: number, b: number) => assert.ok(Math.abs(a - b) < 1e-9, `${a} ≠ ${b}`);

function envWith(grid: string, options = {}): SokobanEnv {
  const env = new SokobanEnv(options);
  env.loadRoom(sokobanRoom(grid));
  return env;
}

describe('Sokoban rendering (docs/algorithms.md §4.5)', () => {
  test('# wall, _ empty, O target, X box, P player; √ box on target, S player on target', () => {
    const grid = '######\n#_P__#\n#_X__#\n#__O_#\n#____#\n######';
    const env = envWith(grid);
    assert.equal(env.render(), grid);
    env.step(act('Down'));
    assert.equal(env.render(), '######\n#____#\n#_P__#\n#_XO_#\n#____#\n######');
    const onTarget = envWith('######\n#_P__#\n#_X__#\n#_O__#\n#____#\n######');
    onTarget.step(act('Down'));
    assert.equal(onTarget.render(), '######\n#____#\n#_P__#\n#_√__#\n#____#\n######');
    const standing = envWith('######\n#_PO_#\n#____#\n#_X__#\n#____#\n######');
    standing.step(act('Right'));
    assert.equal(standing.render(), '######\n#__S_#\n#____#\n#_X__#\n#____#\n######');
  });
});

describe('Sokoban push semantics and rewards (gym-sokoban)', () => {
  test('a plain move costs −0.1', () => {
    const r = envWith('######\n#P___#\n#____#\n#_X__#\n#__O_#\n######').step(act('Right'));
    close(r.reward, -0.1);
    assert.equal(r.metrics.actionEffective, 1);
  });

  test('walking into a wall does nothing and still costs −0.1', () => {
    const env = envWith('######\n#P___#\n#____#\n#_X__#\n#__O_#\n######');
    const before = env.render();
    const r = env.step(act('Up', 'Left'));
    close(r.reward, -0.2);
    assert.equal(r.observation, before);
    assert.equal(r.metrics.actionEffective, 0);
  });

  test('pushing a box into a wall does nothing', () => {
    const env = envWith('######\n#XP__#\n#____#\n#____#\n#__O_#\n######');
    const before = env.render();
    close(env.step(act('Left')).reward, -0.1);
    assert.equal(env.render(), before);
  });

  test('pushing a box into another box does nothing', () => {
    const env = envWith('######\n#XXP_#\n#____#\n#O___#\n#O___#\n######', { numBoxes: 2 });
    const before = env.render();
    env.step(act('Left'));
    assert.equal(env.render(), before);
  });

  test('box onto a target: +1 − 0.1, and +10 when all boxes are on targets (terminated)', () => {
    const r = envWith('######\n#PXO_#\n#____#\n#____#\n#____#\n######').step(act('Right', 'Right'));
    close(r.reward, -0.1 + 1 + 10);
    assert.deepEqual([r.terminated, r.truncated, r.metrics.success, r.metrics.actionsExecuted, r.info.endReason], [true, false, 1, 1, 'solved']);
    assert.equal(r.observation, '######\n#_P√_#\n#____#\n#____#\n#____#\n######');
  });

  test('box off a target: −1 − 0.1; back on: +1 − 0.1 (two boxes, one still off)', () => {
    const env = envWith('######\n#P√__#\n#____#\n#_X__#\n#__O_#\n######', { numBoxes: 2 });
    const r = env.step(act('Right', 'Left', 'Left'));
    close(r.reward, -1.1 + -0.1 + -0.1);
    assert.equal(env.render(), '######\n#POX_#\n#____#\n#_X__#\n#__O_#\n######');
    const back = envWith('######\n#_OXP#\n#____#\n#_X__#\n#__O_#\n######', { numBoxes: 2 }).step(act('Left'));
    close(back.reward, 1 - 0.1);
    assert.equal(back.terminated, false);
    assert.equal(back.metrics.boxesOnTarget, 1);
  });

  test("maxSteps truncates (gym-sokoban's max_steps)", () => {
    const env = envWith('######\n#P___#\n#____#\n#_X__#\n#__O_#\n######', { maxSteps: 3 });
    const r = env.step(act('Right', 'Left', 'Right', 'Left'));
    assert.deepEqual([r.truncated, r.terminated, r.metrics.actionsExecuted, r.info.endReason, r.metrics.success], [true, false, 3, 'max-steps', 0]);
  });
});

describe('Sokoban room generation (random walk + reverse play)', () => {
  test('topology: the border is wall and the floor is one 4-connected region', () => {
    for (let seed = 0; seed < 300; seed++) {
      const level = roomTopology(new Rng(seed), 6, 6, 20);
      for (let i = 0; i < 36; i++) {
        const [r, c] = [Math.floor(i / 6), i % 6];
        if (r === 0 || c === 0 || r === 5 || c === 5) assert.equal(level[i], Cell.wall);
      }
      const floor = level.flatMap((v, i) => (v === Cell.floor ? [i] : []));
      const seen = new Set([floor[0]]);
      const stack = [floor[0] as number];
      while (stack.length) {
        const cell = stack.pop() as number;
        for (const n of [cell - 6, cell + 6, cell - 1, cell + 1]) if (level[n] === Cell.floor && !seen.has(n)) seen.add(n), stack.push(n);
      }
      assert.equal(seen.size, floor.length, `seed ${seed}: floor not connected`);
    }
  });

  test('every generated 6×6 room has one box off its target, and a BFS solver solves it', () => {
    const lengths: number[] = [];
    for (let seed = 0; seed < 300; seed++) {
      const room = generateRoom(new Rng(seed, RngStream.task), { rows: 6, cols: 6, numBoxes: 1, searchDepth: 300 });
      assert.equal(room.boxes.length, 1);
      assert.equal(room.fixed.filter((v) => v === Cell.target).length, 1);
      assert.notEqual(room.fixed[room.boxes[0] as number], Cell.target);
      assert.ok(room.displacement >= 1);
      assert.ok(!room.boxes.includes(room.player) && room.fixed[room.player] !== Cell.wall);
      const steps = solveSokoban(room);
      assert.ok(steps > 0, `seed ${seed} unsolvable`);
      lengths.push(steps);
    }
    // Reverse play pulls the box at least `displacement` cells away, so no room is solved by a lucky first step alone.
    assert.ok(lengths.reduce((a, b) => a + b, 0) / lengths.length > 2);
  });

  test("the environment's rooms are solvable too, and the room depends only on the seed", () => {
    const env = new SokobanEnv();
    for (let seed = 1_000_000_000; seed < 1_000_000_050; seed++) {
      const reset = env.reset(seed);
      assert.ok(solveSokoban(env.room) > 0);
      assert.equal(new SokobanEnv({ maxSteps: 7 }).reset(seed).observation, reset.observation);
    }
  });

  test('two boxes on 8×8 (LargerSokoban) also generate solvable rooms', () => {
    for (let seed = 0; seed < 10; seed++) {
      const room = generateRoom(new Rng(seed, RngStream.task), { rows: 8, cols: 8, numBoxes: 2, searchDepth: 10 });
      assert.equal(room.boxes.length, 2);
      assert.ok(solveSokoban(room) > 0);
    }
  });
});

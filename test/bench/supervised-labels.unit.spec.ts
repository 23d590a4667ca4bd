// bench supervised's BFS labels: optimal on hand-made maps and rooms (known shortest paths, a one-push room, a
// dead room), and following them in the environment solves the task in exactly the BFS distance; generated
// rooms agree with the independent solver of the environment tests; drawn states carry their labels.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FrozenLakeEnv } from '../../envs/frozen-lake.js';
import { goalDistances } from '../../envs/frozen-lake-map.js';
import { Rng } from '../../core/rng.js';
import { SokobanEnv } from '../../envs/sokoban.js';
import { lakeOptimalActions, sokobanDistances, sokobanOptimalActions, sokobanStep, type SokobanState } from '../../bench/supervised-labels.js';
import { supervisedTask } from '../../bench/supervised-states.js';
import { sokobanRoom, solveSokoban } from '../envs/helpers.js';

const LAKE = { slippery: false, maxTurns: 20, maxActionsPerTurn: 1, maxActionsPerEpisode: 20 };
const act = (word: string) => `<answer>${word}</answer>`;
// Gymnasium's 4×4 map: 6 steps from S to G, by Down-Down-Right-Right-Down-Right or Right-Right-Down-Down-Down-Right.
const GYM_MAP = ['SFFF', 'FHFH', 'FFFH', 'HFFG'];

/** Follows the first optimal action from the start until the episode ends: [steps, success]. */
function followLakeLabels(rows: readonly string[]): [number, boolean] {
  const env = new FrozenLakeEnv(LAKE);
  env.loadMap(rows);
  const map = env.lake;
  const distances = goalDistances(map);
  for (let steps = 1; ; steps++) {
    const optimal = lakeOptimalActions(map, distances, env.playerCell);
    assert.ok(optimal.length > 0, `no label on tile ${env.playerCell}`);
    const r = env.step(act(env.actionVocabulary[optimal[0]!]!));
    if (r.terminated || r.truncated) return [steps, r.metrics.success === 1];
  }
}

test('FrozenLake labels on the gymnasium map: both first moves of the two shortest paths, then the only ones', () => {
  const env = new FrozenLakeEnv(LAKE);
  env.loadMap(GYM_MAP);
  const map = env.lake;
  const d = goalDistances(map);
  assert.equal(d[0], 6);
  const words = (cell: number) => lakeOptimalActions(map, d, cell).map((a) => env.actionVocabulary[a]);
  assert.deepEqual(words(0), ['Down', 'Right']);
  assert.deepEqual(words(4), ['Down'], 'right of (1,0) is a hole');
  assert.deepEqual(words(10), ['Down'], 'right of (2,2) is a hole');
  assert.deepEqual(words(14), ['Right'], 'next to the goal');
  assert.deepEqual(words(3), ['Left'], 'Down from the corner is a hole; Up and Right bump the edge');
  assert.deepEqual([words(5), words(15)], [[], []], 'a hole and the goal have no label');
  assert.deepEqual(followLakeLabels(GYM_MAP), [6, true]);
});

test('FrozenLake labels take the detour when the straight way is holed, and stop at tiles cut off from the goal', () => {
  // S on the top left, G on the top right behind holes: 7 steps down and around.
  const rows = ['SHFG', 'FHFF', 'FFFF', 'HFFH'];
  const env = new FrozenLakeEnv(LAKE);
  env.loadMap(rows);
  const d = goalDistances(env.lake);
  assert.equal(d[0], 7);
  assert.deepEqual(lakeOptimalActions(env.lake, d, 0), [1], 'Down: Right is a hole');
  assert.deepEqual(followLakeLabels(rows), [7, true]);
  const cutOff = ['SHFG', 'HFFF', 'FFFF', 'FFFF'];
  env.loadMap(cutOff);
  assert.deepEqual(lakeOptimalActions(env.lake, goalDistances(env.lake), 0), [], 'S is walled in by holes');
});

test('FrozenLake: on 50 generated maps, the first label from every reachable tile reaches the goal in exactly its distance', () => {
  const env = new FrozenLakeEnv(LAKE);
  for (let seed = 0; seed < 50; seed++) {
    env.reset(seed);
    const map = env.lake;
    const d = goalDistances(map);
    for (let cell = 0; cell < map.size * map.size; cell++) {
      if (cell === map.goal || !Number.isFinite(d[cell])) continue;
      const rows = Array.from({ length: map.size }, (_, r) =>
        map.tiles
          .slice(r * map.size, (r + 1) * map.size)
          .map((t, c) => (r * map.size + c === cell ? 'S' : t === 'S' ? 'F' : t))
          .join(''),
      );
      assert.deepEqual(followLakeLabels(rows), [d[cell], true], `seed ${seed} tile ${cell}`);
    }
  }
});

/** Follows the first optimal action in SokobanEnv from the room's start: [actions, solved]. */
function followSokobanLabels(room: Parameters<typeof solveSokoban>[0]): [number, boolean] {
  const env = new SokobanEnv({ maxTurns: 30, maxActionsPerTurn: 1, maxActionsPerEpisode: 30 });
  env.loadRoom(room);
  const distances = sokobanDistances(room, { player: room.player, boxes: room.boxes });
  for (let steps = 1; ; steps++) {
    const { player, boxes } = env.room;
    const optimal = sokobanOptimalActions(room, distances, { player, boxes });
    assert.ok(optimal.length > 0, `no label in\n${env.render()}`);
    const r = env.step(act(env.actionVocabulary[optimal[0]!]!));
    if (r.terminated || r.truncated) return [steps, r.metrics.success === 1];
  }
}

/** A hand-drawn room, its start state and the BFS distances from it. */
function atStart(layout: string) {
  const room = sokobanRoom(layout);
  const start: SokobanState = { player: room.player, boxes: room.boxes };
  return { room, start, distances: sokobanDistances(room, start) };
}

test('Sokoban: one push solves the room, and the label is that push only', () => {
  const { room, start, distances } = atStart(`
    ######
    #____#
    #PXO_#
    #____#
    #____#
    ######`);
  assert.equal(distances.distance(start), 1);
  assert.deepEqual(sokobanOptimalActions(room, distances, start), [3], 'Right');
  assert.deepEqual(followSokobanLabels(room), [1, true]);
});

test('Sokoban: the player walks around the box before pushing; a box in a corner is dead', () => {
  const { room, start, distances } = atStart(`
    ######
    #_P__#
    #_XO_#
    #____#
    #____#
    ######`);
  // Left, Down, then the push Right; Down first would push the box off the target's row.
  assert.equal(distances.distance(start), 3);
  assert.deepEqual(sokobanOptimalActions(room, distances, start), [2], 'Left');
  assert.deepEqual(followSokobanLabels(room), [3, true]);
  // Down pushes the box off the target's row; from there the best is 6 more: Left, Down, push Right, Down, Right, push Up.
  const pushedDown = sokobanStep(room, start, 1);
  assert.deepEqual(pushedDown, { player: 14, boxes: [20] });
  assert.equal(distances.distance(pushedDown), 6);
  const corner = atStart(`
    ######
    #XP__#
    #__O_#
    #____#
    #____#
    ######`);
  assert.equal(corner.distances.distance(corner.start), undefined);
  assert.deepEqual(sokobanOptimalActions(corner.room, corner.distances, corner.start), []);
});

test("Sokoban: on 10 generated rooms the BFS distance equals the test solver's, and following the labels solves each in it", () => {
  const env = new SokobanEnv();
  for (let seed = 0; seed < 10; seed++) {
    env.reset(seed);
    const room = { ...env.room, boxes: [...env.room.boxes] };
    const distance = sokobanDistances(room, { player: room.player, boxes: room.boxes }).distance({ player: room.player, boxes: room.boxes });
    assert.equal(distance, solveSokoban(room), `seed ${seed}`);
    assert.deepEqual(followSokobanLabels(room), [distance, true], `seed ${seed}`);
  }
});

test('drawn states: the player is on the map, the labels are the BFS labels of that state, and the draw is seeded', () => {
  const options = { slippery: false, maxTurns: 10, maxActionsPerTurn: 1, maxActionsPerEpisode: 10 };
  for (const name of ['FrozenLake', 'Sokoban'] as const) {
    const task = supervisedTask(name, name === 'FrozenLake' ? options : { maxTurns: 10, maxActionsPerTurn: 1, maxActionsPerEpisode: 10 });
    assert.equal(task.actionBudget, 10);
    const a = Array.from({ length: 20 }, (_, i) => task.draw(i, new Rng(7, 3)));
    const b = Array.from({ length: 20 }, (_, i) => task.draw(i, new Rng(7, 3)));
    assert.deepEqual(a, b, `${name}: same seeds and stream, same states`);
    a.forEach((s, seed) => {
      assert.equal(s.observation.match(/[PS]/g)?.length, 1, `${name}: one player in\n${s.observation}`);
      assert.ok(s.optimal.length >= 1, `${name} seed ${seed}: labelled`);
      // The labels are those of the state the observation shows, recomputed from the observation.
      const cell = s.observation.replaceAll('\n', '').search(/[PS]/);
      if (name === 'FrozenLake') {
        const env = new FrozenLakeEnv(options);
        env.reset(seed);
        assert.deepEqual(s.optimal, lakeOptimalActions(env.lake, goalDistances(env.lake), cell), `seed ${seed}`);
      } else {
        const room = sokobanRoom(s.observation);
        const state = { player: room.player, boxes: room.boxes };
        assert.equal(room.player, cell);
        assert.deepEqual(s.optimal, sokobanOptimalActions(room, sokobanDistances(room, state), state), `seed ${seed}`);
      }
    });
    assert.ok(Number.isFinite(task.startDistance(3)));
  }
  assert.throws(() => supervisedTask('FrozenLake', { slippery: true }), /slippery: false/);
});

// Sokoban room generation, gym-sokoban's room_utils as RAGEN v1 uses it (docs/algorithms.md §4.5):
//  1. topology: a random walk of int(1.7·(rows+cols)) steps that changes direction with p = 0.35 and
//     stamps a random 3×3 floor mask at each position; the border is wall;
//  2. the player and the boxes go on random floor tiles, each box on its own target;
//  3. reverse play: a depth-first search (to searchDepth) of player moves that PULL boxes off their
//     targets; the state with the best score box_swaps × displacement (0 unless every target is
//     uncovered) wins, so the room is solvable by replaying the pulls as pushes. Up to 4 tries while the
//     displacement is 0, otherwise the whole generation starts again (RAGEN reseeds and retries);
//  4. 0–3 random player moves (move probability 0.8 if the displacement is 1, else 0.5; continue 0.5).
import { TrajflowError } from '../core/errors.js';
import type { Rng } from '../core/rng.js';

/** gym-sokoban's cell codes. During reverse play a box that was pulled is 3, one never pulled is 4. */
export const Cell = { wall: 0, floor: 1, target: 2, boxOnTarget: 3, box: 4, player: 5 } as const;

export interface SokobanRoom {
  readonly rows: number;
  readonly cols: number;
  /** Row-major fixed layer: wall, floor or target. */
  readonly fixed: readonly number[];
  readonly player: number;
  /** Cells of the boxes, none on a target. */
  readonly boxes: readonly number[];
  /** Manhattan distance the reverse play moved the boxes from their targets. */
  readonly displacement: number;
}

export interface RoomSpec {
  rows: number;
  cols: number;
  numBoxes: number;
  searchDepth: number;
  /** Walk length; gym-sokoban's default int(1.7·(rows+cols)). */
  walkSteps?: number;
}

const P_CHANGE_DIRECTION = 0.35;
const TRIES = 4;
const MAX_GENERATIONS = 1000;
const MAX_EXPLORED_STATES = 300_000;

/** Up, down, left, right as (row, col) changes (gym-sokoban's CHANGE_COORDINATES). */
const CHANGES: readonly (readonly [number, number])[] = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];

const MASKS: readonly (readonly number[])[] = [
  [0, 0, 0, 1, 1, 1, 0, 0, 0],
  [0, 1, 0, 0, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 0, 1, 0],
  [0, 0, 0, 1, 1, 0, 1, 1, 0],
  [0, 0, 0, 0, 1, 1, 0, 1, 0],
];
const DIRECTIONS: readonly (readonly [number, number])[] = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
];

/** Step 1: the floor/wall topology. */
export function roomTopology(rng: Rng, rows: number, cols: number, walkSteps: number): number[] {
  const level = new Array<number>(rows * cols).fill(0);
  let direction = rng.pick(DIRECTIONS);
  let r = rng.intBetween(1, rows - 1);
  let c = rng.intBetween(1, cols - 1);
  for (let s = 0; s < walkSteps; s++) {
    if (rng.next() < P_CHANGE_DIRECTION) direction = rng.pick(DIRECTIONS);
    r = Math.max(Math.min(r + direction[0], rows - 2), 1);
    c = Math.max(Math.min(c + direction[1], cols - 2), 1);
    const mask = rng.pick(MASKS);
    for (let i = 0; i < 9; i++) {
      if (mask[i] === 1) level[(r - 1 + Math.floor(i / 3)) * cols + (c - 1 + (i % 3))] = Cell.floor;
    }
  }
  for (let i = 0; i < rows * cols; i++) {
    const [rr, cc] = [Math.floor(i / cols), i % cols];
    if (rr === 0 || cc === 0 || rr === rows - 1 || cc === cols - 1) level[i] = Cell.wall;
  }
  return level;
}

function floorCells(room: readonly number[]): number[] {
  const cells: number[] = [];
  room.forEach((v, i) => {
    if (v === Cell.floor) cells.push(i);
  });
  return cells;
}

/** Step 2: player and targets on random floor tiles; null when the room is too small (gym raises). */
function placeBoxesAndPlayer(rng: Rng, room: number[], numBoxes: number): number[] | null {
  const free = floorCells(room);
  if (free.length <= numBoxes + 1) return null;
  room[free[rng.int(free.length)] as number] = Cell.player;
  for (let n = 0; n < numBoxes; n++) {
    const left = floorCells(room);
    room[left[rng.int(left.length)] as number] = Cell.target;
  }
  return room;
}

interface ReverseResult {
  state: Uint8Array;
  /** target cell -> box cell */
  mapping: Map<number, number>;
}

function displacementOf(mapping: ReadonlyMap<number, number>, cols: number): number {
  let score = 0;
  for (const [target, box] of mapping) {
    score += Math.abs(Math.floor(target / cols) - Math.floor(box / cols)) + Math.abs((target % cols) - (box % cols));
  }
  return score;
}

/** One reverse move: the player steps onto a free cell and pulls the box behind it, if any. */
function reverseMove(state: Uint8Array, fixed: readonly number[], cols: number, mapping: Map<number, number>, lastPull: number, action: number): number {
  const player = state.indexOf(Cell.player);
  const [dr, dc] = CHANGES[action] as readonly [number, number];
  const next = player + dr * cols + dc;
  if (state[next] !== Cell.floor && state[next] !== Cell.target) return lastPull;
  state[player] = fixed[player] as number;
  state[next] = Cell.player;
  const behind = player - dr * cols - dc;
  if (state[behind] === Cell.boxOnTarget || state[behind] === Cell.box) {
    state[player] = Cell.boxOnTarget; // "pulled" marker during generation
    state[behind] = fixed[behind] as number;
    for (const [target, box] of mapping) {
      if (box === behind) {
        mapping.set(target, player);
        lastPull = target;
      }
    }
  }
  return lastPull;
}

/** Step 3: the depth-first reverse play, as RAGEN's depth_first_search (pull actions only). */
function reversePlay(start: Uint8Array, fixed: readonly number[], cols: number, numBoxes: number, searchDepth: number): ReverseResult {
  const explored = new Set<string>();
  const initialMapping = new Map<number, number>();
  fixed.forEach((v, i) => {
    if (v === Cell.target) initialMapping.set(i, i);
  });
  let best: ReverseResult = { state: start, mapping: initialMapping };
  let bestScore = -1;

  const search = (state: Uint8Array, mapping: Map<number, number>, boxSwaps: number, lastPull: number, ttl: number): void => {
    ttl -= 1;
    if (ttl <= 0 || explored.size >= MAX_EXPLORED_STATES) return;
    const key = String.fromCharCode(...state);
    if (explored.has(key)) return;
    let emptyTargets = 0;
    for (const v of state) if (v === Cell.target) emptyTargets += 1;
    const score = emptyTargets === numBoxes ? boxSwaps * displacementOf(mapping, cols) : 0;
    if (score > bestScore) {
      best = { state: Uint8Array.from(state), mapping: new Map(mapping) };
      bestScore = score;
    }
    explored.add(key);
    for (let action = 0; action < 4; action++) {
      const nextState = Uint8Array.from(state);
      const nextMapping = new Map(mapping);
      const nextPull = reverseMove(nextState, fixed, cols, nextMapping, lastPull, action);
      search(nextState, nextMapping, nextPull !== lastPull ? boxSwaps + 1 : boxSwaps, nextPull, ttl);
    }
  };
  search(start, initialMapping, 0, -1, searchDepth);
  return best;
}

/** Step 4: up to 3 random steps of the player onto free, not yet visited cells. */
function randomPlayerMoves(rng: Rng, state: Uint8Array, fixed: readonly number[], cols: number, moveProbability: number): void {
  if (rng.next() > moveProbability) return;
  let player = state.indexOf(Cell.player);
  const visited = [player];
  for (let steps = 0; steps < 3; ) {
    const options: number[] = [];
    for (const [dr, dc] of CHANGES) {
      const next = player + dr * cols + dc;
      if ((state[next] === Cell.floor || state[next] === Cell.target) && !visited.includes(next)) options.push(next);
    }
    if (options.length === 0) break;
    const next = rng.pick(options);
    state[player] = fixed[player] as number;
    state[next] = Cell.player;
    player = next;
    visited.push(next);
    steps += 1;
    if (steps >= 3 || rng.next() > 0.5) break;
  }
}

/** Generates a room that is solvable by construction (the reverse play is a solution, read backwards). */
export function generateRoom(rng: Rng, spec: RoomSpec): SokobanRoom {
  const { rows, cols, numBoxes, searchDepth } = spec;
  const walkSteps = spec.walkSteps ?? Math.floor(1.7 * (rows + cols));
  for (let generation = 0; generation < MAX_GENERATIONS; generation++) {
    let result: ReverseResult | null = null;
    let fixed: number[] = [];
    let tooSmall = false;
    for (let t = 0; t < TRIES; t++) {
      const room = placeBoxesAndPlayer(rng, roomTopology(rng, rows, cols, walkSteps), numBoxes);
      if (room === null) {
        tooSmall = true;
        break;
      }
      fixed = room.map((v) => (v === Cell.player ? Cell.floor : v));
      const state = Uint8Array.from(room, (v) => (v === Cell.target ? Cell.box : v));
      result = reversePlay(state, fixed, cols, numBoxes, searchDepth);
      if (displacementOf(result.mapping, cols) > 0) break;
    }
    if (tooSmall || result === null) continue;
    const displacement = displacementOf(result.mapping, cols);
    if (displacement === 0) continue;
    const state = result.state;
    randomPlayerMoves(rng, state, fixed, cols, displacement === 1 ? 0.8 : 0.5);
    const boxes: number[] = [];
    state.forEach((v, i) => {
      if (v === Cell.box || v === Cell.boxOnTarget) boxes.push(i);
    });
    return { rows, cols, fixed, player: state.indexOf(Cell.player), boxes, displacement };
  }
  throw new TrajflowError(
    'ENV_GENERATION',
    `could not generate a ${rows}×${cols} Sokoban room with ${numBoxes} box(es) in ${MAX_GENERATIONS} attempts; use a larger room or fewer boxes.`,
  );
}

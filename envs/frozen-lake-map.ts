// FrozenLake map generation, RAGEN's generate_random_map (docs/algorithms.md §4.5): every tile is frozen with
// probability p (a hole otherwise — RAGEN's docstring calls p the hole probability, which is wrong), start
// and goal are random distinct tiles, and the whole map is redrawn until a DFS finds a path.
import type { Rng } from '../core/rng.js';

/** Gymnasium's tile letters: S start, F frozen, H hole, G goal. */
export type Tile = 'S' | 'F' | 'H' | 'G';

export interface LakeMap {
  readonly size: number;
  /** Row-major tiles, size × size. */
  readonly tiles: readonly Tile[];
  readonly start: number;
  readonly goal: number;
}

/** RAGEN's is_valid: a DFS from S over non-hole tiles that stops when it steps onto G. */
export function hasPath(tiles: readonly Tile[], size: number): boolean {
  const start = tiles.indexOf('S');
  const frontier = [start];
  const seen = new Set<number>();
  while (frontier.length > 0) {
    const cell = frontier.pop() as number;
    if (seen.has(cell)) continue;
    seen.add(cell);
    const [r, c] = [Math.floor(cell / size), cell % size];
    for (const [dr, dc] of [
      [1, 0],
      [0, 1],
      [-1, 0],
      [0, -1],
    ] as const) {
      const [nr, nc] = [r + dr, c + dc];
      if (nr < 0 || nr >= size || nc < 0 || nc >= size) continue;
      const next = nr * size + nc;
      if (tiles[next] === 'G') return true;
      if (tiles[next] !== 'H') frontier.push(next);
    }
  }
  return false;
}

export function generateLakeMap(rng: Rng, size: number, frozenProbability: number): LakeMap {
  for (;;) {
    const tiles: Tile[] = Array.from({ length: size * size }, () => (rng.chance(frozenProbability) ? 'F' : 'H'));
    const start = rng.int(size) * size + rng.int(size);
    const goal = rng.int(size) * size + rng.int(size);
    if (start === goal) continue;
    tiles[start] = 'S';
    tiles[goal] = 'G';
    if (hasPath(tiles, size)) return { size, tiles, start, goal };
  }
}

/** Gymnasium's action ids as (row, column) changes: 0 Left, 1 Down, 2 Right, 3 Up. */
const LAKE_MOVES: readonly (readonly [number, number])[] = [
  [0, -1],
  [1, 0],
  [0, 1],
  [-1, 0],
];

/**
 * The tile a move in `direction` (gymnasium's action id) leads to from `cell` on a size × size map: off the
 * map leaves the player in place (gymnasium clamps). The environment's move and the solvers' (bench
 * supervised's BFS labels) are this one function, so a label cannot disagree with what a move does.
 */
export function lakeMove(size: number, cell: number, direction: number): number {
  const [dr, dc] = LAKE_MOVES[direction] as readonly [number, number];
  const r = Math.min(Math.max(Math.floor(cell / size) + dr, 0), size - 1);
  const c = Math.min(Math.max((cell % size) + dc, 0), size - 1);
  return r * size + c;
}

/**
 * Steps from every tile to the goal over non-hole tiles (4-neighbour moves, as the player moves); holes and
 * tiles with no path get Infinity. For distance-based reward shaping and for tools.
 */
export function goalDistances(map: LakeMap): number[] {
  const { size, tiles, goal } = map;
  const distance = new Array<number>(size * size).fill(Infinity);
  distance[goal] = 0;
  const queue = [goal];
  for (let head = 0; head < queue.length; head++) {
    const cell = queue[head]!;
    const [r, c] = [Math.floor(cell / size), cell % size];
    for (const [dr, dc] of [
      [1, 0],
      [0, 1],
      [-1, 0],
      [0, -1],
    ] as const) {
      const [nr, nc] = [r + dr, c + dc];
      if (nr < 0 || nr >= size || nc < 0 || nc >= size) continue;
      const next = nr * size + nc;
      if (tiles[next] === 'H' || distance[next] !== Infinity) continue;
      distance[next] = distance[cell]! + 1;
      queue.push(next);
    }
  }
  return distance;
}

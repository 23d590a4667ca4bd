// Sokoban's movement rule, gym-sokoban's _push falling back to _move, as a pure function of the room's fixed
// layer and where the boxes are. The environment (sokoban.ts) and the solvers (bench supervised's BFS labels)
// both move with it, so a solver's "optimal" action is exactly what the environment does with that action.
import { Cell } from './sokoban-room.js';

/** The room's fixed layer (wall, floor, target), row-major. */
export interface SokobanLayout {
  readonly rows: number;
  readonly cols: number;
  readonly fixed: readonly number[];
}

/** Up, Down, Left, Right (SOKOBAN_ACTIONS' order) as (row, column) changes. */
const CHANGES: readonly (readonly [number, number])[] = [
  [-1, 0],
  [1, 0],
  [0, -1],
  [0, 1],
];

export interface PushOutcome {
  /** The player's cell after the action (unchanged when blocked). */
  readonly player: number;
  /** The box the action pushed, if it pushed one. */
  readonly pushed?: { readonly from: number; readonly to: number };
}

/**
 * One action (0 Up, 1 Down, 2 Left, 3 Right): push the adjacent box if the cell behind it is inside the room,
 * not a wall and not a box; otherwise step onto the adjacent cell if it is free; otherwise nothing.
 */
export function pushOutcome(layout: SokobanLayout, player: number, hasBox: (cell: number) => boolean, action: number): PushOutcome {
  const { rows, cols, fixed } = layout;
  const [dr, dc] = CHANGES[action] as readonly [number, number];
  const [nr, nc] = [Math.floor(player / cols) + dr, (player % cols) + dc];
  if (nr < 0 || nr >= rows || nc < 0 || nc >= cols) return { player };
  const next = nr * cols + nc;
  const [br, bc] = [nr + dr, nc + dc];
  if (hasBox(next) && br >= 0 && br < rows && bc >= 0 && bc < cols && isFree(fixed, hasBox, br * cols + bc)) return { player: next, pushed: { from: next, to: br * cols + bc } };
  return isFree(fixed, hasBox, next) ? { player: next } : { player };
}

const isFree = (fixed: readonly number[], hasBox: (cell: number) => boolean, cell: number): boolean => fixed[cell] !== Cell.wall && !hasBox(cell);

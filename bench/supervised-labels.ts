// BFS-optimal action labels for `trajflow bench supervised`: for a state of FrozenLake or Sokoban, the actions
// that lower the fewest-actions-to-success by one. Pure functions over the environments' own maps and movement
// rules (frozen-lake-map.ts, sokoban-push.ts), so a label never disagrees with what the environment does with
// the action. Actions are indices into the environment's actionVocabulary (FrozenLake: gymnasium's ids).
import { lakeMove, type LakeMap } from '../envs/frozen-lake-map.js';
import { pushOutcome, type SokobanLayout } from '../envs/sokoban-push.js';
import { Cell } from '../envs/sokoban-room.js';

/** Both grid puzzles have four moves. */
const ACTIONS = [0, 1, 2, 3] as const;

/**
 * FrozenLake (non-slippery): the optimal actions on `cell`, every move onto a tile one step closer to the goal
 * by `distances` (goalDistances(map), the environment's BFS from the goal; Infinity for holes and cut-off
 * tiles). Several when paths tie; none on the goal, a hole, or a tile with no path.
 */
export function lakeOptimalActions(map: LakeMap, distances: readonly number[], cell: number): number[] {
  const here = distances[cell]!;
  if (!Number.isFinite(here) || here === 0) return [];
  return ACTIONS.filter((a) => distances[lakeMove(map.size, cell, a)] === here - 1);
}

/** A Sokoban state: the player's cell and the boxes' cells (in any order). */
export interface SokobanState {
  readonly player: number;
  readonly boxes: readonly number[];
}

/** What one action does to a state (the environment's push rule). */
export function sokobanStep(layout: SokobanLayout, state: SokobanState, action: number): SokobanState {
  const outcome = pushOutcome(layout, state.player, (cell) => state.boxes.includes(cell), action);
  if (!outcome.pushed) return outcome.player === state.player ? state : { player: outcome.player, boxes: state.boxes };
  const { from, to } = outcome.pushed;
  return { player: outcome.player, boxes: state.boxes.map((b) => (b === from ? to : b)) };
}

export const isSolved = (layout: SokobanLayout, boxes: readonly number[]): boolean => boxes.every((b) => layout.fixed[b] === Cell.target);

/** Fewest actions to put every box on a target, for every state reachable from a start. */
export interface SokobanDistances {
  /** undefined for a state that was not reached from the start, or from which no sequence solves the room. */
  distance(state: SokobanState): number | undefined;
}

/**
 * BFS over the states reachable from `start` (solved states are not expanded: the episode ends there), then a
 * second BFS backwards from the solved states over the edges the first one found. Both are exact for every
 * reached state: any path from it to a solution runs through states reachable from it, all of which were
 * expanded. `maxStates` bounds the work for rooms with several boxes (a RangeError past it).
 */
export function sokobanDistances(layout: SokobanLayout, start: SokobanState, maxStates = 200_000): SokobanDistances {
  const cells = layout.rows * layout.cols;
  // A state as one number: player + cells·box₁ + cells²·box₂ … (boxes sorted), exact below 2^53.
  if (cells ** (start.boxes.length + 1) > Number.MAX_SAFE_INTEGER)
    throw new RangeError(`sokobanDistances: ${start.boxes.length} boxes in ${cells} cells do not fit a numeric state key`);
  const keyOf = (s: SokobanState): number => [...s.boxes].sort((a, b) => a - b).reduce((key, box, i) => key + box * cells ** (i + 1), s.player);
  const states: SokobanState[] = [start];
  const index = new Map<number, number>([[keyOf(start), 0]]);
  const predecessors: number[][] = [[]];
  for (let i = 0; i < states.length; i++) {
    const state = states[i]!;
    if (isSolved(layout, state.boxes)) continue;
    for (const action of ACTIONS) {
      const next = sokobanStep(layout, state, action);
      const key = keyOf(next);
      let j = index.get(key);
      if (j === undefined) {
        if (states.length >= maxStates) throw new RangeError(`sokobanDistances: more than ${maxStates} reachable states; raise maxStates or use fewer boxes`);
        j = states.length;
        index.set(key, j);
        states.push(next);
        predecessors.push([]);
      }
      if (j !== i) predecessors[j]!.push(i);
    }
  }
  const distance = new Array<number | undefined>(states.length).fill(undefined);
  const queue: number[] = [];
  states.forEach((s, i) => {
    if (isSolved(layout, s.boxes)) {
      distance[i] = 0;
      queue.push(i);
    }
  });
  for (let head = 0; head < queue.length; head++) {
    const i = queue[head]!;
    for (const p of predecessors[i]!) {
      if (distance[p] !== undefined) continue;
      distance[p] = distance[i]! + 1;
      queue.push(p);
    }
  }
  return {
    distance(state) {
      const i = index.get(keyOf(state));
      return i === undefined ? undefined : distance[i];
    },
  };
}

/** The optimal actions in `state`: every action into a state one action closer to solved (none if unsolvable or solved). */
export function sokobanOptimalActions(layout: SokobanLayout, distances: SokobanDistances, state: SokobanState): number[] {
  const here = distances.distance(state);
  if (here === undefined || here === 0) return [];
  return ACTIONS.filter((a) => distances.distance(sokobanStep(layout, state, a)) === here - 1);
}

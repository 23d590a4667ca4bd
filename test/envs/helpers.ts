// Shared helpers for the environment tests.
import { Cell } from '../../envs/sokoban-room.js';

/** Reads a Sokoban grid in RAGEN's symbols into a room for SokobanEnv.loadRoom. */
export function sokobanRoom(grid: string): { rows: number; cols: number; fixed: number[]; player: number; boxes: number[] } {
  const lines = grid
    .trim()
    .split('\n')
    .map((l) => l.trim());
  const rows = lines.length;
  const cols = (lines[0] ?? '').length;
  const fixed: number[] = [];
  const boxes: number[] = [];
  let player = -1;
  [...lines.join('')].forEach((ch, i) => {
    fixed.push(ch === '#' ? Cell.wall : 'O√S'.includes(ch) ? Cell.target : Cell.floor);
    if ('X√'.includes(ch)) boxes.push(i);
    if ('PS'.includes(ch)) player = i;
  });
  return { rows, cols, fixed, player, boxes };
}

/** A BFS over (player, boxes) with push moves: the length of a shortest solution, or -1 if none. */
export function solveSokoban(room: { rows: number; cols: number; fixed: readonly number[]; player: number; boxes: readonly number[] }, maxStates = 200_000): number {
  const { cols, fixed } = room;
  const moves = [-cols, cols, -1, 1];
  const key = (player: number, boxes: readonly number[]): string => `${player}:${[...boxes].sort((a, b) => a - b).join(',')}`;
  const solved = (boxes: readonly number[]): boolean => boxes.every((b) => fixed[b] === Cell.target);
  if (solved(room.boxes)) return 0;
  let frontier: [number, number[]][] = [[room.player, [...room.boxes]]];
  const seen = new Set([key(room.player, room.boxes)]);
  for (let depth = 1; frontier.length > 0 && seen.size < maxStates; depth++) {
    const next: [number, number[]][] = [];
    for (const [player, boxes] of frontier) {
      for (const d of moves) {
        const to = player + d;
        if (fixed[to] === Cell.wall) continue;
        let nextBoxes = boxes;
        if (boxes.includes(to)) {
          const beyond = to + d;
          if (fixed[beyond] === Cell.wall || boxes.includes(beyond)) continue;
          nextBoxes = boxes.map((b) => (b === to ? beyond : b));
        }
        const k = key(to, nextBoxes);
        if (seen.has(k)) continue;
        if (solved(nextBoxes)) return depth;
        seen.add(k);
        next.push([to, nextBoxes]);
      }
    }
    frontier = next;
  }
  return -1;
}

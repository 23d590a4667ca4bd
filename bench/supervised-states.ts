// Labelled states for `trajflow bench supervised`: a state of a task (a seed's map or room), its observation as
// the environment renders it, and its BFS-optimal actions (supervised-labels.ts). The environments generate the
// tasks and render the states; nothing here re-implements a map, a room or a move.
import { ConfigError } from '../core/errors.js';
import type { Environment } from '../envs/contract.js';
import { FrozenLakeEnv, type FrozenLakeOptions } from '../envs/frozen-lake.js';
import { goalDistances, type LakeMap } from '../envs/frozen-lake-map.js';
import type { Rng } from '../core/rng.js';
import { SokobanEnv, type SokobanOptions } from '../envs/sokoban.js';
import { lakeOptimalActions, sokobanDistances, sokobanOptimalActions, sokobanStep, type SokobanState } from './supervised-labels.js';

/** The environments with a BFS labeller. */
export const SUPERVISED_ENVS = ['FrozenLake', 'Sokoban'] as const;
export type SupervisedEnv = (typeof SUPERVISED_ENVS)[number];

export interface LabelledState {
  readonly observation: string;
  /** Indices into actionWords of the optimal actions (never empty). */
  readonly optimal: readonly number[];
}

export interface SupervisedTask {
  readonly actionWords: readonly string[];
  /** Actions an episode may take: the turn limits (and Sokoban's maxSteps). */
  readonly actionBudget: number;
  /** A fresh environment with the same options, for held-out episodes. */
  createEnv(): Environment;
  /** A labelled state of the task of `seed`; which state comes from `rng`. */
  draw(seed: number, rng: Rng): LabelledState;
  /** The fewest actions that solve the task of `seed` from its start (Infinity when none do). */
  startDistance(seed: number): number;
}

export function supervisedTask(env: SupervisedEnv, options: Record<string, unknown>): SupervisedTask {
  return env === 'FrozenLake' ? frozenLakeTask(options as Partial<FrozenLakeOptions>) : sokobanTask(options as Partial<SokobanOptions>);
}

const budgetOf = (env: { maxTurns: number; maxActionsPerTurn: number; maxActionsPerEpisode: number }): number =>
  Math.min(env.maxActionsPerEpisode, env.maxTurns * env.maxActionsPerTurn);

function labelled(observation: string, optimal: readonly number[], where: string): LabelledState {
  // A drawn state always has a path to success, so an empty label would be a labeller bug, not a hard state.
  if (optimal.length === 0) throw new Error(`bench supervised: no optimal action in ${where}:\n${observation}`);
  return { observation, optimal };
}

function frozenLakeTask(options: Partial<FrozenLakeOptions>): SupervisedTask {
  const lake = new FrozenLakeEnv(options);
  // BFS labels are optimal only when a move goes where it is meant to.
  if (lake.options.slippery) throw new ConfigError('bench supervised: FrozenLake needs slippery: false (BFS labels assume moves go where they are meant to)');
  return {
    actionWords: lake.actionVocabulary,
    actionBudget: budgetOf(lake),
    createEnv: () => new FrozenLakeEnv(options),
    draw(seed, rng) {
      lake.reset(seed);
      const map = lake.lake;
      const distances = goalDistances(map);
      // Any tile with a path to the goal, not only the start: the policy must act well wherever its moves lead.
      const cells = map.tiles.map((_, cell) => cell).filter((cell) => cell !== map.goal && Number.isFinite(distances[cell]));
      const cell = cells[rng.int(cells.length)]!;
      lake.loadMap(withStartAt(map, cell), seed);
      return labelled(lake.render(), lakeOptimalActions(map, distances, cell), `FrozenLake seed ${seed}`);
    },
    startDistance(seed) {
      lake.reset(seed);
      return goalDistances(lake.lake)[lake.lake.start]!;
    },
  };
}

/** The map's rows in gymnasium's letters with the start moved to `cell`: the start renders as frozen ice, so the observation is the map with the player on `cell`. */
function withStartAt(map: LakeMap, cell: number): string[] {
  const tiles = map.tiles.map((tile, i) => (i === cell ? 'S' : tile === 'S' ? 'F' : tile));
  return Array.from({ length: map.size }, (_, r) => tiles.slice(r * map.size, (r + 1) * map.size).join(''));
}

/** Random moves after the generated start, at most (0–5 drawn per state). */
const SOKOBAN_WALK = 5;

function sokobanTask(options: Partial<SokobanOptions>): SupervisedTask {
  const sokoban = new SokobanEnv(options);
  const startOf = (seed: number) => {
    sokoban.reset(seed);
    const room = sokoban.room;
    const start: SokobanState = { player: room.player, boxes: room.boxes };
    return { room, start, distances: sokobanDistances(room, start) };
  };
  return {
    actionWords: sokoban.actionVocabulary,
    actionBudget: Math.min(budgetOf(sokoban), sokoban.options.maxSteps),
    createEnv: () => new SokobanEnv(options),
    draw(seed, rng) {
      const { room, start, distances } = startOf(seed);
      // The generated start and up to SOKOBAN_WALK random moves after it, skipping moves into a solved or dead
      // state: the states a policy meets early in an episode, off the start when its first moves are not optimal.
      let state = start;
      const walk = rng.int(SOKOBAN_WALK + 1);
      for (let i = 0; i < walk; i++) {
        const next = sokobanStep(room, state, rng.int(4));
        const distance = distances.distance(next);
        if (distance !== undefined && distance > 0) state = next;
      }
      sokoban.loadRoom({ fixed: room.fixed, player: state.player, boxes: state.boxes }, seed);
      return labelled(sokoban.render(), sokobanOptimalActions(room, distances, state), `Sokoban seed ${seed}`);
    },
    startDistance(seed) {
      const { start, distances } = startOf(seed);
      return distances.distance(start) ?? Infinity;
    },
  };
}

// FrozenLake, RAGEN v1 (docs/algorithms.md §4.5, ragen/env/frozen_lake over gymnasium's FrozenLake): a random
// 4×4 map per seed, actions Left/Down/Right/Up, reward 1 on reaching the goal, the episode ends in a hole
// or at the goal. Slippery ice follows gymnasium: the intended direction with probability successRate,
// each perpendicular direction with (1 − successRate)/2 (1/3 each by default).
import type { EnvId, TurnLimits } from './contract.js';
import { DiscreteTurnEnv, type ActionOutcome } from './discrete-env.js';
import { generateLakeMap, goalDistances, lakeMove, type LakeMap } from './frozen-lake-map.js';
import { booleanOption, integerOption, probabilityOption, rejectUnknownOptions, signedOption, turnLimits } from './option-checks.js';
import { Rng, RngStream } from '../core/rng.js';

export interface FrozenLakeOptions extends TurnLimits {
  /** Side of the square map (RAGEN: 4). */
  size: number;
  /** Probability that a tile is frozen (RAGEN v1: 0.8; RAGEN-2: 0.9). */
  frozenProbability: number;
  /** Slippery ice (RAGEN: true). */
  slippery: boolean;
  /** With slippery ice, the probability of moving the intended way (gymnasium: 1/3; RAGEN-2: 0.8). */
  successRate: number;
  /**
   * Ours, off (0) by default: potential-based reward shaping (Ng, Harada & Russell 1999) with weight c:
   * every move adds c·(Φ(after) − Φ(before)), Φ(tile) = 1 − d/size² for a tile d steps from the goal and 0
   * for holes. Over an episode it sums to c·(Φ(last tile) − Φ(start)), so among episodes of one map it ranks
   * goal > ending near the goal > ending far > hole, and it does not change which policy is optimal. It
   * uses what the environment knows (the map's shortest paths): a privileged signal, to be reported as such.
   */
  distanceShaping: number;
  /**
   * γ of the shaping term c·(γ·Φ(after) − Φ(before)) (default 1). Below 1 a move that leaves the player in
   * place (a wall bump) costs c·(1 − γ)·Φ; policy-invariant for returns discounted with the same γ.
   */
  shapingDiscount: number;
  /**
   * Ours, 0 by default (gymnasium and RAGEN: a hole pays nothing): the reward for falling into a hole.
   * Below 0 it tells "fell" from "ran out of turns", which a success-only reward cannot: most of what a
   * policy must learn on random maps is to avoid holes, and groups where no rollout reached the goal
   * carry that signal only with a penalty (docs/results/frozenlake.md).
   */
  holeReward: number;
  /**
   * Ours, 0 by default (gymnasium clamps silently): the reward for a move that leaves the player in place
   * (walking into the edge). With a hole penalty and no cost here, "bump the edge until the turns run out"
   * is the safest policy and RL finds it (docs/results/frozenlake.md).
   */
  wallBumpReward: number;
}

/** RAGEN v1 defaults: max_turn 5, max_actions_per_turn 5, max_actions_per_traj 10 (docs/algorithms.md §4.4). */
export const FROZEN_LAKE_DEFAULTS: Readonly<FrozenLakeOptions> = {
  size: 4,
  frozenProbability: 0.8,
  slippery: true,
  successRate: 1 / 3,
  distanceShaping: 0,
  shapingDiscount: 1,
  holeReward: 0,
  wallBumpReward: 0,
  maxTurns: 5,
  maxActionsPerTurn: 5,
  maxActionsPerEpisode: 10,
};

export const FROZEN_LAKE_ACTIONS = ['Left', 'Down', 'Right', 'Up'] as const;
export type FrozenLakeAction = (typeof FROZEN_LAKE_ACTIONS)[number];

/** Gymnasium's action ids: 0 Left, 1 Down, 2 Right, 3 Up; (a ± 1) mod 4 are the perpendicular ones. */
const GYM_ACTION: Record<FrozenLakeAction, number> = { Left: 0, Down: 1, Right: 2, Up: 3 };

/** RAGEN's grid_lookup: P player, _ frozen (start too), O hole, G goal, X player in hole, √ player on goal. */
export const FROZEN_LAKE_SYMBOLS = { player: 'P', frozen: '_', hole: 'O', goal: 'G', playerInHole: 'X', playerOnGoal: '√' } as const;

export class FrozenLakeEnv extends DiscreteTurnEnv<FrozenLakeAction> {
  readonly id: EnvId = { name: 'FrozenLake', version: 'v1' };
  readonly actionVocabulary = FROZEN_LAKE_ACTIONS;
  readonly options: Readonly<FrozenLakeOptions>;
  private map: LakeMap = { size: 1, tiles: ['S'], start: 0, goal: 0 };
  private player = 0;
  private slipRng = new Rng(0);
  /** Φ of every tile for distanceShaping (empty when it is off). */
  private potential: number[] = [];

  constructor(options: Partial<FrozenLakeOptions> = {}) {
    rejectUnknownOptions('FrozenLake', options, Object.keys(FROZEN_LAKE_DEFAULTS));
    const o = { ...FROZEN_LAKE_DEFAULTS, ...options };
    super(turnLimits('FrozenLake', o));
    integerOption('FrozenLake', 'size', o.size, 2, 16);
    // Below ~0.3 a map with a path is rare enough that generation would spin for long.
    probabilityOption('FrozenLake', 'frozenProbability', o.frozenProbability, 0.3, 1);
    booleanOption('FrozenLake', 'slippery', o.slippery);
    probabilityOption('FrozenLake', 'successRate', o.successRate);
    signedOption('FrozenLake', 'distanceShaping', o.distanceShaping, 1, '0 = off, e.g. 1');
    probabilityOption('FrozenLake', 'shapingDiscount', o.shapingDiscount);
    signedOption('FrozenLake', 'holeReward', o.holeReward, -1, "0 = gymnasium's, e.g. -1");
    signedOption('FrozenLake', 'wallBumpReward', o.wallBumpReward, -1, "0 = gymnasium's, e.g. -0.1");
    this.options = Object.freeze(o);
  }

  /** The current map (for tests and tools). */
  get lake(): LakeMap {
    return this.map;
  }

  /** The player's tile index, row-major. */
  get playerCell(): number {
    return this.player;
  }

  /**
   * Starts an episode on a given map in gymnasium's letters (e.g. ['SFFF', 'FHFH', 'FFFH', 'HFFG']);
   * slips still come from Rng(seed). For tests and hand-made tasks.
   */
  loadMap(rows: readonly string[], seed = 0): void {
    const size = this.options.size;
    const tiles = rows.join('').split('') as Tile[];
    if (rows.length !== size || tiles.length !== size * size || !tiles.every((t) => 'SFHG'.includes(t))) {
      throw new RangeError(`loadMap: expected ${size} rows of ${size} letters from S, F, H, G`);
    }
    const start = tiles.indexOf('S');
    const goal = tiles.indexOf('G');
    if (start < 0 || goal < 0) throw new RangeError('loadMap: the map needs an S and a G');
    this.reset(seed);
    this.map = { size, tiles, start, goal };
    this.player = start;
    this.potential = this.potentialsOf(this.map);
  }

  private potentialsOf(map: LakeMap): number[] {
    if (this.options.distanceShaping === 0) return [];
    const cells = map.size * map.size;
    return goalDistances(map).map((d) => (d === Infinity ? 0 : 1 - d / cells));
  }

  /** The shaping term of a move from `before` to the current tile (0 when shaping is off). */
  private shaping(before: number): number {
    if (this.potential.length === 0) return 0;
    return this.options.distanceShaping * (this.options.shapingDiscount * this.potential[this.player]! - this.potential[before]!);
  }

  protected startEpisode(seed: number): void {
    this.map = generateLakeMap(new Rng(seed, RngStream.task), this.options.size, this.options.frozenProbability);
    this.player = this.map.start;
    this.slipRng = new Rng(seed, RngStream.dynamics);
    this.potential = this.potentialsOf(this.map);
  }

  /** The direction actually taken: gymnasium's categorical draw over [a−1, a, a+1] (mod 4). */
  private direction(action: FrozenLakeAction): number {
    const a = GYM_ACTION[action];
    if (!this.options.slippery) return a;
    const side = (1 - this.options.successRate) / 2;
    const u = this.slipRng.next();
    if (u < side) return (a + 3) % 4;
    if (u < side + this.options.successRate) return a;
    return (a + 1) % 4;
  }

  protected applyAction(action: FrozenLakeAction): ActionOutcome {
    const { size, tiles } = this.map;
    const before = this.player;
    // Moving off the map leaves the player in place (gymnasium clamps).
    this.player = lakeMove(size, this.player, this.direction(action));
    const tile = tiles[this.player];
    const shaped = this.shaping(before);
    if (tile === 'G') return { reward: 1 + shaped, terminated: true, endReason: 'goal' };
    if (tile === 'H') return { reward: this.options.holeReward + shaped, terminated: true, endReason: 'hole' };
    return { reward: shaped + (this.player === before ? this.options.wallBumpReward : 0), terminated: false };
  }

  protected isSuccess(): boolean {
    return this.map.tiles[this.player] === 'G';
  }

  protected currentStateKey(): string {
    return this.render();
  }

  render(): string {
    const { size, tiles } = this.map;
    const s = FROZEN_LAKE_SYMBOLS;
    const symbol = (tile: Tile, cell: number): string => {
      if (cell === this.player) return tile === 'H' ? s.playerInHole : tile === 'G' ? s.playerOnGoal : s.player;
      return tile === 'H' ? s.hole : tile === 'G' ? s.goal : s.frozen;
    };
    const rows: string[] = [];
    for (let r = 0; r < size; r++) {
      rows.push(
        tiles
          .slice(r * size, (r + 1) * size)
          .map((tile, c) => symbol(tile, r * size + c))
          .join(''),
      );
    }
    return rows.join('\n');
  }

  systemPrompt(): string {
    const s = FROZEN_LAKE_SYMBOLS;
    const slip = this.options.slippery
      ? `The ice is slippery: you move in the intended direction with probability ${round(this.options.successRate)}, otherwise to one of the two perpendicular directions.`
      : 'The ice is not slippery: you always move in the intended direction.';
    return [
      'You are solving the FrozenLake puzzle. Avoid the holes and walk to the goal.',
      slip,
      'Moving off the edge of the map leaves you where you are. Reaching the goal gives reward 1; falling into a hole ends the episode.',
      `Symbols: ${s.player} player, ${s.frozen} frozen tile, ${s.hole} hole, ${s.goal} goal, ${s.playerInHole} player in hole, ${s.playerOnGoal} player on goal.`,
      `Actions: ${FROZEN_LAKE_ACTIONS.join(', ')}. You may give up to ${this.maxActionsPerTurn} actions per turn, separated by " || ".`,
      'Answer format: <think>your reasoning</think><answer>Left || Up</answer>',
    ].join('\n');
  }
}

type Tile = LakeMap['tiles'][number];

function round(x: number): string {
  return String(Math.round(x * 1000) / 1000);
}

// Sokoban, RAGEN v1's SimpleSokoban over gym-sokoban (docs/algorithms.md §4.5): a 6×6 room with one box,
// generated per seed by sokoban-room.ts. Actions Up/Down/Left/Right are gym-sokoban push actions: push
// the adjacent box if the cell behind it is free, otherwise move if the cell is free, otherwise nothing.
// Rewards (gym-sokoban): −0.1 per action, +1 when a box reaches a target, −1 when one leaves a target,
// +10 when all boxes are on targets. Terminated when all boxes are on targets; truncated at maxSteps.
import type { EnvId, TurnLimits } from './contract.js';
import { DiscreteTurnEnv, type ActionOutcome } from './discrete-env.js';
import { integerOption, rejectUnknownOptions, turnLimits } from './option-checks.js';
import { Rng, RngStream } from '../core/rng.js';
import { Cell, generateRoom, type SokobanRoom } from './sokoban-room.js';
import { pushOutcome } from './sokoban-push.js';

export interface SokobanOptions extends TurnLimits {
  rows: number;
  cols: number;
  numBoxes: number;
  /** Depth of the reverse-play search (RAGEN's SokobanEnvConfig default 300; verl-agent uses 30). */
  searchDepth: number;
  /** gym-sokoban's max_steps: primitive actions before truncation (RAGEN SimpleSokoban: 100). */
  maxSteps: number;
}

/** RAGEN SimpleSokoban with v1's turn limits: max_turn 5, 5 actions per turn, 10 per episode. */
export const SOKOBAN_DEFAULTS: Readonly<SokobanOptions> = {
  rows: 6,
  cols: 6,
  numBoxes: 1,
  searchDepth: 300,
  maxSteps: 100,
  maxTurns: 5,
  maxActionsPerTurn: 5,
  maxActionsPerEpisode: 10,
};

export const SOKOBAN_ACTIONS = ['Up', 'Down', 'Left', 'Right'] as const;
export type SokobanAction = (typeof SOKOBAN_ACTIONS)[number];
/** An action's index in SOKOBAN_ACTIONS, the order pushOutcome takes. */
const ACTION_INDEX: Record<SokobanAction, number> = { Up: 0, Down: 1, Left: 2, Right: 3 };

/** gym-sokoban's rewards. */
export const SOKOBAN_REWARDS = { step: -0.1, boxOnTarget: 1, boxOffTarget: -1, finished: 10 } as const;

/** RAGEN's grid_lookup: # wall, _ empty, O target, √ box on target, X box, P player, S player on target. */
export const SOKOBAN_SYMBOLS = { wall: '#', empty: '_', target: 'O', boxOnTarget: '√', box: 'X', player: 'P', playerOnTarget: 'S' } as const;

export class SokobanEnv extends DiscreteTurnEnv<SokobanAction> {
  readonly id: EnvId = { name: 'Sokoban', version: 'v1' };
  readonly actionVocabulary = SOKOBAN_ACTIONS;
  readonly options: Readonly<SokobanOptions>;
  private fixed: readonly number[] = [Cell.wall];
  private player = 0;
  private boxes = new Set<number>();
  private envSteps = 0;
  private boxesOnTarget = 0;

  constructor(options: Partial<SokobanOptions> = {}) {
    rejectUnknownOptions('Sokoban', options, Object.keys(SOKOBAN_DEFAULTS));
    const o = { ...SOKOBAN_DEFAULTS, ...options };
    super(turnLimits('Sokoban', o));
    integerOption('Sokoban', 'rows', o.rows, 5, 16);
    integerOption('Sokoban', 'cols', o.cols, 5, 16);
    integerOption('Sokoban', 'numBoxes', o.numBoxes, 1, Math.max(1, Math.floor(((o.rows - 2) * (o.cols - 2)) / 4)));
    integerOption('Sokoban', 'searchDepth', o.searchDepth, 2, 1000);
    integerOption('Sokoban', 'maxSteps', o.maxSteps, 1, 100_000);
    this.options = Object.freeze(o);
  }

  /** Loads a given room (tests use it to set up exact positions); the episode restarts from it. */
  loadRoom(room: Pick<SokobanRoom, 'fixed' | 'player' | 'boxes'>, seed = 0): void {
    const { rows, cols } = this.options;
    if (room.fixed.length !== rows * cols) throw new RangeError(`loadRoom: the room has ${room.fixed.length} cells, expected ${rows}×${cols}`);
    this.reset(seed);
    this.setRoom(room);
  }

  private setRoom(room: Pick<SokobanRoom, 'fixed' | 'player' | 'boxes'>): void {
    this.fixed = room.fixed;
    this.player = room.player;
    this.boxes = new Set(room.boxes);
    this.envSteps = 0;
    this.boxesOnTarget = this.countBoxesOnTarget();
  }

  /** The current room (for tests and tools). */
  get room(): Pick<SokobanRoom, 'rows' | 'cols' | 'fixed' | 'player' | 'boxes'> {
    return { rows: this.options.rows, cols: this.options.cols, fixed: this.fixed, player: this.player, boxes: [...this.boxes].sort((a, b) => a - b) };
  }

  protected startEpisode(seed: number): void {
    const { rows, cols, numBoxes, searchDepth } = this.options;
    this.setRoom(generateRoom(new Rng(seed, RngStream.task), { rows, cols, numBoxes, searchDepth }));
    // gym-sokoban starts the count at 0 (reset sets boxes_on_target = 0); generated boxes are off target.
  }

  /** Made once: pushOutcome asks it for every action. */
  private readonly hasBox = (cell: number): boolean => this.boxes.has(cell);

  private countBoxesOnTarget(): number {
    let n = 0;
    for (const b of this.boxes) if (this.fixed[b] === Cell.target) n += 1;
    return n;
  }

  /** gym-sokoban's _push, falling back to _move (sokoban-push.ts). */
  private push(action: SokobanAction): void {
    const { rows, cols } = this.options;
    const outcome = pushOutcome({ rows, cols, fixed: this.fixed }, this.player, this.hasBox, ACTION_INDEX[action]);
    if (outcome.pushed) {
      this.boxes.delete(outcome.pushed.from);
      this.boxes.add(outcome.pushed.to);
    }
    this.player = outcome.player;
  }

  protected applyAction(action: SokobanAction): ActionOutcome {
    this.envSteps += 1;
    this.push(action);
    // gym-sokoban's _calc_reward: ±1 on a change of the count, +10 when all are on targets.
    let reward: number = SOKOBAN_REWARDS.step;
    const onTarget = this.countBoxesOnTarget();
    if (onTarget > this.boxesOnTarget) reward += SOKOBAN_REWARDS.boxOnTarget;
    else if (onTarget < this.boxesOnTarget) reward += SOKOBAN_REWARDS.boxOffTarget;
    const solved = onTarget === this.boxes.size;
    if (solved) reward += SOKOBAN_REWARDS.finished;
    this.boxesOnTarget = onTarget;
    if (solved) return { reward, terminated: true, endReason: 'solved' };
    if (this.envSteps >= this.options.maxSteps) return { reward, terminated: false, truncated: true, endReason: 'max-steps' };
    return { reward, terminated: false };
  }

  protected isSuccess(): boolean {
    return this.countBoxesOnTarget() === this.boxes.size;
  }

  protected override stateMetrics(): Record<string, number> {
    return { boxesOnTarget: this.boxesOnTarget };
  }

  protected currentStateKey(): string {
    return this.render();
  }

  render(): string {
    const { rows, cols } = this.options;
    const s = SOKOBAN_SYMBOLS;
    const lines: string[] = [];
    for (let r = 0; r < rows; r++) {
      let line = '';
      for (let c = 0; c < cols; c++) {
        const cell = r * cols + c;
        const target = this.fixed[cell] === Cell.target;
        if (this.fixed[cell] === Cell.wall) line += s.wall;
        else if (cell === this.player) line += target ? s.playerOnTarget : s.player;
        else if (this.boxes.has(cell)) line += target ? s.boxOnTarget : s.box;
        else line += target ? s.target : s.empty;
      }
      lines.push(line);
    }
    return lines.join('\n');
  }

  systemPrompt(): string {
    const s = SOKOBAN_SYMBOLS;
    return [
      'You are solving the Sokoban puzzle. You are the player and you need to push all boxes to targets.',
      'When you are right next to a box, you can push it by moving in the same direction. You cannot push a box through a wall, and you cannot pull a box.',
      `Symbols: ${s.wall} wall, ${s.empty} empty, ${s.target} target, ${s.boxOnTarget} box on target, ${s.box} box, ${s.player} player, ${s.playerOnTarget} player on target.`,
      `Actions: ${SOKOBAN_ACTIONS.join(', ')}. You may give up to ${this.maxActionsPerTurn} actions per turn, separated by " || ".`,
      'Rewards: -0.1 per action, +1 when a box reaches a target, -1 when a box leaves a target, +10 when all boxes are on targets.',
      'Answer format: <think>your reasoning</think><answer>Right || Right || Up</answer>',
    ].join('\n');
  }
}

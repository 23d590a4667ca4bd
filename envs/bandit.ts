// Two-armed bandit, RAGEN v1 (docs/algorithms.md §4.5, ragen/env/bandit): one turn, one pull. The low arm always
// pays loArmScore; the high arm pays 1.0 with probability 0.25, else 0.0. The arm order shown to the agent
// is swapped at random on every reset. Success = pulling the high arm.
import type { EnvId, TurnLimits } from './contract.js';
import { DiscreteTurnEnv, type ActionOutcome } from './discrete-env.js';
import { integerOption, nameOption, probabilityOption, rejectUnknownOptions, turnLimits } from './option-checks.js';
import { Rng, RngStream } from '../core/rng.js';
import { ConfigError } from '../core/errors.js';

export interface BanditOptions extends TurnLimits {
  /** Name of the low arm (RAGEN's train config: "Phoenix"; BanditTest uses "Trader"). */
  loArmName: string;
  /** Name of the high arm (RAGEN's train config: "Dragon"; BanditTest uses "Librarian"). */
  hiArmName: string;
  /** The low arm's fixed reward: 0.1 in RAGEN's code (the paper's text says 0.15). */
  loArmScore: number;
  /** Probability that the high arm pays hiArmHighScore (0.25). */
  hiArmHighProbability: number;
  /**
   * Shifts the seed of the high arm's reward draw (not of the arm order). RAGEN adds a per-instance
   * counter to the seed so the G rollouts of one group draw different rewards; an actor may pass the
   * rollout's index within its group here for the same effect, and stays deterministic.
   */
  rewardSeedOffset: number;
}

export const BANDIT_DEFAULTS: Readonly<BanditOptions> = {
  loArmName: 'Phoenix',
  hiArmName: 'Dragon',
  loArmScore: 0.1,
  hiArmHighProbability: 0.25,
  rewardSeedOffset: 0,
  maxTurns: 1,
  maxActionsPerTurn: 1,
  maxActionsPerEpisode: 1,
};

const HI_ARM_HIGH_SCORE = 1.0;
const HI_ARM_LOW_SCORE = 0.0;

/** Python's str(float): 1.0 -> "1.0", 0.1 -> "0.1" (the observation text RAGEN produces). */
function pythonFloat(x: number): string {
  return Number.isInteger(x) ? x.toFixed(1) : String(x);
}

export class BanditEnv extends DiscreteTurnEnv<string> {
  readonly id: EnvId = { name: 'Bandit', version: 'v1' };
  readonly options: Readonly<BanditOptions>;
  /** The arm names in the order shown this episode. */
  private arms: [string, string];
  private rewardRng = new Rng(0);
  private pulled: string | null = null;
  private text = '';

  constructor(options: Partial<BanditOptions> = {}) {
    rejectUnknownOptions('Bandit', options, Object.keys(BANDIT_DEFAULTS));
    const o = { ...BANDIT_DEFAULTS, ...options };
    super(turnLimits('Bandit', o));
    nameOption('Bandit', 'loArmName', o.loArmName);
    nameOption('Bandit', 'hiArmName', o.hiArmName);
    if (o.loArmName.toLowerCase() === o.hiArmName.toLowerCase()) {
      throw new ConfigError(`Bandit: loArmName and hiArmName are both '${o.loArmName}'; give the arms different names.`);
    }
    probabilityOption('Bandit', 'loArmScore', o.loArmScore, -1000, 1000);
    probabilityOption('Bandit', 'hiArmHighProbability', o.hiArmHighProbability);
    integerOption('Bandit', 'rewardSeedOffset', o.rewardSeedOffset, 0, 1_000_000);
    this.options = Object.freeze(o);
    this.arms = [o.loArmName, o.hiArmName];
  }

  /** Both arm names, sorted, so the vocabulary does not reveal which arm is which. */
  get actionVocabulary(): readonly string[] {
    return [this.options.loArmName, this.options.hiArmName].sort();
  }

  protected startEpisode(seed: number): void {
    const taskRng = new Rng(seed, RngStream.task);
    const { loArmName: lo, hiArmName: hi } = this.options;
    this.arms = taskRng.chance(0.5) ? [lo, hi] : [hi, lo];
    // The offset picks another stream of the same seed, so it never collides with a neighbouring seed.
    this.rewardRng = new Rng(seed, RngStream.dynamics + 16 * this.options.rewardSeedOffset);
    this.pulled = null;
    const [a, b] = this.arms;
    // RAGEN's INIT_PROMPT, with the arms in this episode's order.
    this.text = [
      'You are playing a bandit game. Goal: Maximize your total reward by choosing which arm to pull.',
      'Game Rules:',
      `1. There are 2 arms, named ${a} and ${b}`,
      '2. Each arm has its own reward distribution, related to their names.',
      "3. Analyze the symbolic meaning of each arm's name to guess how their reward distribution might behave.",
      `4. Based on the symbolic meaning of their names, which arm do you think is more likely to give higher rewards on average? Choose between ${a} and ${b}, and output like <answer> ${a} </answer> or <answer> ${b} </answer>.`,
    ].join('\n');
  }

  protected applyAction(arm: string): ActionOutcome {
    const reward = arm === this.options.loArmName ? this.options.loArmScore : this.rewardRng.chance(this.options.hiArmHighProbability) ? HI_ARM_HIGH_SCORE : HI_ARM_LOW_SCORE;
    this.pulled = arm;
    this.text = `${arm}: ${pythonFloat(reward)} points`;
    return { reward, terminated: true, endReason: arm === this.options.hiArmName ? 'pulled-hi-arm' : 'pulled-lo-arm' };
  }

  protected isSuccess(): boolean {
    return this.pulled === this.options.hiArmName;
  }

  protected currentStateKey(): string {
    return this.pulled === null ? `arms:${this.arms.join('|')}` : `pulled:${this.pulled}`;
  }

  render(): string {
    return this.text;
  }

  systemPrompt(): string {
    const [a, b] = this.actionVocabulary;
    return [
      'You are playing a two-armed bandit game: pull one arm once and collect its reward.',
      `The arms are named ${a} and ${b}. Each arm has its own reward distribution, related to its name;`,
      'infer from the symbolism of the names which arm pays more on average.',
      `Answer with exactly one arm name, e.g. <think>your reasoning</think><answer>${a}</answer> or <answer>${b}</answer>.`,
    ].join('\n');
  }
}

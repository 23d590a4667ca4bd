// What `trajflow train` runs by default per environment: settings measured to learn on 2 CPU cores
// (see README "Learning results"). Flags override each field. ToolUse is not here: its actions are
// multi-token calculator expressions, which the small policy's reply vocabulary cannot generate.
import type { PolicyModelConfig } from '../../learner/model/config.js';
import type { OptimizerConfig } from '../../learner/train/config.js';
import type { PolicyLossConfig } from '../../learner/loss/index.js';

export interface TrainPreset {
  readonly envOptions: Record<string, unknown>;
  readonly estimator: string;
  readonly filters: readonly string[];
  readonly groups: number;
  readonly groupSize: number;
  readonly learningRate: number;
  /** Model shape and optimiser/loss settings beyond the defaults (read by `trajflow bench learning`). */
  readonly model?: Partial<Omit<PolicyModelConfig, 'vocabSize'>>;
  readonly optimizer?: Partial<OptimizerConfig>;
  readonly loss?: Partial<PolicyLossConfig>;
  /** Options of the preset's estimator (e.g. GiGPO's gamma, omega). */
  readonly estimatorOptions?: Record<string, unknown>;
}

export const TRAIN_PRESETS: Record<string, TrainPreset> = {
  // Non-slippery 4×4, one action per turn over up to 10 turns: the policy sees the map after every move.
  FrozenLake: { envOptions: { slippery: false, maxActionsPerTurn: 1, maxTurns: 10, maxActionsPerEpisode: 10 }, estimator: 'gigpo', filters: [], groups: 8, groupSize: 8, learningRate: 3e-3 },
  Sokoban: { envOptions: { maxActionsPerTurn: 1, maxTurns: 10, maxActionsPerEpisode: 10 }, estimator: 'gigpo', filters: [], groups: 8, groupSize: 8, learningRate: 3e-3 },
  // Group-normalised GRPO favours Bandit's low-variance arm; mean-centred Dr. GRPO prefers the higher mean.
  Bandit: { envOptions: {}, estimator: 'dr_grpo', filters: [], groups: 8, groupSize: 8, learningRate: 1e-3 },
};

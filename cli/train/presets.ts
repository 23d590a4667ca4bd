// What `trajflow train` runs by default per environment: the best settings measured on 2 CPU cores
// (see docs/results/learning.md). `trajflow bench learning`
// and `trajflow train` read every field (train hands model, optimizer and loss to the learner, the model to
// the actors for their version 0, and estimatorOptions to the processors). Flags override what they name. ToolUse is not here: its actions are multi-token calculator
// expressions, which the small policy's reply vocabulary cannot generate.
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

/** The policy shape for fully observed grid puzzles. */
const GRID_POLICY = { attentionSpan: 'turn', positionMode: 'grid', nonEmptyReplies: true } as const;

/**
 * What the grid-puzzle presets share: one action per turn over up to 10 turns, GiGPO over 8 groups × 8, lr 1e-3,
 * and the grid policy with the neighbour stem (it makes "a hole / a box next to the player" a feature of the
 * player's own token; docs/results/learning.md).
 */
const GRID_PUZZLE = {
  envOptions: { maxActionsPerTurn: 1, maxTurns: 10, maxActionsPerEpisode: 10 },
  estimator: 'gigpo',
  filters: [],
  groups: 8,
  groupSize: 8,
  learningRate: 1e-3,
  model: { ...GRID_POLICY, gridNeighbours: true },
} satisfies TrainPreset;

export const TRAIN_PRESETS: Record<string, TrainPreset> = {
  // Non-slippery 4×4, one action per turn over up to 10 turns: the policy sees the map after every move.
  // The policy sees the current map only (attentionSpan 'turn': the map is the whole state, and with turn-relative
  // positions older maps would sit at the same positions), with row/column embeddings for the grid, and
  // never writes an empty reply (docs/results/learning.md).
  FrozenLake: {
    ...GRID_PUZZLE,
    envOptions: { slippery: false, ...GRID_PUZZLE.envOptions },
    // Without the neighbour stem GiGPO stayed ≤ 0.22 held-out (docs/results/learning.md).
    // 2 epochs × 2 minibatches: 4 × 4 at lr 1e-3 overshot (PPO-KL up to 2 per update with oracle advantages), 1 × 2 learned nothing by 30k steps.
    optimizer: { epochs: 2, minibatches: 2, schedule: 'cosine', totalUpdates: 400 },
    // γ 0.7, ω 3: the advantage that correlates best with the optimal action on untrained rollouts (0.31 vs 0.24 for the defaults).
    estimatorOptions: { omega: 3, gamma: 0.7 },
    // Advantages centred per action, so updates cannot drift the map-independent preference and must read the map;
    // an entropy floor, so a group's rollouts keep disagreeing; a rate that decays over ≈ 90k env steps and then
    // stays at a tenth: over 300 updates it reached its floor before the slowest seeds' last few percent
    // (docs/results/learning-diagnosis.md).
    loss: { centerByAction: true, entropyCoeff: 0.2, entropyTarget: 0.7 },
  },
  // 6×6, one box. On BFS-optimal labels the model reached 0.80 held-out with the neighbour stem and 0.18
  // without (docs/results/learning.md). 2 epochs × 4 minibatches: with 2 × 2 GiGPO was still at its untrained
  // level after 64k steps; with 2 × 4 it took off at ≈ 55k. GiGPO with verl-agent's Sokoban mode (mean_norm), and
  // γ 0.5, ω 3: the advantage that correlates best with the optimal push on untrained rollouts (0.27 vs 0.20 for
  // verl-agent's γ 0.95, ω 1). A value head at weight 0.25 on the shared body: its regression on each turn's return
  // is what makes the body read the room; its GAE advantage (λ 0.9) added to GiGPO's gives each state its own
  // baseline, which took the three seeds off sooner and higher. 16 groups × 4: twice the rooms per env step, where
  // the critic's baseline no longer needs 8 rollouts per room (docs/results/learning-diagnosis.md).
  Sokoban: {
    ...GRID_PUZZLE,
    groups: 16,
    groupSize: 4,
    model: { ...GRID_PUZZLE.model, valueHead: true },
    optimizer: { epochs: 2, minibatches: 4 },
    loss: { valueCoeff: 0.25, criticAdvantageCoeff: 1, criticLambda: 0.9 },
    estimatorOptions: { gamma: 0.5, omega: 3 },
  },
  // Group-normalised GRPO favours Bandit's low-variance arm; mean-centred Dr. GRPO prefers the higher mean.
  // 4 epochs × 4 minibatches: the settings its figures in docs/results/learning.md were measured with (`bench learning`'s fallback).
  Bandit: { envOptions: {}, estimator: 'dr_grpo', filters: [], groups: 8, groupSize: 8, learningRate: 1e-3, optimizer: { epochs: 4, minibatches: 4 } },
};

// The policy network's shape, checked when built: a small causal (decoder-only) transformer.
// Defaults fit the built-in environments on 2 CPU cores: FrozenLake's 5 turns take ~130 tokens,
// Sokoban's ~250, so 256 positions hold a whole episode.
import { ConfigError } from '../../core/errors.js';

export interface PolicyModelConfig {
  /** Ids the embedding knows (the tokenizer's vocabSize). */
  readonly vocabSize: number;
  /** Positions the model attends over; longer contexts keep their last contextLength tokens. Default 256. */
  readonly contextLength: number;
  /** Transformer blocks. Default 2. */
  readonly layers: number;
  /** Model width d. Default 64. */
  readonly width: number;
  /** Attention heads; width must be a multiple. Default 4. */
  readonly heads: number;
  /** Hidden width of each MLP as a multiple of width. Default 4. */
  readonly mlpRatio: number;
  /** Seeds the initial weights (same seed, same weights on every backend). Default 1. */
  readonly seed: number;
  /**
   * 'turn' (default): position ids restart at every observation (see transformer.ts turnPositions), so
   * the current observation always sits at the same positions; 'absolute': GPT's 0..T−1; 'grid': 'turn'
   * plus learned row and column embeddings (GRID_EMBEDDINGS of each) for text grids: within a turn the row
   * counts the newlines since the turn's BOS/OBS and the column the tokens since the last newline, so
   * every cell of a map row shares a row vector and every cell of a column a column vector (a 2-D
   * inductive bias: "left of", "same row" become one direction in the embedding).
   */
  readonly positionMode: 'turn' | 'absolute' | 'grid';
  /**
   * 'episode' (default): causal attention over the whole context; 'turn': a token attends only to the
   * tokens of its own turn (from the turn's BOS/OBS on), so the policy acts on the current observation
   * alone. For fully observed environments (FrozenLake, Sokoban) the current observation is the state; with
   * turn-relative positions every past map sits at the same positions as the current one, and only this
   * mask tells them apart. The sampler then runs on the current turn only and the learner on one row per
   * turn, which is also several times faster.
   */
  readonly attentionSpan: 'episode' | 'turn';
  /**
   * With a reply head: EOS cannot be a reply's first token (the logit after ACT is −1e9), so every reply
   * holds at least one action word. An empty reply is an invalid action that wastes a turn; without this
   * the untrained policy writes one in 1/(words + 1) of its turns. Sampler and learner share the mask.
   * Default false.
   */
  readonly nonEmptyReplies: boolean;
  /**
   * With positionMode 'grid': every cell of an observation's text grid also gets a learned embedding of the
   * token above, below, left and right of it (PAD where the grid ends), a 3×3 "plus" convolution stem as
   * grid-world policies use. Without it the model must find the player by content and then attend to the
   * cells at fixed offsets from it, two hops that supervised runs took ≈ 10⁵ examples to learn (most errors:
   * stepping into an adjacent hole). Only observation tokens (between a turn's OBS and ACT) are cells and
   * neighbours, so nothing a reply token is predicted from depends on a later token. Default false.
   */
  readonly gridNeighbours: boolean;
  /**
   * A scalar value head beside the reply head (one linear read of the final layer), trained by the learner's
   * value loss (loss.valueCoeff) on each turn's return: a critic sharing the policy's body. Its regression
   * target depends on the whole map at every step, so the body learns to read the map from every transition,
   * where the policy gradient alone teaches it only through group-relative advantages
   * (docs/results/learning-diagnosis.md). Sampling never reads it. Default false.
   */
  readonly valueHead: boolean;
}

/** Rows and columns the 'grid' position mode embeds (larger indices share the last vector). */
export const GRID_EMBEDDINGS = 32;

/** The neighbour directions of gridNeighbours, in parameter order. */
export const GRID_NEIGHBOURS = ['up', 'down', 'left', 'right'] as const;

export const MODEL_DEFAULTS: Omit<PolicyModelConfig, 'vocabSize'> = {
  contextLength: 256,
  layers: 2,
  width: 64,
  heads: 4,
  mlpRatio: 4,
  seed: 1,
  positionMode: 'turn',
  attentionSpan: 'episode',
  nonEmptyReplies: false,
  gridNeighbours: false,
  valueHead: false,
};

export function buildModelConfig(input: Partial<PolicyModelConfig> & Pick<PolicyModelConfig, 'vocabSize'>): PolicyModelConfig {
  const config = { ...MODEL_DEFAULTS, ...input };
  const positive = (field: Exclude<keyof PolicyModelConfig, 'positionMode' | 'attentionSpan' | 'nonEmptyReplies' | 'gridNeighbours' | 'valueHead'>, max: number) => {
    const value = config[field];
    if (!Number.isInteger(value) || value < 1 || value > max) {
      throw new ConfigError(`model.${field} must be an integer in 1..${max}, got ${value}; e.g. ${field}=${(MODEL_DEFAULTS as unknown as Record<string, number>)[field] ?? 512}`);
    }
  };
  positive('vocabSize', 1_000_000);
  positive('contextLength', 8192);
  positive('layers', 64);
  positive('width', 8192);
  positive('heads', 256);
  positive('mlpRatio', 16);
  if (!Number.isSafeInteger(config.seed) || config.seed < 0) throw new ConfigError(`model.seed must be a non-negative integer, got ${config.seed}`);
  if (config.positionMode !== 'turn' && config.positionMode !== 'absolute' && config.positionMode !== 'grid')
    throw new ConfigError(`model.positionMode must be 'turn', 'absolute' or 'grid', got ${String(config.positionMode)}`);
  if (config.attentionSpan !== 'episode' && config.attentionSpan !== 'turn')
    throw new ConfigError(`model.attentionSpan must be 'episode' or 'turn', got ${String(config.attentionSpan)}`);
  if (typeof config.nonEmptyReplies !== 'boolean') throw new ConfigError(`model.nonEmptyReplies must be true or false, got ${String(config.nonEmptyReplies)}`);
  if (typeof config.gridNeighbours !== 'boolean') throw new ConfigError(`model.gridNeighbours must be true or false, got ${String(config.gridNeighbours)}`);
  if (typeof config.valueHead !== 'boolean') throw new ConfigError(`model.valueHead must be true or false, got ${String(config.valueHead)}`);
  if (config.gridNeighbours && config.positionMode !== 'grid')
    throw new ConfigError(`model.gridNeighbours needs positionMode 'grid' (it reads the grid's rows and columns), got positionMode '${config.positionMode}'`);
  if (config.width % config.heads !== 0) {
    throw new ConfigError(`model.width (${config.width}) must be a multiple of model.heads (${config.heads}); e.g. width 64 with 4 heads`);
  }
  return Object.freeze(config);
}

/** Parameters of a model of this shape (for the FLOP count and logs). */
export function parameterCount(c: PolicyModelConfig): number {
  const d = c.width;
  const hidden = d * c.mlpRatio;
  const block = 2 * 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + (d * hidden + hidden) + (hidden * d + d);
  const grid = (c.positionMode === 'grid' ? 2 * GRID_EMBEDDINGS * d : 0) + (c.gridNeighbours ? GRID_NEIGHBOURS.length * c.vocabSize * d : 0);
  const value = c.valueHead ? d + 1 : 0;
  return c.vocabSize * d + c.contextLength * d + grid + c.layers * block + 2 * d + d * c.vocabSize + c.vocabSize + value;
}

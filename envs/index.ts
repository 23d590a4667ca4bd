// The environments' public API.
export * from './contract.js';
export * from './errors.js';
export { extractAnswer, formatReply, parseTurn, splitActions, ACTION_SEPARATOR, type ParsedTurn } from './actions.js';
export { BanditEnv, BANDIT_DEFAULTS, type BanditOptions } from './bandit.js';
export { FrozenLakeEnv, FROZEN_LAKE_ACTIONS, FROZEN_LAKE_DEFAULTS, type FrozenLakeOptions } from './frozen-lake.js';
export { SokobanEnv, SOKOBAN_ACTIONS, SOKOBAN_DEFAULTS, type SokobanOptions } from './sokoban.js';
export { ToolUseEnv, TOOL_USE_DEFAULTS, type ToolUseOptions } from './tool-use.js';
export { createEnv, envNames, isEnvName, type EnvName, type EnvOptionsByName } from './registry.js';
export { checkEnv, type CheckEnvOptions } from './check-env.js';
export { createRandomPolicy, type TextPolicy } from './policy/random-policy.js';
export { playEpisode, measureBaseline, baselineSuccessRate, type BaselineResult } from './baseline.js';
export { TRAIN_SEEDS, EVAL_SEEDS, isEvalSeed, assertTrainingSeed, type SeedRange } from './seeds.js';

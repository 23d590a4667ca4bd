export type {
  CustomRewardFn,
  CustomTerm,
  EnvReturnTerm,
  InvalidActionPenaltyTerm,
  OverlongPenaltyTerm,
  RewardFn,
  RewardResult,
  RewardSpec,
  RewardTerm,
  RewardTermKind,
  StepPenaltyTerm,
  SuccessTerm,
} from './types.js';
export { buildRewardFn } from './build.js';
export { validateRewardSpec, rewardTermKinds, termName } from './validate.js';
export { registerReward, unregisterReward, registeredReward, registeredRewardNames } from './registry.js';
export { discountedReturns } from './discounted-returns.js';
export { dapoOverlongPenalty, type OverlongOptions } from './overlong.js';

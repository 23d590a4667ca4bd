export { grpoAdvantages, type GrpoOptions } from './grpo.js';
export { drGrpoAdvantages } from './dr-grpo.js';
export { rlooAdvantages } from './rloo.js';
export { maskedWhiten } from './whiten.js';
export {
  reinforcePlusPlusAdvantages,
  maskedDiscountedReturns,
  type ReinforcePlusPlusOptions,
  type ReinforcePlusPlusSequence,
} from './reinforce-plus-plus.js';
export { reinforcePlusPlusBaselineAdvantages, type ReinforcePlusPlusBaselineOptions } from './reinforce-plus-plus-baseline.js';
export { starpoAdvantages, type StarpoNormalization, type StarpoOptions } from './starpo.js';
export {
  gigpoAdvantages,
  checkGigpoOptions,
  type GigpoMode,
  type GigpoOptions,
  type GigpoResult,
  type GigpoStep,
  type GigpoTrajectory,
} from './gigpo.js';
export { buildAnchorGroups, checkAnchorSimilarity, type AnchorGroups, type AnchorSimilarity } from './gigpo-anchor-states.js';
export {
  estimators,
  estimatorNames,
  estimatorByName,
  computeAdvantages,
  type Estimator,
  type EstimatorName,
  type EstimatorOptions,
  type GroupAdvantages,
  type BatchWhiteningOptions,
  type ReinforcePlusPlusEstimatorOptions,
} from './registry.js';

// The learner's loss functions: pure tfjs tensor functions ([B, T] per-token inputs, scalar outputs) for
// the actor update, run inside the learner's gradient closure on the cpu or wasm backend.
export { aggLoss, maskedMean, isLossAggMode, LOSS_AGG_MODES, type AggLossOptions, type LossAggMode } from './aggregate.js';
export { klPenalty, isKlEstimator, KL_ESTIMATORS, type KlEstimator } from './kl.js';
export { criticAdvantages, turnAdvantages, type CriticBatch } from './critic-advantage.js';
export { entropyFromLogits, marginalEntropyFromLogits } from './entropy.js';
export {
  buildPolicyLossConfig,
  validatePolicyLossConfig,
  policyLoss,
  DEFAULT_POLICY_LOSS_CONFIG,
  type PolicyLossConfig,
  type PolicyLossInputs,
  type PolicyLossMetrics,
  type PolicyLossOptions,
  type PolicyLossOutput,
} from './policy-loss.js';
export { stopGradient } from './stop-gradient.js';

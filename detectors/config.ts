// The configuration of every detector, built once with defaults and checked (ConfigError messages name
// the option, say what it means and what would be valid). Defaults and rules: detectors/README.md.
import { ConfigError } from '../core/errors.js';
import { actionRepetitionConfig, type ActionRepetitionConfig } from './action-repetition.js';
import { actionWindowsConfig, type ActionWindowsConfig } from './action-windows.js';
import { Checks } from './config-checks.js';
import { entropyCollapseConfig, type EntropyCollapseConfig } from './entropy-collapse.js';
import { entropyConfig, type EntropyConfig } from './entropy-swings.js';
import { gradNormSpikeConfig, type GradNormSpikeConfig } from './grad-norm-spike.js';
import { invalidActionRiseConfig, type InvalidActionRiseConfig } from './invalid-action-rise.js';
import { mutualInformationConfig, type MutualInformationConfig } from './mutual-information.js';
import { nonFiniteConfig, type NonFiniteConfig } from './non-finite.js';
import { policyShiftConfig, type PolicyShiftConfig } from './policy-shift.js';
import { progressConfig, type ProgressConfig } from './progress.js';
import { responseLengthConfig, type ResponseLengthConfig } from './response-length-collapse.js';
import { rewardSuccessGapConfig, type RewardSuccessGapConfig } from './reward-success-gap.js';
import { rewardVarianceCliffConfig, type RewardVarianceCliffConfig } from './reward-variance-cliff.js';
import { templateCollapseConfig, type TemplateCollapseConfig } from './template-collapse.js';

export interface DetectorsConfig {
  readonly rewardVarianceCliff: RewardVarianceCliffConfig;
  /** Erratic entropy and entropy surges, from the learner (entropy-swings.ts). */
  readonly entropy: EntropyConfig;
  /** Entropy falling where the policy fails, from the trajectories (entropy-collapse.ts). */
  readonly entropyCollapse: EntropyCollapseConfig;
  readonly gradNormSpike: GradNormSpikeConfig;
  readonly nonFinite: NonFiniteConfig;
  readonly responseLength: ResponseLengthConfig;
  readonly invalidActions: InvalidActionRiseConfig;
  readonly actionWindows: ActionWindowsConfig;
  readonly templateCollapse: TemplateCollapseConfig;
  /** Template collapse from the learner's RAGEN-2 cross-scoring (mutual-information.ts). */
  readonly mutualInformation: MutualInformationConfig;
  readonly actionRepetition: ActionRepetitionConfig;
  /** Failed episodes earn about as much as successful ones (reward-success-gap.ts). */
  readonly rewardSuccessGap: RewardSuccessGapConfig;
  /** One update's PPO-KL too large (policy-shift.ts). */
  readonly policyShift: PolicyShiftConfig;
  /** When a run counts as improving: the detectors of convergence-like signs hold their fire then (progress.ts). */
  readonly progress: ProgressConfig;
  /**
   * Alerts from rollout batches and trajectory windows are attributed to the run's last learner step at
   * or before their event time. They wait (ms) for a learner step after that time, so the attribution
   * does not depend on which topic was read first; after this long they go out with what is known.
   * 0: never wait.
   */
  readonly attributionHoldMs: number;
}

/** Overrides: any subset of any section. */
export type DetectorsConfigInput = {
  readonly [K in keyof DetectorsConfig]?: DetectorsConfig[K] extends object ? Partial<DetectorsConfig[K]> : DetectorsConfig[K];
};

const SECTIONS = [
  'rewardVarianceCliff',
  'entropy',
  'entropyCollapse',
  'gradNormSpike',
  'nonFinite',
  'responseLength',
  'invalidActions',
  'actionWindows',
  'templateCollapse',
  'mutualInformation',
  'actionRepetition',
  'rewardSuccessGap',
  'policyShift',
  'progress',
  'attributionHoldMs',
] as const satisfies readonly (keyof DetectorsConfig)[];

export const DEFAULT_ATTRIBUTION_HOLD_MS = 30_000;

export function buildDetectorsConfig(input: DetectorsConfigInput = {}): DetectorsConfig {
  for (const key of Object.keys(input)) {
    if (!(SECTIONS as readonly string[]).includes(key)) throw new ConfigError(`detectors.${key} is not a detectors option; the options are ${SECTIONS.join(', ')}.`);
  }
  const attributionHoldMs = input.attributionHoldMs ?? DEFAULT_ATTRIBUTION_HOLD_MS;
  new Checks('detectors', { attributionHoldMs: DEFAULT_ATTRIBUTION_HOLD_MS }).int(
    'attributionHoldMs',
    attributionHoldMs,
    0,
    'time (ms) a rollout or trajectory alert waits for a later learner step to be attributed to',
  );
  return Object.freeze({
    rewardVarianceCliff: rewardVarianceCliffConfig(input.rewardVarianceCliff),
    entropy: entropyConfig(input.entropy),
    entropyCollapse: entropyCollapseConfig(input.entropyCollapse),
    gradNormSpike: gradNormSpikeConfig(input.gradNormSpike),
    nonFinite: nonFiniteConfig(input.nonFinite),
    responseLength: responseLengthConfig(input.responseLength),
    invalidActions: invalidActionRiseConfig(input.invalidActions),
    actionWindows: actionWindowsConfig(input.actionWindows),
    templateCollapse: templateCollapseConfig(input.templateCollapse),
    mutualInformation: mutualInformationConfig(input.mutualInformation),
    actionRepetition: actionRepetitionConfig(input.actionRepetition),
    rewardSuccessGap: rewardSuccessGapConfig(input.rewardSuccessGap),
    policyShift: policyShiftConfig(input.policyShift),
    progress: progressConfig(input.progress),
    attributionHoldMs,
  });
}

/** The overrides that switch off every detector of the trajectories topic (`trajflow detectors --no-trajectories`). */
export const WITHOUT_TRAJECTORIES = Object.freeze({
  templateCollapse: { enabled: false },
  actionRepetition: { enabled: false },
  rewardSuccessGap: { enabled: false },
  entropyCollapse: { enabled: false },
}) satisfies DetectorsConfigInput;

/** Whether any enabled detector needs the trajectories topic. */
export function readsTrajectories(config: DetectorsConfig): boolean {
  return (Object.keys(WITHOUT_TRAJECTORIES) as (keyof typeof WITHOUT_TRAJECTORIES)[]).some((section) => config[section].enabled);
}

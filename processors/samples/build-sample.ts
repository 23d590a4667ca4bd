// buildSample: one trajectory and its advantages → one TrainingSampleEvent, with observation masking.
//
// The token sequence is what the policy saw, turn by turn: each step's observation tokens, then the
// action tokens it generated. The loss mask is 1 exactly on action tokens and 0 on every token the
// environment returned (Search-R1's info mask, RAGEN's response mask): the policy is not trained to
// produce observations, though they stay in the sequence as context. Advantages and behaviour
// log-probs are aligned with the tokens and 0 wherever the mask is 0.
//
// Which turns are kept, the sample's other fields and the decisions behind them come from the sample's plan
// (sample-plan.ts), the same plan planSample leaves to be written from the steps' bytes. Behaviour log-probs
// are rounded to float32 (Math.fround), as the Avro schema stores them.
import type { TrainingSampleEvent, TrajectoryEvent, TrajectoryStep } from '../../schemas/index.js';
import type { ContextWindowReport } from './context-window.js';
import { advantagePerStep, planSampleOnCounts, type BuildSampleOptions, type SampleAdvantages, type SampleFields, type SamplePlan } from './sample-plan.js';
import { SampleError } from './sample-error.js';
import { byteTokenizer } from '../../tokenizer/contract.js';

export { advantagePerStep, sampleIdOf, type BuildSampleOptions, type GroupRewardStatistics, type SampleAdvantages } from './sample-plan.js';

export interface BuiltSample {
  readonly sample: TrainingSampleEvent;
  /** What the context window kept and dropped. */
  readonly window: ContextWindowReport;
  /** Oldest and newest policy versions among the kept action tokens (newest − oldest: spread of staleness inside the sample). */
  readonly policyVersions: { readonly min: number; readonly max: number };
}

/** The training sample of one trajectory. Throws SampleError when it cannot make a valid one. */
export function buildSample(trajectory: TrajectoryEvent, advantages: SampleAdvantages, options: BuildSampleOptions): TrainingSampleEvent {
  return buildSampleWithReport(trajectory, advantages, options).sample;
}

/** buildSample, plus what the context window did and the spread of policy versions. */
export function buildSampleWithReport(trajectory: TrajectoryEvent, advantages: SampleAdvantages, options: BuildSampleOptions): BuiltSample {
  const steps = trajectory.steps;
  const stepAdvantage = advantagePerStep(steps, advantages);
  const { tokenizer = byteTokenizer } = options;
  const observations = steps.map((s) => s.observationTokenIds ?? tokenizer.tokenize(s.observation));
  for (const s of steps) {
    if (s.actionLogProbs.length !== s.actionTokenIds.length) {
      throw new SampleError(`step ${s.stepIndex} has ${s.actionTokenIds.length} action tokens but ${s.actionLogProbs.length} log-probs`);
    }
  }
  const lengths = steps.map((s, i) => ({ observationTokens: observations[i]!.length, actionTokens: s.actionTokenIds.length }));
  const plan = planSampleOnCounts(trajectory, advantages, stepAdvantage, lengths, options);
  return { sample: sampleOf(plan.fields, tokenArrays(steps, observations, plan)), window: plan.window, policyVersions: plan.policyVersions };
}

interface TokenArrays {
  readonly tokenIds: number[];
  readonly lossMask: number[];
  readonly advantages: number[];
  readonly behaviourLogProbs: number[];
}

/** The four per-token arrays of a planned sample, filled from the steps' tokens. */
function tokenArrays(steps: readonly TrajectoryStep[], observations: readonly (readonly number[])[], plan: SamplePlan): TokenArrays {
  // Sized once: the sample's arrays are the bulk of the processors' allocations (pushing grew each of them
  // several times over).
  const length = plan.tokenCount;
  const tokenIds = new Array<number>(length);
  const lossMask = new Array<number>(length);
  const tokenAdvantages = new Array<number>(length);
  const behaviourLogProbs = new Array<number>(length);
  let at = 0;
  for (const turn of plan.turns) {
    const observation = observations[turn.index]!;
    for (let t = turn.observationFrom; t < observation.length; t++, at++) {
      tokenIds[at] = observation[t]!;
      lossMask[at] = 0;
      tokenAdvantages[at] = 0;
      behaviourLogProbs[at] = 0;
    }
    const { actionTokenIds: actions, actionLogProbs: logProbs } = steps[turn.index]!;
    for (let t = 0; t < actions.length; t++, at++) {
      tokenIds[at] = actions[t]!;
      lossMask[at] = 1;
      tokenAdvantages[at] = turn.advantage;
      behaviourLogProbs[at] = Math.fround(logProbs[t]!);
    }
  }
  return { tokenIds, lossMask, advantages: tokenAdvantages, behaviourLogProbs };
}

/** The sample's fields in the schema's order, the arrays in their place. */
function sampleOf(fields: SampleFields, arrays: TokenArrays): TrainingSampleEvent {
  return {
    sampleId: fields.sampleId,
    runId: fields.runId,
    groupId: fields.groupId,
    episodeId: fields.episodeId,
    policyVersion: fields.policyVersion,
    tokenIds: arrays.tokenIds,
    lossMask: arrays.lossMask,
    advantages: arrays.advantages,
    behaviourLogProbs: arrays.behaviourLogProbs,
    reward: fields.reward,
    estimator: fields.estimator,
    groupSize: fields.groupSize,
    groupRewardMean: fields.groupRewardMean,
    groupRewardStd: fields.groupRewardStd,
    stepAdvantages: fields.stepAdvantages,
    eventTimeMs: fields.eventTimeMs,
    batch: fields.batch,
  };
}

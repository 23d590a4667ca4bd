// A training sample of a trajectory whose steps are WireSteps (schemas/wire-step.ts), planned instead of
// built: the same sample buildSample makes, with its four per-token arrays left as a plan — which turns,
// how many observation tokens of each, which advantage on the action tokens. write-planned-sample.ts writes
// it by copying the steps' token ids and log-probs from their bytes; reading one of the arrays builds the
// sample with buildSample (once), so a PlannedSample is an ordinary TrainingSampleEvent to any reader.
//
// planSample and buildSampleWithReport share one plan on counts (sample-plan.ts: the context window, the
// policy versions, the errors); test/processors/samples/planned-sample.unit.spec.ts checks both give the same
// sample and the same bytes.
import type { SampleBatch, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { WireStep } from '../../schemas/wire-step.js';
import { buildSample } from './build-sample.js';
import { advantagePerStep, planSampleOnCounts, type BuildSampleOptions, type SampleAdvantages, type TurnPlan } from './sample-plan.js';
import { byteTokenizer } from '../../tokenizer/contract.js';

/** One kept turn of the plan (sample-plan.ts), with the step its tokens are written from. */
export interface PlannedTurn extends TurnPlan {
  readonly step: WireStep;
  /** The tokenizer's ids of the observation when the step carries none; null: the step's own ids. */
  readonly observationIds: readonly number[] | null;
}

export class PlannedSample implements TrainingSampleEvent {
  private built: TrainingSampleEvent | undefined;
  /** Set by the batch that emits the sample (process-batch.ts), as on buildSample's samples. */
  batch: SampleBatch | null = null;

  constructor(
    readonly sampleId: string,
    readonly runId: string,
    readonly groupId: string,
    readonly episodeId: string,
    readonly policyVersion: number,
    readonly reward: number,
    readonly estimator: string,
    readonly groupSize: number,
    readonly groupRewardMean: number,
    readonly groupRewardStd: number,
    readonly stepAdvantages: number[] | null,
    readonly eventTimeMs: number,
    readonly turns: readonly PlannedTurn[],
    /** Tokens in the sample: the length of each of its four arrays. */
    readonly tokenCount: number,
    private readonly build: () => TrainingSampleEvent,
  ) {}

  get tokenIds(): number[] {
    return this.materialized().tokenIds;
  }

  get lossMask(): number[] {
    return this.materialized().lossMask;
  }

  get advantages(): number[] {
    return this.materialized().advantages;
  }

  get behaviourLogProbs(): number[] {
    return this.materialized().behaviourLogProbs;
  }

  private materialized(): TrainingSampleEvent {
    return (this.built ??= this.build());
  }
}

/**
 * The sample of a trajectory: a PlannedSample when every step is a WireStep, else buildSample's. Throws
 * SampleError as buildSample does.
 */
export function planSample(trajectory: TrajectoryEvent, advantages: SampleAdvantages, options: BuildSampleOptions): TrainingSampleEvent {
  const steps = trajectory.steps;
  for (const step of steps) if (!(step instanceof WireStep)) return buildSample(trajectory, advantages, options);
  const wire = steps as unknown as readonly WireStep[];
  const { tokenizer = byteTokenizer } = options;
  const stepAdvantage = advantagePerStep(steps, advantages);
  // A WireStep has as many log-probs as action tokens (checked when it was read), so buildSample's
  // length check cannot fail here.
  const observationIds = wire.map((s) => (s.layout.observationTokenCount < 0 ? tokenizer.tokenize(s.observation) : null));
  const lengths = wire.map((s, i) => ({ observationTokens: observationIds[i]?.length ?? s.layout.observationTokenCount, actionTokens: s.layout.actionTokenCount }));
  const plan = planSampleOnCounts(trajectory, advantages, stepAdvantage, lengths, options);
  const turns = plan.turns.map((turn): PlannedTurn => ({ ...turn, step: wire[turn.index]!, observationIds: observationIds[turn.index]! }));
  const f = plan.fields;
  return new PlannedSample(
    f.sampleId,
    f.runId,
    f.groupId,
    f.episodeId,
    f.policyVersion,
    f.reward,
    f.estimator,
    f.groupSize,
    f.groupRewardMean,
    f.groupRewardStd,
    f.stepAdvantages,
    f.eventTimeMs,
    turns,
    plan.tokenCount,
    () => buildSample(trajectory, advantages, options),
  );
}

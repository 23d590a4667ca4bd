// A training sample of a trajectory whose steps are WireSteps (schemas/wire-step.ts), planned instead of
// built: the same sample buildSample makes, with its four per-token arrays left as a plan — which turns,
// how many observation tokens of each, which advantage on the action tokens. write-planned-sample.ts writes
// it by copying the steps' token ids and log-probs from their bytes; reading one of the arrays builds the
// sample with buildSample (once), so a PlannedSample is an ordinary TrainingSampleEvent to any reader.
//
// planSample follows buildSampleWithReport step for step on counts instead of arrays (the context window,
// the policy versions, the errors); test/processors/samples/planned-sample.unit.spec.ts checks both
// give the same sample and the same bytes.
import type { SampleBatch, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { WireStep } from '../../schemas/wire-step.js';
import { advantagePerStep, buildSample, sampleIdOf, type BuildSampleOptions, type SampleAdvantages } from './build-sample.js';
import { DEFAULT_MAX_CONTEXT_TOKENS, fitContextWindow } from './context-window.js';
import { SampleError } from './sample-error.js';
import { byteTokenizer } from '../../tokenizer/contract.js';

/** One kept turn: its observation tokens from `observationFrom` on, then all its action tokens. */
export interface PlannedTurn {
  readonly step: WireStep;
  /** The tokenizer's ids of the observation when the step carries none; null: the step's own ids. */
  readonly observationIds: readonly number[] | null;
  readonly observationFrom: number;
  /** Observation tokens kept (after observationFrom). */
  readonly observationCount: number;
  readonly actionCount: number;
  /** The float32 advantage on this turn's action tokens. */
  readonly advantage: number;
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
  const { estimator, group, reward = trajectory.totalReward, maxContextTokens = DEFAULT_MAX_CONTEXT_TOKENS, tokenizer = byteTokenizer, sampleIdScope = '' } = options;
  const stepAdvantage = advantagePerStep(steps, advantages);
  // A WireStep has as many log-probs as action tokens (checked when it was read), so buildSample's
  // length check cannot fail here.
  const observationIds = wire.map((s) => (s.layout.observationTokenCount < 0 ? tokenizer.tokenize(s.observation) : null));
  const observationCount = (i: number) => observationIds[i]?.length ?? wire[i]!.layout.observationTokenCount;
  const window = fitContextWindow(
    wire.map((s, i) => ({ observationTokens: observationCount(i), actionTokens: s.layout.actionTokenCount })),
    maxContextTokens,
  );
  const turns: PlannedTurn[] = [];
  let tokenCount = 0;
  let minVersion = Infinity;
  for (let i = window.firstKeptTurn; i < wire.length; i++) {
    const step = wire[i]!;
    const from = i === window.firstKeptTurn ? window.trimmedObservationTokens : 0;
    const actionCount = step.layout.actionTokenCount;
    const turn: PlannedTurn = {
      step,
      observationIds: observationIds[i]!,
      observationFrom: from,
      observationCount: observationCount(i) - from,
      actionCount,
      advantage: stepAdvantage[i]!,
    };
    turns.push(turn);
    tokenCount += turn.observationCount + actionCount;
    if (actionCount > 0) minVersion = Math.min(minVersion, step.policyVersion);
  }
  if (minVersion === Infinity) {
    throw new SampleError(`episode ${trajectory.episodeId} has no action tokens in its ${window.turns - window.droppedTurns} kept turns: nothing to train on`);
  }
  return new PlannedSample(
    sampleIdOf(trajectory.runId, trajectory.episodeId, sampleIdScope),
    trajectory.runId,
    trajectory.groupId,
    trajectory.episodeId,
    minVersion,
    reward,
    estimator,
    group.size,
    group.rewardMean,
    group.rewardStd,
    advantages.level === 'step' ? stepAdvantage.slice(window.firstKeptTurn) : null,
    options.eventTimeMs ?? trajectory.lastEventTimeMs,
    turns,
    tokenCount,
    () => buildSample(trajectory, advantages, options),
  );
}

// A training sample on counts: which turns the context window keeps, how many observation and action tokens
// of each go into the sample, which advantage lies on each turn's action tokens, and every field of the sample
// but its four per-token arrays. One plan serves both ways a sample is made: buildSample fills the arrays
// from it (build-sample.ts), planSample leaves them to be written from the steps' bytes (planned-sample.ts).
//
// Decisions the schema leaves open, made here:
// - policyVersion is the oldest version that sampled any action token kept in the sample (the schema's
//   definition; it bounds staleness from below). `policyVersions` also gives the newest.
// - sampleId depends only on (scope, runId, episodeId), so rebuilding a sample after a restart gives
//   the same id and consumers can drop the repeat.
// - eventTimeMs defaults to the trajectory's lastEventTimeMs rather than the clock, so the function is
//   pure and a rebuilt sample is identical; the operator around it passes its scheduler's time if it
//   wants the build time.
// - Advantages are rounded to float32 (Math.fround): the Avro schema stores floats, so the event equals
//   itself after a round trip through the codec.
// - stepAdvantages (GiGPO) lists the kept turns only, aligned with the turns present in tokenIds.
import { createHash } from 'node:crypto';
import type { TrainingSampleEvent, TrajectoryEvent, TrajectoryStep } from '../../schemas/index.js';
import { DEFAULT_MAX_CONTEXT_TOKENS, fitContextWindow, type ContextWindowReport, type TurnLength } from './context-window.js';
import { SampleError } from './sample-error.js';
import type { Tokenizer } from '../../tokenizer/contract.js';

/** The advantages of one trajectory, from an estimator. */
export type SampleAdvantages =
  /** One scalar for the whole trajectory (GRPO, Dr. GRPO, RLOO, StarPO ...), on every action token. */
  | { readonly level: 'trajectory'; readonly advantage: number }
  /** One value per step, in the order of trajectory.steps (GiGPO: A^E + ω·A^S), on that step's action tokens. */
  | { readonly level: 'step'; readonly stepAdvantages: readonly number[] };

/** Reward statistics of the group the trajectory was normalised in. */
export interface GroupRewardStatistics {
  readonly size: number;
  readonly rewardMean: number;
  readonly rewardStd: number;
}

export interface BuildSampleOptions {
  /** Estimator that produced the advantages, e.g. 'grpo', 'gigpo', 'starpo'. */
  readonly estimator: string;
  readonly group: GroupRewardStatistics;
  /** Reward the advantages were computed from (after shaping). Default: trajectory.totalReward. */
  readonly reward?: number;
  /** Context window in tokens; see context-window.ts for what is kept. Default 8192. */
  readonly maxContextTokens?: number;
  /** Tokenizes observations that have no observationTokenIds. Default: byteTokenizer (a stand-in). */
  readonly tokenizer?: Tokenizer;
  /** Default: trajectory.lastEventTimeMs (deterministic). */
  readonly eventTimeMs?: number;
  /** Mixed into sampleId, for a job that must not collide with the live samples of the same episodes (e.g. a replay with other settings). Default ''. */
  readonly sampleIdScope?: string;
}

/** Every field of a sample but its four per-token arrays. */
export type SampleFields = Omit<TrainingSampleEvent, 'tokenIds' | 'lossMask' | 'advantages' | 'behaviourLogProbs'>;

/** One kept turn: its observation tokens from `observationFrom` on, then all its action tokens. */
export interface TurnPlan {
  /** Position of the turn's step in trajectory.steps. */
  readonly index: number;
  readonly observationFrom: number;
  /** Observation tokens kept (after observationFrom). */
  readonly observationCount: number;
  readonly actionCount: number;
  /** The float32 advantage on this turn's action tokens. */
  readonly advantage: number;
}

export interface SamplePlan {
  readonly fields: SampleFields;
  /** The kept turns, oldest first. */
  readonly turns: readonly TurnPlan[];
  /** Tokens in the sample: the length of each of its four arrays. */
  readonly tokenCount: number;
  /** What the context window kept and dropped. */
  readonly window: ContextWindowReport;
  /** Oldest and newest policy versions among the kept action tokens. */
  readonly policyVersions: { readonly min: number; readonly max: number };
}

/**
 * Plans the sample of `trajectory` from each step's token counts (`lengths`, observation tokens as the sample
 * would hold them untrimmed) and its float32 advantages (`stepAdvantage`, from advantagePerStep). Throws
 * SampleError when the sample would have nothing to train on, or the window cannot hold the last action.
 */
export function planSampleOnCounts(
  trajectory: TrajectoryEvent,
  advantages: SampleAdvantages,
  stepAdvantage: readonly number[],
  lengths: readonly TurnLength[],
  options: BuildSampleOptions,
): SamplePlan {
  const window = fitContextWindow(lengths, options.maxContextTokens ?? DEFAULT_MAX_CONTEXT_TOKENS);
  const steps = trajectory.steps;
  const turns: TurnPlan[] = [];
  let tokenCount = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = window.firstKeptTurn; i < steps.length; i++) {
    // Only the first kept turn can be trimmed (when it is also the last turn; see context-window.ts).
    const observationFrom = i === window.firstKeptTurn ? window.trimmedObservationTokens : 0;
    const { observationTokens, actionTokens: actionCount } = lengths[i]!;
    turns.push({ index: i, observationFrom, observationCount: observationTokens - observationFrom, actionCount, advantage: stepAdvantage[i]! });
    tokenCount += observationTokens - observationFrom + actionCount;
    if (actionCount > 0) {
      min = Math.min(min, steps[i]!.policyVersion);
      max = Math.max(max, steps[i]!.policyVersion);
    }
  }
  if (min === Infinity) {
    throw new SampleError(`episode ${trajectory.episodeId} has no action tokens in its ${window.turns - window.droppedTurns} kept turns: nothing to train on`);
  }
  const fields = sampleFields(trajectory, advantages.level === 'step' ? stepAdvantage.slice(window.firstKeptTurn) : null, min, options);
  return { fields, turns, tokenCount, window, policyVersions: { min, max } };
}

function sampleFields(trajectory: TrajectoryEvent, stepAdvantages: number[] | null, policyVersion: number, options: BuildSampleOptions): SampleFields {
  const { estimator, group, reward = trajectory.totalReward, sampleIdScope = '' } = options;
  return {
    sampleId: sampleIdOf(trajectory.runId, trajectory.episodeId, sampleIdScope),
    runId: trajectory.runId,
    groupId: trajectory.groupId,
    episodeId: trajectory.episodeId,
    policyVersion,
    reward,
    estimator,
    groupSize: group.size,
    groupRewardMean: group.rewardMean,
    groupRewardStd: group.rewardStd,
    stepAdvantages,
    eventTimeMs: options.eventTimeMs ?? trajectory.lastEventTimeMs,
    // Set by the batch that emits the sample (process-batch.ts), once it knows how many samples it has.
    batch: null,
  };
}

/** Deterministic id of an episode's sample: 'sample-' + 32 hex digits of SHA-256 over (scope, runId, episodeId). */
export function sampleIdOf(runId: string, episodeId: string, scope = ''): string {
  const digest = createHash('sha256').update(`${scope}\u0000${runId}\u0000${episodeId}`).digest('hex');
  return `sample-${digest.slice(0, 32)}`;
}

/** The float32 advantage of each step, checked to be finite (the schema stores floats). */
export function advantagePerStep(steps: readonly TrajectoryStep[], advantages: SampleAdvantages): number[] {
  const values = advantages.level === 'trajectory' ? steps.map(() => advantages.advantage) : [...advantages.stepAdvantages];
  if (values.length !== steps.length) {
    throw new SampleError(`got ${values.length} step advantages for ${steps.length} steps`);
  }
  return values.map((value, i) => {
    const rounded = Math.fround(value);
    if (!Number.isFinite(rounded)) throw new SampleError(`advantage of step ${steps[i]!.stepIndex} is ${value}, not a finite float32`);
    return rounded;
  });
}

// buildSample: one trajectory and its advantages → one TrainingSampleEvent, with observation masking.
//
// The token sequence is what the policy saw, turn by turn: each step's observation tokens, then the
// action tokens it generated. The loss mask is 1 exactly on action tokens and 0 on every token the
// environment returned (Search-R1's info mask, RAGEN's response mask): the policy is not trained to
// produce observations, though they stay in the sequence as context. Advantages and behaviour
// log-probs are aligned with the tokens and 0 wherever the mask is 0.
//
// Decisions the schema leaves open, made here:
// - policyVersion is the oldest version that sampled any action token kept in the sample (the schema's
//   definition; it bounds staleness from below). `BuiltSample.policyVersions` also gives the newest.
// - sampleId depends only on (scope, runId, episodeId), so rebuilding a sample after a restart gives
//   the same id and consumers can drop the repeat.
// - eventTimeMs defaults to the trajectory's lastEventTimeMs rather than the clock, so the function is
//   pure and a rebuilt sample is identical; the operator around it passes its scheduler's time if it
//   wants the build time.
// - Advantages and log-probs are rounded to float32 (Math.fround): the Avro schema stores floats, so
//   the event equals itself after a round trip through the codec.
// - stepAdvantages (GiGPO) lists the kept turns only, aligned with the turns present in tokenIds.
import { createHash } from 'node:crypto';
import type { TrainingSampleEvent, TrajectoryEvent, TrajectoryStep } from '../../schemas/index.js';
import { DEFAULT_MAX_CONTEXT_TOKENS, fitContextWindow, type ContextWindowReport } from './context-window.js';
import { SampleError } from './sample-error.js';
import { byteTokenizer, type Tokenizer } from '../../tokenizer/contract.js';

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
  const { estimator, group, reward = trajectory.totalReward, maxContextTokens = DEFAULT_MAX_CONTEXT_TOKENS, tokenizer = byteTokenizer, sampleIdScope = '' } = options;
  const steps = trajectory.steps;
  const stepAdvantage = advantagePerStep(steps, advantages);

  const observations = steps.map((s) => s.observationTokenIds ?? tokenizer.tokenize(s.observation));
  for (const s of steps) {
    if (s.actionLogProbs.length !== s.actionTokenIds.length) {
      throw new SampleError(`step ${s.stepIndex} has ${s.actionTokenIds.length} action tokens but ${s.actionLogProbs.length} log-probs`);
    }
  }
  const window = fitContextWindow(
    steps.map((s, i) => ({ observationTokens: observations[i]!.length, actionTokens: s.actionTokenIds.length })),
    maxContextTokens,
  );

  // Sized once: the sample's arrays are the bulk of the processors' allocations (pushing grew each of them
  // several times over).
  let length = 0;
  for (let i = window.firstKeptTurn; i < steps.length; i++) {
    length += observations[i]!.length - (i === window.firstKeptTurn ? window.trimmedObservationTokens : 0) + steps[i]!.actionTokenIds.length;
  }
  const tokenIds = new Array<number>(length);
  const lossMask = new Array<number>(length);
  const tokenAdvantages = new Array<number>(length);
  const behaviourLogProbs = new Array<number>(length);
  let at = 0;
  let minVersion = Infinity;
  let maxVersion = -Infinity;
  for (let i = window.firstKeptTurn; i < steps.length; i++) {
    const step = steps[i]!;
    const observation = observations[i]!;
    // Only the first kept turn can be trimmed (when it is also the last turn; see context-window.ts).
    const from = i === window.firstKeptTurn ? window.trimmedObservationTokens : 0;
    for (let t = from; t < observation.length; t++, at++) {
      tokenIds[at] = observation[t]!;
      lossMask[at] = 0;
      tokenAdvantages[at] = 0;
      behaviourLogProbs[at] = 0;
    }
    const advantage = stepAdvantage[i]!;
    const actions = step.actionTokenIds;
    const logProbs = step.actionLogProbs;
    for (let t = 0; t < actions.length; t++, at++) {
      tokenIds[at] = actions[t]!;
      lossMask[at] = 1;
      tokenAdvantages[at] = advantage;
      behaviourLogProbs[at] = Math.fround(logProbs[t]!);
    }
    if (actions.length > 0) {
      minVersion = Math.min(minVersion, step.policyVersion);
      maxVersion = Math.max(maxVersion, step.policyVersion);
    }
  }
  if (minVersion === Infinity) {
    throw new SampleError(`episode ${trajectory.episodeId} has no action tokens in its ${window.turns - window.droppedTurns} kept turns: nothing to train on`);
  }

  const sample: TrainingSampleEvent = {
    sampleId: sampleIdOf(trajectory.runId, trajectory.episodeId, sampleIdScope),
    runId: trajectory.runId,
    groupId: trajectory.groupId,
    episodeId: trajectory.episodeId,
    policyVersion: minVersion,
    tokenIds,
    lossMask,
    advantages: tokenAdvantages,
    behaviourLogProbs,
    reward,
    estimator,
    groupSize: group.size,
    groupRewardMean: group.rewardMean,
    groupRewardStd: group.rewardStd,
    stepAdvantages: advantages.level === 'step' ? stepAdvantage.slice(window.firstKeptTurn) : null,
    eventTimeMs: options.eventTimeMs ?? trajectory.lastEventTimeMs,
    // Set by the batch that emits the sample (process-batch.ts), once it knows how many samples it has.
    batch: null,
  };
  return { sample, window, policyVersions: { min: minVersion, max: maxVersion } };
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

// The learner's two outgoing events: the metrics of one update, and the policy version it produced.
import type { LearnerStepEvent, PolicyVersionEvent } from '../../schemas/index.js';
import type { UpdateMetrics } from '../train/update-tally.js';

export interface BatchAccounting {
  readonly stalenessMean: number;
  readonly stalenessMax: number;
  readonly droppedStale: number;
  readonly duplicates: number;
  readonly otherRuns: number;
  readonly skippedSamples: number;
  readonly replaySamples: number;
}

/** `extra`: further metrics of the update (the 'template.*' cross-scoring results on the updates that measure them). */
export function learnerStepEvent(
  runId: string,
  update: number,
  versionBefore: number,
  m: UpdateMetrics,
  batch: BatchAccounting,
  backend: string,
  nowMs: number,
  extra: Record<string, number> = {},
): LearnerStepEvent {
  return {
    runId,
    step: update,
    policyVersion: versionBefore,
    totalLoss: m.loss,
    policyLoss: m.pgLoss,
    klLoss: m.klLoss,
    entropyLoss: m.entropyLoss,
    entropy: m.entropy,
    kl: m.kl,
    clipFraction: m.clipFracHigh + m.clipFracLow,
    clipFractionLow: m.clipFracLow,
    gradNormPreClip: m.gradNorm,
    learningRate: m.learningRate,
    tokens: m.tokens,
    samples: m.samples,
    stalenessMean: batch.stalenessMean,
    stalenessMax: batch.stalenessMax,
    durationMs: m.durationMs,
    backend,
    eventTimeMs: nowMs,
    metrics: {
      clipFracHigh: m.clipFracHigh,
      clipFracDual: m.clipFracDual,
      ppoKl: m.ppoKl,
      lossTokens: m.lossTokens,
      optimizerSteps: m.optimizerSteps,
      skippedSteps: m.skippedSteps,
      klEarlyStop: m.klEarlyStop,
      klAtStop: m.klAtStop,
      importanceWeightMean: m.importanceWeightMean,
      importanceWeightMax: m.importanceWeightMax,
      truncatedWeights: m.truncatedWeights,
      droppedStale: batch.droppedStale,
      duplicates: batch.duplicates,
      otherRuns: batch.otherRuns,
      skippedSamples: batch.skippedSamples,
      replaySamples: batch.replaySamples,
      tokensPerSecond: m.durationMs > 0 ? m.tokens / (m.durationMs / 1000) : 0,
      ...(m.entropyTarget === undefined ? {} : { 'loss.entropyTarget': m.entropyTarget }),
      ...extra,
    },
  };
}

/**
 * `progress.iteration`: the highest actors' iteration the version was trained on (-1: none) — what the actors'
 * staleness gate counts (rollout/staleness-gate.ts); `progress.envSteps`: the environment steps of the samples it
 * was trained on (the held-out evaluations are plotted against them).
 */
export function policyVersionEvent(
  runId: string,
  version: number,
  weightsUri: string,
  checksum: string,
  learnerStep: number,
  createdAtMs: number,
  progress = { iteration: -1, envSteps: 0 },
): PolicyVersionEvent {
  return {
    runId,
    version,
    weightsUri,
    checksum,
    parentVersion: version === 0 ? null : version - 1,
    learnerStep,
    createdAtMs,
    metrics: { iteration: progress.iteration, envSteps: progress.envSteps },
  };
}

/**
 * `batch.rewardMean` of a learner step: the mean episode reward of the samples the update trained on, which the
 * collapse detectors read to tell a converging run from a collapsing one (detectors/progress.ts); `batch.rewardScale`:
 * their root mean square, the loss scale the grad-norm spike reads a spike against (detectors/grad-norm-spike.ts).
 */
export function batchRewardMetrics(samples: readonly { readonly reward: number }[]): Record<string, number> {
  if (samples.length === 0) return {};
  let sum = 0;
  let squares = 0;
  for (const s of samples) {
    sum += s.reward;
    squares += s.reward * s.reward;
  }
  return { 'batch.rewardMean': sum / samples.length, 'batch.rewardScale': Math.sqrt(squares / samples.length) };
}

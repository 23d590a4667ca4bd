// Synthetic metric streams for the detector tests: seeded noise, healthy drifts, and collapses at a known
// point. Every generator is deterministic in its seed.
import type { LearnerStepEvent, RolloutStatsEvent, TrajectoryEvent, TrajectoryStep } from '../../schemas/index.js';
import { rng } from '../../bench/load/events.js';

/** Standard normal draws (Box–Muller) from a seeded uniform source. */
export function gaussian(seed: number): () => number {
  const uniform = rng(seed);
  return () => {
    const u = Math.max(uniform(), 1e-12);
    const v = uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}

export const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];

export interface RewardBatch {
  readonly inGroupStd: number;
  readonly rewardMean: number;
  readonly invalidActionRate: number;
}

/**
 * Rollout batches: in-group std ≈ 0.45 and reward mean drifting 0.3 → 0.36 (a plateau, not a run that is
 * improving: detectors/progress.ts), 4% relative noise (`noise`: another relative noise; FrozenLake's healthy
 * runs show about 0.4);
 * invalid-action rate ≈ 0.05 ± 0.02. `cliffAt`: from that batch the std is ≈ 0.05 while the mean holds.
 * `invalidAt`: from that batch the invalid-action rate is ≈ 0.4.
 */
export function rolloutBatches(n: number, seed: number, { cliffAt, invalidAt, noise: cv = 0.04 }: { cliffAt?: number; invalidAt?: number; noise?: number } = {}): RewardBatch[] {
  const noise = gaussian(seed);
  return Array.from({ length: n }, (_, i) => {
    const mean = 0.3 + (0.06 * i) / n;
    const collapsed = cliffAt !== undefined && i >= cliffAt;
    const std = (collapsed ? 0.05 : 0.45) * (1 + cv * noise());
    const invalid = invalidAt !== undefined && i >= invalidAt ? 0.4 : 0.05;
    return {
      inGroupStd: Math.max(0, std),
      rewardMean: mean * (1 + 0.04 * noise()),
      invalidActionRate: Math.min(1, Math.max(0, invalid + 0.02 * noise())),
    };
  });
}

export interface LearnerPoint {
  readonly entropy: number;
  readonly gradNorm: number;
  readonly tokensPerSample: number;
}

/**
 * Learner updates: entropy decaying slowly 2.0 → 1.6 with 3% noise; grad norm log-normal around 1.0
 * (σ = 0.15 in log space) with a slow drift; ~120 generated tokens per sample ± 5%.
 * `entropyDropAt`: entropy ≈ 0.5 from there. `erraticAt`: entropy alternates ±40% from there.
 * `spikeAt`: the grad norm is 8× at that single update. `lengthDropAt`: ≈ 30 tokens per sample from there.
 */
export function learnerPoints(
  n: number,
  seed: number,
  { entropyDropAt, erraticAt, spikeAt, lengthDropAt }: { entropyDropAt?: number; erraticAt?: number; spikeAt?: number; lengthDropAt?: number } = {},
): LearnerPoint[] {
  const noise = gaussian(seed);
  return Array.from({ length: n }, (_, i) => {
    let entropy = (2.0 - (0.4 * i) / n) * (1 + 0.03 * noise());
    if (entropyDropAt !== undefined && i >= entropyDropAt) entropy = 0.5 * (1 + 0.03 * noise());
    if (erraticAt !== undefined && i >= erraticAt) entropy *= i % 2 === 0 ? 1.4 : 0.6;
    let gradNorm = (1 + (0.3 * i) / n) * Math.exp(0.15 * noise());
    if (i === spikeAt) gradNorm *= 8;
    const tokensPerSample = (lengthDropAt !== undefined && i >= lengthDropAt ? 30 : 120) * (1 + 0.05 * noise());
    return { entropy, gradNorm, tokensPerSample };
  });
}

const T0 = 1_764_400_000_000;

/** A LearnerStepEvent for update `step` of `runId`, finishing at T0 + step·1000. */
export function learnerStepEvent(runId: string, step: number, p: Partial<LearnerPoint> & { totalLoss?: number } = {}): LearnerStepEvent {
  const samples = 16;
  return {
    runId,
    step,
    policyVersion: step,
    totalLoss: p.totalLoss ?? 0.1,
    policyLoss: 0.1,
    klLoss: 0,
    entropyLoss: 0,
    entropy: p.entropy ?? 1.8,
    kl: 0.01,
    clipFraction: 0.1,
    clipFractionLow: null,
    gradNormPreClip: p.gradNorm ?? 1,
    learningRate: 1e-6,
    tokens: 4096,
    samples,
    stalenessMean: 0,
    stalenessMax: 0,
    durationMs: 900,
    backend: 'cpu',
    eventTimeMs: T0 + step * 1000,
    metrics: { lossTokens: (p.tokensPerSample ?? 120) * samples },
  };
}

/** A batch RolloutStatsEvent, the `index`-th of the run, computed at T0 + index·1000 + 500 (after learner step `index`). */
export function rolloutBatchEvent(runId: string, index: number, b: Partial<RewardBatch> = {}): RolloutStatsEvent {
  return {
    runId,
    scope: 'batch',
    batchId: `batch-${runId}-${index}`,
    groupId: null,
    groups: 8,
    trajectories: 64,
    rewardMean: b.rewardMean ?? 0.5,
    rewardStd: 0.5,
    meanInGroupRewardStd: b.inGroupStd ?? 0.45,
    successRate: 0.5,
    passAtK: { '1': 0.5 },
    passHatK: { '1': 0.5 },
    meanLength: 6,
    invalidActionRate: b.invalidActionRate ?? 0.05,
    incomplete: 0,
    droppedGroups: 0,
    droppedByReason: {},
    eventTimeMs: T0 + index * 1000 + 500,
    closedBy: {},
  };
}

export const batchTimeMs = (index: number): number => T0 + index * 1000 + 500;

const SHARED_WORDS = 60;
const STATE_WORDS = 40;

/**
 * Trajectories of one policy version: `states` states, `perState` one-step trajectories each, 24 action
 * tokens per step. Healthy: half of each action's tokens come from a vocabulary of its own state, half
 * from a shared one. Template (collapsed): every token from the shared vocabulary, whatever the state —
 * as varied, but independent of the input. `repeat`: the action text is one of three fixed templates.
 * Every episode fails; `logProb` is each sampled token's log-probability (its surprisal is the policy's entropy there).
 */
export function trajectoriesOfVersion(
  runId: string,
  version: number,
  seed: number,
  {
    template = false,
    repeat = false,
    states = 8,
    perState = 8,
    logProb = -0.5,
    outcome = () => ({ success: false, reward: 0 }),
  }: {
    template?: boolean;
    repeat?: boolean;
    states?: number;
    perState?: number;
    logProb?: number;
    /** Each episode's success and total reward, by its index in its state's group (default: failed, 0). */
    outcome?: (k: number) => { success: boolean; reward: number };
  } = {},
): TrajectoryEvent[] {
  const uniform = rng(seed * 7919 + version);
  const pick = (n: number) => Math.floor(uniform() * n);
  const out: TrajectoryEvent[] = [];
  for (let s = 0; s < states; s++) {
    for (let k = 0; k < perState; k++) {
      const tokens = Array.from({ length: 24 }, () => (!template && uniform() < 0.5 ? 1000 + s * STATE_WORDS + pick(STATE_WORDS) : 10 + pick(SHARED_WORDS)));
      const action = repeat ? `<answer>template ${pick(3)}</answer>` : `<think>${tokens.join(' ')}</think>`;
      const eventTimeMs = T0 + version * 1000 + 100 + s;
      const { success, reward } = outcome(k);
      const step: TrajectoryStep = {
        stepIndex: 0,
        observation: `state ${s}`,
        observationTokenIds: null,
        action,
        actionTokenIds: tokens,
        actionLogProbs: tokens.map(() => logProb),
        policyVersion: version,
        reward,
        actionValid: true,
        stateKey: `s${s}`,
        eventTimeMs,
      };
      out.push({
        runId,
        envName: 'Synthetic',
        envVersion: 'v1',
        groupId: `${runId}-v${version}-g${s}`,
        episodeId: `${runId}-v${version}-s${s}-e${k}`,
        outcome: 'terminated',
        stepCount: 1,
        totalReward: reward,
        success,
        invalidActions: 0,
        gapCount: 0,
        minPolicyVersion: version,
        maxPolicyVersion: version,
        firstEventTimeMs: eventTimeMs,
        lastEventTimeMs: eventTimeMs,
        steps: [step],
        metrics: {},
      });
    }
  }
  return out;
}

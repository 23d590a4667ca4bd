// Small hand-made trajectories and groups for the processor maths tests.
import type { TrajectoryEvent, TrajectoryStep } from '../../../schemas/index.js';
import { scoreGroup, type Group } from '../../../processors/group.js';
import { buildRewardFn } from '../../../processors/rewards/build.js';

export interface StepSpec {
  reward?: number;
  valid?: boolean;
  stateKey?: string | null;
  /** The action text (default `act <stepIndex>`). */
  action?: string;
  /** Number of action tokens (default 3). */
  tokens?: number;
}

export function makeTrajectory(
  steps: StepSpec[],
  { groupId = 'g', episodeId = 'e', success = false, outcome = 'terminated' }: Partial<Pick<TrajectoryEvent, 'groupId' | 'episodeId' | 'success' | 'outcome'>> = {},
): TrajectoryEvent {
  const built: TrajectoryStep[] = steps.map((spec, stepIndex) => ({
    stepIndex,
    observation: `obs ${stepIndex}`,
    observationTokenIds: null,
    action: spec.action ?? `act ${stepIndex}`,
    actionTokenIds: Array.from({ length: spec.tokens ?? 3 }, (_, i) => 100 + i),
    actionLogProbs: Array.from({ length: spec.tokens ?? 3 }, () => -0.5),
    policyVersion: 1,
    reward: spec.reward ?? 0,
    actionValid: spec.valid ?? true,
    stateKey: spec.stateKey ?? null,
    eventTimeMs: 1_000 + stepIndex,
  }));
  const totalReward = built.reduce((sum, s) => sum + s.reward, 0);
  return {
    runId: 'run',
    envName: 'Test',
    envVersion: 'v1',
    groupId,
    episodeId,
    outcome,
    stepCount: built.length,
    totalReward,
    success,
    invalidActions: built.filter((s) => !s.actionValid).length,
    gapCount: 0,
    minPolicyVersion: 1,
    maxPolicyVersion: 1,
    firstEventTimeMs: 1_000,
    lastEventTimeMs: 1_000 + Math.max(0, built.length - 1),
    steps: built,
    metrics: {},
  };
}

const envReturn = buildRewardFn({ terms: [{ kind: 'env_return' }] });

/** A group whose trajectories are single steps with these rewards (scored by environment return). */
export function groupOfRewards(groupId: string, rewards: readonly number[], success?: readonly boolean[]): Group {
  return scoreGroup(
    groupId,
    rewards.map((reward, i) => makeTrajectory([{ reward }], { groupId, episodeId: `${groupId}-${i}`, success: success?.[i] ?? reward > 0 })),
    envReturn,
  );
}

export function close(actual: number, expected: number, tolerance = 1e-9): boolean {
  return Math.abs(actual - expected) <= tolerance;
}

// The state of one episode while its steps arrive: steps indexed by stepIndex, duplicates recognised,
// the end found, and the TrajectoryEvent built once the episode closes. Pure (no RxJS, no clock), so
// the operator stays small and the assembly rules can be tested on their own.
import type { StepEvent, TrajectoryEvent, TrajectoryStep } from '../../schemas/index.js';
import { WireStep } from '../../schemas/wire-step.js';
import { orphanIndices, orphanStep } from './orphan-steps.js';
import { moveStepRewards } from './step-rewards.js';
import { trajectoryStepFields } from './trajectory-step.js';

export type TrajectoryOutcome = 'terminated' | 'truncated' | 'incomplete';

/** Why an episode was closed. */
export type EpisodeCloseReason =
  /** Its terminated/truncated step and every earlier step arrived. */
  | 'ended'
  /** No new step for the idle timeout (with or without an end step: a step was still missing). */
  | 'idle'
  /** Closed to stay within the bound on open episodes. */
  | 'evicted'
  /** The source completed while the episode was open. */
  | 'source-completed';

export type StepVerdict = 'accepted' | 'duplicate';

export class OpenEpisode<T> {
  /** Every item consumed for the episode, duplicates included, in arrival order: the caller acks them. */
  readonly sources: T[] = [];
  private readonly steps = new Map<number, StepEvent>();
  private readonly eventIds = new Set<string>();
  /** Index of the first step flagged terminated or truncated, once one arrived. */
  private endIndex: number | undefined;
  /** Steps present in [0, endIndex]; the episode is whole when this reaches endIndex + 1. */
  private presentUpToEnd = 0;
  duplicates = 0;
  /** Scheduler time of the last accepted step (duplicates do not count as activity). */
  lastActivity: number;

  constructor(now: number) {
    this.lastActivity = now;
  }

  add(item: T, step: StepEvent, now: number): StepVerdict {
    this.sources.push(item);
    // A producer retry repeats the eventId; a re-run actor may repeat the (episode, stepIndex) with a
    // new eventId. Either way the first copy wins, so re-delivery never changes a trajectory.
    if (this.eventIds.has(step.eventId) || this.steps.has(step.stepIndex)) {
      this.duplicates++;
      return 'duplicate';
    }
    this.eventIds.add(step.eventId);
    this.steps.set(step.stepIndex, step);
    this.lastActivity = now;
    if ((step.terminated || step.truncated) && (this.endIndex === undefined || step.stepIndex < this.endIndex)) {
      this.endIndex = step.stepIndex;
      this.presentUpToEnd = 0;
      for (const index of this.steps.keys()) if (index <= step.stepIndex) this.presentUpToEnd++;
    } else if (this.endIndex !== undefined && step.stepIndex <= this.endIndex) {
      this.presentUpToEnd++;
    }
    return 'accepted';
  }

  /** The end step arrived and no earlier step is missing. */
  get whole(): boolean {
    return this.endIndex !== undefined && this.presentUpToEnd === this.endIndex + 1;
  }

  /** Builds the trajectory from the steps that arrived. */
  close(): { trajectory: TrajectoryEvent; stepsAfterEnd: number } {
    return trajectoryFromSteps([...this.steps.values()], { duplicates: this.duplicates });
  }
}

/**
 * Assembles an episode from its steps, in any order (they must be distinct by stepIndex, all of one
 * episode). Steps after the first terminated/truncated step are left out and counted.
 *
 * - outcome: 'terminated' or 'truncated' (terminated wins when a step has both, as in Gymnasium) when
 *   the end step and every step before it are present; otherwise 'incomplete'.
 * - gapCount: missing indices in [0, end] (or [0, highest index] when no end step arrived).
 * - success: the end step's `metrics.success === 1`; false when no end step arrived.
 * - first/lastEventTimeMs: min/max over the steps (producers' clocks need not follow stepIndex).
 * - metrics: `durationMs` (last − first event time), `duplicateSteps`, and `groupSize` when a step
 *   carries a positive integer `info.groupSize` (the expected group size, read by assembleGroups); likewise
 *   `iteration` and `batchGroups` from `info.iteration` and `info.batchGroups` (the actors' iteration and
 *   its groups, which make the group's rollout batch: processors/assembly/rollout-batches.ts); `orphanSteps`
 *   when a step names earlier ones orphans (orphan-steps.ts: kept without their tokens); `rewardedSteps` when
 *   a step names rewards of earlier ones (step-rewards.ts: moved onto those steps, the total unchanged).
 */
export function trajectoryFromSteps(unordered: readonly StepEvent[], { duplicates = 0 }: { duplicates?: number } = {}): { trajectory: TrajectoryEvent; stepsAfterEnd: number } {
  if (unordered.length === 0) throw new RangeError('trajectoryFromSteps needs at least one step');
  const sorted = [...unordered].sort((a, b) => a.stepIndex - b.stepIndex);
  const endAt = sorted.findIndex((s) => s.terminated || s.truncated);
  const kept = endAt === -1 ? sorted : sorted.slice(0, endAt + 1);
  const end = endAt === -1 ? undefined : sorted[endAt]!;
  const first = kept[0]!;
  const last = kept[kept.length - 1]!;
  const gapCount = last.stepIndex + 1 - kept.length;
  const outcome: TrajectoryOutcome = end === undefined || gapCount > 0 ? 'incomplete' : end.terminated ? 'terminated' : 'truncated';

  let totalReward = 0;
  let invalidActions = 0;
  let minPolicyVersion = Infinity;
  let maxPolicyVersion = -Infinity;
  let firstEventTimeMs = Infinity;
  let lastEventTimeMs = -Infinity;
  let groupSize: number | undefined;
  let iteration: number | undefined;
  let batchGroups: number | undefined;
  for (const s of kept) {
    totalReward += s.reward;
    if (!s.actionValid) invalidActions++;
    minPolicyVersion = Math.min(minPolicyVersion, s.policyVersion);
    maxPolicyVersion = Math.max(maxPolicyVersion, s.policyVersion);
    firstEventTimeMs = Math.min(firstEventTimeMs, s.eventTimeMs);
    lastEventTimeMs = Math.max(lastEventTimeMs, s.eventTimeMs);
    groupSize ??= infoCount(s, 'groupSize', 1);
    iteration ??= infoCount(s, 'iteration', 0);
    batchGroups ??= infoCount(s, 'batchGroups', 1);
  }
  const metrics: Record<string, number> = { durationMs: lastEventTimeMs - firstEventTimeMs, duplicateSteps: duplicates };
  if (groupSize !== undefined) metrics.groupSize = groupSize;
  if (iteration !== undefined) metrics.iteration = iteration;
  if (batchGroups !== undefined) metrics.batchGroups = batchGroups;

  return {
    trajectory: {
      runId: first.runId,
      envName: first.envName,
      envVersion: first.envVersion,
      groupId: first.groupId,
      episodeId: first.episodeId,
      outcome,
      stepCount: kept.length,
      totalReward,
      success: end !== undefined && end.metrics.success === 1,
      invalidActions,
      gapCount,
      minPolicyVersion,
      maxPolicyVersion,
      firstEventTimeMs,
      lastEventTimeMs,
      steps: trajectorySteps(kept, metrics),
      metrics,
    },
    stepsAfterEnd: sorted.length - kept.length,
  };
}

/**
 * The trajectory's steps: orphans without their tokens (orphan-steps.ts), counted in metrics.orphanSteps; the step
 * rewards a later step names moved onto their steps (step-rewards.ts), counted in metrics.rewardedSteps.
 */
function trajectorySteps(kept: readonly StepEvent[], metrics: Record<string, number>): TrajectoryStep[] {
  const orphans = orphanIndices(kept);
  if (orphans.size > 0) metrics.orphanSteps = orphans.size;
  const moved = moveStepRewards(
    kept,
    kept.map((s) => (orphans.has(s.stepIndex) ? orphanStep(s) : toTrajectoryStep(s))),
  );
  if (moved.credited > 0) metrics.rewardedSteps = moved.credited;
  return moved.steps;
}

/** `info[key]` as a safe integer ≥ min, or undefined when absent or not one. */
function infoCount(step: StepEvent, key: string, min: number): number | undefined {
  const raw = step.info[key];
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) return undefined;
  const value = Number(raw);
  return value >= min ? value : undefined;
}

function toTrajectoryStep(s: StepEvent): TrajectoryStep {
  // A WireStep is its own trajectory step (a trajectory step's fields are a subset of a step's): copying its
  // fields would decode what it keeps in its bytes, and the trajectory writer copies those bytes instead.
  return s instanceof WireStep ? s : trajectoryStepFields(s);
}

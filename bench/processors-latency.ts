// The processors' latency figure of `bench processors` (pure): how many groups a steady rate publishes, and the
// quantiles of the time from a group's last step acknowledged to its samples readable.
import type { TransactionPhases } from '../processors/exactly-once/transactional-emitter.js';

/** Latency quantiles of a set of groups, ms. */
export interface LatencyQuantiles {
  readonly groups: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

export interface LatencyResult extends LatencyQuantiles {
  readonly stepsPerSecond: number;
  /** The seconds of steady publishing before the measured groups (their groups are in `whole` only). */
  readonly warmUpSeconds: number;
  /** Every group, the warm-up included: a cold start (JIT, each lane's first transaction) is in its tail. */
  readonly whole: LatencyQuantiles;
  /** The transactions committed in the measured window, and p50/p99 of each of their phases (TransactionPhases). */
  readonly transactions: { readonly count: number; readonly phases: Record<keyof TransactionPhases, { readonly p50Ms: number; readonly p99Ms: number }> };
}

/** The value at quantile p of ascending values (nearest rank, as the latency figure has always been cut). */
function quantile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
}

function phaseQuantiles(log: readonly TransactionPhases[]): LatencyResult['transactions']['phases'] {
  const of = (phase: keyof TransactionPhases) => {
    const sorted = log.map((t) => t[phase]).sort((a, b) => a - b);
    return { p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99) };
  };
  return { beginMs: of('beginMs'), sendMs: of('sendMs'), offsetsMs: of('offsetsMs'), commitMs: of('commitMs'), handOffMs: of('handOffMs') };
}

export function latencyQuantiles(latencies: readonly number[]): LatencyQuantiles {
  const sorted = [...latencies].sort((a, b) => a - b);
  return { groups: sorted.length, p50Ms: quantile(sorted, 0.5), p99Ms: quantile(sorted, 0.99), maxMs: sorted[sorted.length - 1] ?? Number.NaN };
}

/** What a steady `stepsPerSecond` publishes: the warm-up's groups, then the measured ones, one group every intervalMs. */
export interface LatencyPlan {
  readonly groups: number;
  readonly warmUpGroups: number;
  readonly allGroups: number;
  readonly intervalMs: number;
}

export function latencyPlan(stepsPerSecond: number, seconds: number, warmUpSeconds: number, stepsPerGroup: number): LatencyPlan {
  const groups = Math.max(1, Math.round((stepsPerSecond * seconds) / stepsPerGroup));
  const warmUpGroups = Math.round((stepsPerSecond * warmUpSeconds) / stepsPerGroup);
  return { groups, warmUpGroups, allGroups: warmUpGroups + groups, intervalMs: 1000 / (stepsPerSecond / stepsPerGroup) };
}

/** What the run observed: when each group's last step was acknowledged and its samples committed, which groups are measured, and the measured transactions. */
export interface LatencyObserved {
  readonly lastStepAcked: ReadonlyMap<string, number>;
  readonly done: ReadonlyMap<string, number>;
  readonly measured: ReadonlySet<string>;
  readonly phaseLog: readonly TransactionPhases[];
}

/** The figure: quantiles over the measured groups, and over every group; the rate is what the publisher reached. */
export function latencyResult(plan: LatencyPlan, stepsPerGroup: number, warmUpSeconds: number, publishedSeconds: number, seen: LatencyObserved): LatencyResult {
  const latencies = [...seen.done].map(([groupId, at]) => ({ groupId, ms: at - seen.lastStepAcked.get(groupId)! }));
  return {
    stepsPerSecond: (plan.allGroups * stepsPerGroup) / publishedSeconds,
    ...latencyQuantiles(latencies.filter((l) => seen.measured.has(l.groupId)).map((l) => l.ms)),
    warmUpSeconds,
    whole: latencyQuantiles(latencies.map((l) => l.ms)),
    transactions: { count: seen.phaseLog.length, phases: phaseQuantiles(seen.phaseLog) },
  };
}

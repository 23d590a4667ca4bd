// The pure steps of one `bench collapse` run: the detector inputs of a batch and of an update (the project's own
// event builders, with deterministic event times), the record and progress line of each iteration, and the run's
// report with its fall and lead time.
import type { CurvePoint } from '../learner/local/local-run.js';
import { batchRewardMetrics, learnerStepEvent } from '../learner/loop/events.js';
import { templateMetricsEntries } from '../learner/collapse/index.js';
import type { UpdateMetrics } from '../learner/train/update-tally.js';
import { rolloutStatsEvents } from '../processors/pipeline/rollout-stats-events.js';
import type { BatchOutput, RawGroup } from '../processors/pipeline/process-batch.js';
import type { DetectorInput, RaisedAlert } from '../detectors/engine.js';
import { defaultFallRule, findFall, leadTime, type AlertMark, type Fall, type LeadTime } from './collapse-analysis.js';
import type { RunLabel } from './collapse-flags.js';

export interface IterationRecord {
  readonly iteration: number;
  readonly envSteps: number;
  readonly trainSuccess: number;
  readonly trainReward: number;
  /** Groups kept by the filters / all groups of the batch. */
  readonly keptGroups: number;
  readonly groups: number;
  readonly meanInGroupRewardStd: number;
  readonly entropy: number | null;
  readonly gradNorm: number | null;
  readonly ppoKl: number | null;
  /** RAGEN-2's Î(X;Z) / log N measured before this iteration's update (null when not measured). */
  readonly templateMi: number | null;
  /** Kinds of the alerts raised while this iteration's events were fed. */
  readonly alerts: string[];
}

export type RunAlert = AlertMark & { readonly at: number; readonly severity: string; readonly message: string };

export interface RunReport {
  readonly label: RunLabel;
  readonly algorithm: string;
  readonly iterations: IterationRecord[];
  readonly alerts: RunAlert[];
  readonly fall: Fall | null;
  readonly lead: LeadTime;
  readonly heldOutGreedy: number | null;
  readonly seconds: number;
}

/** The current iteration's batch statistics and the alerts its rollout events raised. */
export interface BatchInfo {
  readonly kept: number;
  readonly groups: number;
  readonly inGroupStd: number;
  /** The learner step's batch metrics of these samples (batchRewardMetrics). */
  readonly rewardMetrics: Record<string, number>;
  readonly raised: RaisedAlert[];
}

export const NO_BATCH: BatchInfo = Object.freeze({ kept: 0, groups: 0, inGroupStd: Number.NaN, rewardMetrics: {}, raised: [] });

/**
 * A batch's detector inputs, as the processors emit them: its trajectories, then its rollout_stats events at
 * iteration·1000 + 100 (the loop has no clock), so a rollout alert is attributed to the previous update, as live.
 */
export function batchInputs(runId: string, iteration: number, rawGroups: readonly RawGroup[], output: BatchOutput): DetectorInput[] {
  const trajectories: DetectorInput[] = rawGroups.flatMap((group) => group.trajectories.map((event) => ({ type: 'trajectory' as const, event, source: 'local' })));
  const stats = rolloutStatsEvents(
    runId,
    rawGroups.map((g) => g.groupId),
    output.stats,
    iteration * 1000 + 100,
  );
  return [...trajectories, ...stats.map((event) => ({ type: 'rollout_stats' as const, event }))];
}

export function batchInfo(rawGroups: readonly RawGroup[], output: BatchOutput, raised: RaisedAlert[]): BatchInfo {
  return { kept: output.keptGroupIds.length, groups: rawGroups.length, inGroupStd: output.stats.meanInGroupRewardStd, rewardMetrics: batchRewardMetrics(output.samples), raised };
}

/** An update's learner_step input, as the learner emits it (with `batchMetrics` of its samples), at iteration·1000 + 500. */
export function learnerStepInput(runId: string, point: CurvePoint, update: UpdateMetrics, backend: string, batchMetrics: Record<string, number> = {}): DetectorInput {
  const step = learnerStepEvent(
    runId,
    point.iteration,
    point.iteration,
    update,
    { stalenessMean: 0, stalenessMax: 0, droppedStale: 0, duplicates: 0, otherRuns: 0, skippedSamples: 0, replaySamples: 0 },
    backend,
    point.iteration * 1000 + 500,
    { ...(point.template ? templateMetricsEntries(point.template) : {}), ...batchMetrics },
  );
  return { type: 'learner_step', event: step };
}

/** The alerts raised while an iteration's events were fed, as the report lists them. */
export function alertMarks(iteration: number, raised: readonly RaisedAlert[], suffix = ''): RunAlert[] {
  return raised.map((r) => ({ iteration, kind: r.alert.kind, at: r.alert.at, severity: r.alert.severity, message: `${r.alert.message}${suffix}` }));
}

export function iterationRecord(point: CurvePoint, batch: BatchInfo, raised: readonly RaisedAlert[]): IterationRecord {
  const update = point.update;
  return {
    iteration: point.iteration,
    envSteps: point.envSteps,
    trainSuccess: point.trainSuccess,
    trainReward: point.trainReward,
    keptGroups: batch.kept,
    groups: batch.groups,
    meanInGroupRewardStd: batch.inGroupStd,
    entropy: update?.entropy ?? null,
    gradNorm: update?.gradNorm ?? null,
    ppoKl: update?.ppoKl ?? null,
    templateMi: point.template ? point.template.mutualInformation / point.template.miUpperBound : null,
    alerts: raised.map((r) => r.alert.kind),
  };
}

/** The progress line of an iteration, `seconds` into its run. */
export function iterationLine(label: string, algorithm: string, r: IterationRecord, seconds: number): string {
  return (
    `  ${label} (${algorithm}) it ${String(r.iteration).padStart(3)}: ${r.envSteps} env steps, ${seconds.toFixed(0)} s, success ${r.trainSuccess.toFixed(3)}, ` +
    `in-group std ${r.meanInGroupRewardStd.toFixed(3)}, kept ${r.keptGroups}/${r.groups}, entropy ${r.entropy?.toFixed(3) ?? '-'}, grad ${r.gradNorm?.toFixed(2) ?? '-'}, ppo-kl ${r.ppoKl?.toFixed(3) ?? '-'}` +
    (r.templateMi !== null ? `, MI/logN ${r.templateMi.toFixed(3)}` : '') +
    (r.alerts.length ? `  ALERT ${r.alerts.join(', ')}` : '')
  );
}

/** A finished run: when its success fell (collapse-analysis.ts) and how early the first alert came. */
export function runReport(
  run: { readonly label: RunLabel; readonly algorithm: string; readonly heldOutGreedy: number | null; readonly seconds: number },
  records: IterationRecord[],
  alerts: RunAlert[],
): RunReport {
  const fall = findFall(
    records.map((r) => r.trainSuccess),
    defaultFallRule,
  );
  return {
    label: run.label,
    algorithm: run.algorithm,
    iterations: records,
    alerts,
    fall,
    lead: leadTime(alerts, fall),
    heldOutGreedy: run.heldOutGreedy,
    seconds: run.seconds,
  };
}

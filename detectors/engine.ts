// The detectors of every run, fed with events: learner steps, rollout-statistics batches and trajectories.
// Synchronous and deterministic: each detector sees one topic's events of one run, in that topic's order
// (learner.steps and rollout.stats are keyed by run id, so a run's events keep their order), so which
// alerts fire never depends on how the topics interleave.
//
// Where an alert is anchored (its id derives from runId + kind + anchor):
//   learner-step detectors   'step:<learner step>'  — learnerStep and policyVersion are the step's own;
//   rollout-batch detectors  'batch:<batchId>'      — batchId is deterministic from the batch's groups;
//   trajectory windows       'window:<index>'       — the window of policy versions.
// Rollout and window alerts carry no learner step of their own: they are attributed to the run's last
// learner step whose event time is ≤ theirs (learner step 0, policy version 0 before the first step).
// `attributionFinal` tells whether a learner step after that time has been seen, i.e. whether the
// attribution can still change; detect-collapse.ts holds such alerts until it is final.
import type { LearnerStepEvent, RolloutStatsEvent, TrajectoryEvent } from '../schemas/index.js';
import { ActionRepetitionDetector } from './action-repetition.js';
import { ActionWindows, scorable, type ActionWindow } from './action-windows.js';
import { readsTrajectories, type DetectorsConfig } from './config.js';
import { EntropyCollapseDetector } from './entropy-collapse.js';
import { EntropyDetector } from './entropy-swings.js';
import { GradNormSpikeDetector } from './grad-norm-spike.js';
import { PolicyShiftDetector } from './policy-shift.js';
import { ProgressTrend } from './progress.js';
import { InvalidActionRiseDetector } from './invalid-action-rise.js';
import { MutualInformationDetector, mutualInformationPoint } from './mutual-information.js';
import { NonFiniteDetector } from './non-finite.js';
import { ResponseLengthDetector } from './response-length-collapse.js';
import { RewardSuccessGapDetector, type EpisodeOutcome } from './reward-success-gap.js';
import { RewardVarianceCliffDetector } from './reward-variance-cliff.js';
import { TemplateCollapseDetector } from './template-collapse.js';
import type { DetectorAlert } from './types.js';

/** The learner_step metric with the mean episode reward of the samples an update trained on (learner/loop/events.ts). */
export const BATCH_REWARD_MEAN = 'batch.rewardMean';
/** The root mean square of the rewards a learner step trained on (learner/loop/events.ts). */
export const BATCH_REWARD_SCALE = 'batch.rewardScale';
/** The learner_step metric with the entropy floor the loss holds the policy at. */
const ENTROPY_FLOOR = 'loss.entropyTarget';

export type DetectorInput =
  | { readonly type: 'learner_step'; readonly event: LearnerStepEvent }
  | { readonly type: 'rollout_stats'; readonly event: RolloutStatsEvent }
  /** source: where it was read from ('topic/partition'); trajectory windows wait for every source (action-windows.ts). */
  | { readonly type: 'trajectory'; readonly event: TrajectoryEvent; readonly source?: string };

export interface Attribution {
  readonly learnerStep: number;
  readonly policyVersion: number;
}

export interface RaisedAlert {
  readonly runId: string;
  readonly alert: DetectorAlert;
  /** What the alert id derives from besides run and kind: 'step:…', 'batch:…' or 'window:…'. */
  readonly anchor: string;
  /** Event time of the input that raised it (the alert's eventTimeMs: deterministic, not wall time). */
  readonly eventTimeMs: number;
  /** The learner step and policy version, for learner-step alerts; null: attribute by event time. */
  readonly attribution: Attribution | null;
}

export interface EngineStats {
  learnerSteps: number;
  /** Learner steps whose step number was not above the run's last one (a resumed learner repeating steps). */
  repeatedSteps: number;
  rolloutBatches: number;
  trajectories: number;
  /** Trajectory steps that arrived after their window closed. */
  lateSteps: number;
  windowsScored: number;
  /** Windows with too few steps or inputs. */
  windowsSkipped: number;
  /** Windows closed early because a partition lagged by more than maxOpenWindows windows. */
  windowsForced: number;
}

/** Learner steps of a run in event-time order, to attribute other alerts to. */
class Timeline {
  private readonly entries: { timeMs: number; step: number; policyVersion: number }[] = [];
  /** Latest learner event time seen. */
  watermark = Number.NEGATIVE_INFINITY;

  add(timeMs: number, step: number, policyVersion: number): void {
    const entry = { timeMs, step, policyVersion };
    const last = this.entries[this.entries.length - 1];
    if (!last || last.timeMs < timeMs || (last.timeMs === timeMs && last.step <= step)) this.entries.push(entry);
    else this.entries.splice(this.upperBound(timeMs, step), 0, entry);
    this.watermark = Math.max(this.watermark, timeMs);
  }

  /** The last step at or before timeMs. */
  at(timeMs: number): Attribution {
    const i = this.upperBound(timeMs, Number.POSITIVE_INFINITY) - 1;
    const entry = this.entries[i];
    return entry ? { learnerStep: entry.step, policyVersion: entry.policyVersion } : { learnerStep: 0, policyVersion: 0 };
  }

  /** Index of the first entry after (timeMs, step). */
  private upperBound(timeMs: number, step: number): number {
    let lo = 0;
    let hi = this.entries.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const e = this.entries[mid]!;
      if (e.timeMs < timeMs || (e.timeMs === timeMs && e.step <= step)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

class RunDetectors {
  readonly timeline = new Timeline();
  lastStep = -1;
  batches = 0;
  readonly rewardCliff: RewardVarianceCliffDetector;
  readonly entropy: EntropyDetector;
  readonly gradNorm: GradNormSpikeDetector;
  readonly nonFinite: NonFiniteDetector;
  readonly responseLength: ResponseLengthDetector;
  readonly invalidActions: InvalidActionRiseDetector;
  readonly windows: ActionWindows;
  readonly template: TemplateCollapseDetector;
  readonly mutualInformation: MutualInformationDetector;
  readonly repetition: ActionRepetitionDetector;
  readonly rewardGap: RewardSuccessGapDetector;
  readonly entropyCollapse: EntropyCollapseDetector;
  readonly policyShift: PolicyShiftDetector;
  /** The run's progress as the learner steps report it (their batch.rewardMean), and as the rollout batches do. */
  readonly learnerProgress: ProgressTrend;
  readonly rolloutProgress: ProgressTrend;

  constructor(config: DetectorsConfig, trajectorySources: readonly string[]) {
    this.learnerProgress = new ProgressTrend(config.progress);
    this.rolloutProgress = new ProgressTrend(config.progress);
    this.rewardCliff = new RewardVarianceCliffDetector(config.rewardVarianceCliff);
    this.entropy = new EntropyDetector(config.entropy);
    this.gradNorm = new GradNormSpikeDetector(config.gradNormSpike);
    this.nonFinite = new NonFiniteDetector(config.nonFinite);
    this.responseLength = new ResponseLengthDetector(config.responseLength);
    this.invalidActions = new InvalidActionRiseDetector(config.invalidActions);
    this.windows = new ActionWindows(config.actionWindows, trajectorySources);
    this.template = new TemplateCollapseDetector(config.templateCollapse);
    this.mutualInformation = new MutualInformationDetector(config.mutualInformation);
    this.repetition = new ActionRepetitionDetector(config.actionRepetition);
    this.rewardGap = new RewardSuccessGapDetector(config.rewardSuccessGap);
    this.entropyCollapse = new EntropyCollapseDetector(config.entropyCollapse);
    this.policyShift = new PolicyShiftDetector(config.policyShift);
  }
}

export class CollapseEngine {
  private readonly runs = new Map<string, RunDetectors>();
  readonly stats: EngineStats = { learnerSteps: 0, repeatedSteps: 0, rolloutBatches: 0, trajectories: 0, lateSteps: 0, windowsScored: 0, windowsSkipped: 0, windowsForced: 0 };
  private readonly trajectorySources: readonly string[];

  /** trajectorySources: every partition of the trajectories topic ('topic/partition'), see action-windows.ts. */
  constructor(
    readonly config: DetectorsConfig,
    options: { readonly trajectorySources?: readonly string[] } = {},
  ) {
    this.trajectorySources = options.trajectorySources ?? [];
  }

  /** Runs seen so far. */
  get runIds(): string[] {
    return [...this.runs.keys()];
  }

  observe(input: DetectorInput): RaisedAlert[] {
    switch (input.type) {
      case 'learner_step':
        return this.learnerStep(input.event);
      case 'rollout_stats':
        return this.rolloutStats(input.event);
      case 'trajectory':
        return this.trajectory(input.event, input.source);
    }
  }

  /** Scores every open trajectory window (the end of a finite stream). */
  flush(): RaisedAlert[] {
    const raised: RaisedAlert[] = [];
    for (const [runId, run] of this.runs) raised.push(...this.scoreWindows(runId, run, run.windows.flush()));
    return raised;
  }

  /** The learner step an alert of `runId` at `eventTimeMs` is attributed to. */
  attribute(runId: string, eventTimeMs: number): Attribution {
    return this.runs.get(runId)?.timeline.at(eventTimeMs) ?? { learnerStep: 0, policyVersion: 0 };
  }

  /** True once a learner step of the run later than eventTimeMs was seen: the attribution cannot change. */
  attributionFinal(runId: string, eventTimeMs: number): boolean {
    return (this.runs.get(runId)?.timeline.watermark ?? Number.NEGATIVE_INFINITY) > eventTimeMs;
  }

  private run(runId: string): RunDetectors {
    let run = this.runs.get(runId);
    if (!run) {
      run = new RunDetectors(this.config, this.trajectorySources);
      this.runs.set(runId, run);
    }
    return run;
  }

  private learnerStep(e: LearnerStepEvent): RaisedAlert[] {
    const run = this.run(e.runId);
    if (e.step <= run.lastStep) {
      this.stats.repeatedSteps++;
      return [];
    }
    run.lastStep = e.step;
    this.stats.learnerSteps++;
    run.timeline.add(e.eventTimeMs, e.step, e.policyVersion);
    const c = this.config;
    const at = e.step;
    const alerts: DetectorAlert[] = [];
    if (c.nonFinite.enabled) {
      alerts.push(
        ...run.nonFinite.observe({
          at,
          values: {
            totalLoss: e.totalLoss,
            policyLoss: e.policyLoss,
            klLoss: e.klLoss,
            entropyLoss: e.entropyLoss,
            entropy: e.entropy,
            kl: e.kl,
            gradNormPreClip: e.gradNormPreClip,
          },
        }),
      );
    }
    const improving = run.learnerProgress.push(e.metrics[BATCH_REWARD_MEAN]);
    const ppoKl = e.metrics.ppoKl;
    const floor = e.metrics[ENTROPY_FLOOR];
    if (c.entropy.enabled) alerts.push(...run.entropy.observe({ at, entropy: e.entropy, improving, ...(floor === undefined ? {} : { floor }) }));
    if (c.gradNormSpike.enabled) {
      const rewardScale = e.metrics[BATCH_REWARD_SCALE] ?? absolute(e.metrics[BATCH_REWARD_MEAN]);
      alerts.push(...run.gradNorm.observe({ at, gradNorm: e.gradNormPreClip, ...(ppoKl === undefined ? {} : { ppoKl }), ...(rewardScale === undefined ? {} : { rewardScale }) }));
    }
    if (c.policyShift.enabled && ppoKl !== undefined) alerts.push(...run.policyShift.observe({ at, ppoKl }));
    const information = c.mutualInformation.enabled ? mutualInformationPoint(at, e.metrics) : null;
    if (information) alerts.push(...run.mutualInformation.observe({ ...information, improving, declining: run.learnerProgress.declining }));
    const lossTokens = e.metrics.lossTokens;
    if (c.responseLength.enabled && lossTokens !== undefined && e.samples > 0) {
      alerts.push(...run.responseLength.observe({ at, tokensPerSample: lossTokens / e.samples, improving }));
    }
    const attribution = { learnerStep: e.step, policyVersion: e.policyVersion };
    return alerts.map((alert) => ({ runId: e.runId, alert, anchor: `step:${e.step}`, eventTimeMs: e.eventTimeMs, attribution }));
  }

  private rolloutStats(e: RolloutStatsEvent): RaisedAlert[] {
    if (e.scope !== 'batch') return [];
    const run = this.run(e.runId);
    const at = run.batches++;
    this.stats.rolloutBatches++;
    const c = this.config;
    const alerts: DetectorAlert[] = [];
    const improving = run.rolloutProgress.push(e.rewardMean);
    if (c.rewardVarianceCliff.enabled) {
      alerts.push(...run.rewardCliff.observe({ at, inGroupStd: e.meanInGroupRewardStd, rewardMean: e.rewardMean, successRate: e.successRate, improving }));
    }
    if (c.invalidActions.enabled) alerts.push(...run.invalidActions.observe({ at, invalidActionRate: e.invalidActionRate }));
    return alerts.map((alert) => ({
      runId: e.runId,
      alert: { ...alert, evidence: { ...alert.evidence, rolloutBatch: at } },
      anchor: `batch:${e.batchId}`,
      eventTimeMs: e.eventTimeMs,
      attribution: null,
    }));
  }

  private trajectory(e: TrajectoryEvent, source = ''): RaisedAlert[] {
    if (!readsTrajectories(this.config)) return [];
    const run = this.run(e.runId);
    this.stats.trajectories++;
    const lateBefore = run.windows.late;
    const forcedBefore = run.windows.forced;
    const outcome = e.outcome === 'incomplete' ? undefined : { reward: e.totalReward, success: e.success };
    const closed = run.windows.add(e.steps, source, outcome);
    this.stats.lateSteps += run.windows.late - lateBefore;
    this.stats.windowsForced += run.windows.forced - forcedBefore;
    return this.scoreWindows(e.runId, run, closed);
  }

  private scoreWindows(runId: string, run: RunDetectors, windows: readonly ActionWindow[]): RaisedAlert[] {
    const c = this.config;
    const raised: RaisedAlert[] = [];
    for (const window of windows) {
      // The reward gap and the failures' entropy read the window's finished episodes, and check for enough of them themselves.
      const alerts = [
        ...(c.rewardSuccessGap.enabled ? run.rewardGap.observe({ at: window.index, outcomes: window.outcomes }) : []),
        ...(c.entropyCollapse.enabled ? run.entropyCollapse.observe({ at: window.index, ...window.surprisal }) : []),
      ];
      if (scorable(window, c.actionWindows)) {
        this.stats.windowsScored++;
        const point = { at: window.index, pairs: window.pairs, ...successRateOf(window.outcomes) };
        alerts.push(...(c.templateCollapse.enabled ? run.template.observe(point) : []), ...(c.actionRepetition.enabled ? run.repetition.observe(point) : []));
      } else {
        this.stats.windowsSkipped++;
      }
      for (const alert of alerts) {
        raised.push({
          runId,
          alert: { ...alert, evidence: { ...alert.evidence, window: window.index, firstVersion: window.firstVersion, lastVersion: window.lastVersion } },
          anchor: `window:${window.index}`,
          eventTimeMs: window.lastEventTimeMs,
          attribution: null,
        });
      }
    }
    return raised;
  }
}

/** The share of a window's finished episodes that succeeded (nothing when it has none). */
function successRateOf(outcomes: readonly EpisodeOutcome[]): { successRate?: number } {
  return outcomes.length === 0 ? {} : { successRate: outcomes.filter((o) => o.success).length / outcomes.length };
}

/** |x|, or nothing: the reward scale of a learner step from before `batch.rewardScale`, its mean's size. */
function absolute(x: number | undefined): number | undefined {
  return x === undefined ? undefined : Math.abs(x);
}

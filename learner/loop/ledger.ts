// The learner's core (state in, decisions out; the Kafka, checkpoint and TensorFlow.js work is learner.ts's).
// It holds what the learner knows between updates — its version and what that version was trained on, the
// counts every learner step reports, the read positions and trained ids a checkpoint records — and decides:
// per delivery, whether it is held for an update or acknowledged unused; per unit (batch-assembly.ts picks
// it), which of its samples are trained (the staleness bound); per update, what its learner step says, what
// the checkpoint after it records and what the version event announces.
// docs/concepts/versions-and-staleness.md has the rules.
import type { LearnerStepEvent, TrainingSampleEvent } from '../../schemas/index.js';
import type { CheckpointManifest } from '../checkpoint/checkpoint.js';
import { templateMetricsEntries, type TemplateCollapseMetrics } from '../collapse/metrics.js';
import { turnsOf } from '../train/batch.js';
import type { UpdateMetrics } from '../train/update-tally.js';
import { BatchAssembly, type Delivered, type TrainingUnit } from './batch-assembly.js';
import type { LearnerConfig } from './config.js';
import { batchRewardMetrics, learnerStepEvent } from './events.js';
import { ReadPositions } from './read-positions.js';
import { RecentSamples } from './recent-samples.js';
import { dropStale, isReplayed, staleDropLine, stalenessOf } from './staleness.js';

export interface LearnerStats {
  version: number;
  updates: number;
  samplesTrained: number;
  droppedStale: number;
  duplicates: number;
  otherRuns: number;
  skippedSamples: number;
  /** The highest actors' iteration trained on (-1: none yet); published with every version (docs: versions follow data). */
  iteration: number;
  /** Environment steps of the samples trained on, over the run (their turns with policy tokens); published with every version. */
  envSteps: number;
  lastStep?: LearnerStepEvent;
}

/** What the ledger takes over from the checkpoint a learner resumes from. */
export type Restored = Pick<CheckpointManifest, 'version' | 'updates' | 'offsets' | 'recentSampleIds' | 'lastStep' | 'trainedIteration'>;

export type LedgerConfig = Pick<LearnerConfig, 'runId' | 'batchTokens' | 'minSamples' | 'maxWaitMs' | 'batchTimeoutMs' | 'maxStaleness' | 'maxUpdates'>;

/** What the learner's own part of a checkpoint records (the shell adds weights, optimizer state and model). */
export interface CheckpointRecord {
  readonly version: number;
  readonly parentVersion: number | null;
  readonly updates: number;
  readonly offsets: Record<string, string>;
  readonly recentSampleIds: string[];
  readonly lastStep: LearnerStepEvent | null;
  readonly trainedIteration: number;
}

/** The version event to publish once its checkpoint is written: its version, update and what it was trained on. */
export interface Announcement {
  readonly version: number;
  readonly learnerStep: number;
  readonly progress: { readonly iteration: number; readonly envSteps: number };
}

/** A unit's samples within the staleness bound (to build the batch from), and the lines to log. */
export interface UnitPlan {
  readonly kept: TrainingSampleEvent[];
  readonly lines: string[];
}

/** What an update produced, as the ledger needs it. */
export interface UpdateDone {
  readonly metrics: UpdateMetrics;
  /** The samples trained (the batch's, in its canonical order) and how many the batch skipped. */
  readonly samples: readonly TrainingSampleEvent[];
  readonly skipped: number;
  /** The trainer's update count after the update. */
  readonly updates: number;
  readonly backend: string;
  readonly nowMs: number;
  /** The cross-scoring measured before the update, and how long it took; null when not measured. */
  readonly template: { readonly metrics: TemplateCollapseMetrics; readonly durationMs: number } | null;
}

export class LearnerLedger<D extends Delivered> {
  readonly stats: LearnerStats = { version: 0, updates: 0, samplesTrained: 0, droppedStale: 0, duplicates: 0, otherRuns: 0, skippedSamples: 0, iteration: -1, envSteps: 0 };
  readonly positions: ReadPositions;
  private readonly recent: RecentSamples;
  private readonly assembly: BatchAssembly<D>;
  /** Counted since the last learner step, reported with the next one (a unit that trains nothing makes none). */
  private readonly refused = { duplicates: 0, otherRuns: 0, droppedStale: 0 };

  constructor(
    private readonly config: LedgerConfig,
    restored: Restored | null = null,
  ) {
    this.positions = new ReadPositions(restored?.offsets);
    this.recent = new RecentSamples(restored?.recentSampleIds);
    if (restored) {
      this.stats.version = restored.version;
      this.stats.updates = restored.updates;
      this.stats.iteration = restored.trainedIteration ?? -1;
      this.stats.envSteps = restored.lastStep?.metrics.envSteps ?? 0;
    }
    const { runId, batchTokens, minSamples, maxWaitMs, batchTimeoutMs } = config;
    this.assembly = new BatchAssembly<D>({
      runId,
      batchTokens,
      minSamples,
      maxWaitMs,
      batchTimeoutMs,
      trained: (id) => this.recent.has(id),
      lastTrainedIteration: () => this.stats.iteration,
    });
  }

  /** Whether the learner has made the updates it was asked for. */
  get finished(): boolean {
    return this.config.maxUpdates !== null && this.stats.updates >= this.config.maxUpdates;
  }

  /** A delivery: 'held' for an update, or 'refused' (another run's, or trained already): the shell acknowledges it. */
  deliver(delivery: D, nowMs: number): 'held' | 'refused' {
    this.positions.see(delivery);
    const admission = this.assembly.add(delivery, nowMs);
    if (admission === 'held') return 'held';
    const reason = admission === 'duplicate' ? 'duplicates' : 'otherRuns';
    this.refused[reason]++;
    this.stats[reason]++;
    return 'refused';
  }

  /** The next unit to train, or null when none is ready. */
  next(nowMs: number): TrainingUnit<D> | null {
    return this.assembly.next(nowMs);
  }

  /**
   * A unit taken: its samples past the staleness bound are dropped and counted; the read positions move past it
   * (not past a sample held for a later unit); versions from here on cover its iteration, whether or not it
   * trains anything.
   */
  plan(unit: TrainingUnit<D>): UnitPlan {
    const samples = unit.deliveries.map((d) => d.value);
    const { kept, dropped } = dropStale(samples, this.stats.version, this.config.maxStaleness);
    const lines =
      dropped > 0
        ? [
            staleDropLine(
              dropped,
              unit,
              samples.map((s) => s.policyVersion),
              this.stats.version,
              this.config.maxStaleness,
            ),
          ]
        : [];
    this.stats.droppedStale += dropped;
    this.refused.droppedStale += dropped;
    this.positions.advance(this.assembly.heldOffsets());
    if (unit.iteration > this.stats.iteration) this.stats.iteration = unit.iteration;
    return { kept, lines };
  }

  /** The samples the batch could not use (counted, one line each), and whether anything is left to train. */
  built(batch: { readonly rows: number; readonly skipped: readonly { readonly sampleId: string; readonly reason: string }[] }): { train: boolean; lines: string[] } {
    this.stats.skippedSamples += batch.skipped.length;
    return { train: batch.rows > 0, lines: batch.skipped.map((skip) => `learner: skipped sample ${skip.sampleId}: ${skip.reason}`) };
  }

  /** After an update: the next version, its learner step and what its checkpoint records. */
  updated(unit: TrainingUnit<D>, done: UpdateDone): { step: LearnerStepEvent; checkpoint: CheckpointRecord } {
    const versionBefore = this.stats.version;
    const staleness = stalenessOf(done.samples, versionBefore);
    const replaySamples = done.samples.filter(isReplayed).length;
    this.recent.add(done.samples.map((s) => s.sampleId));
    this.stats.version++;
    this.stats.updates = done.updates;
    this.stats.samplesTrained += done.samples.length;
    for (const sample of done.samples) this.stats.envSteps += turnsOf(sample);
    const step = learnerStepEvent(
      this.config.runId,
      done.updates - 1,
      versionBefore,
      done.metrics,
      { ...this.refused, skippedSamples: done.skipped, replaySamples, stalenessMean: staleness.mean, stalenessMax: staleness.max },
      done.backend,
      done.nowMs,
      {
        ...(done.template ? { ...templateMetricsEntries(done.template.metrics), 'template.durationMs': done.template.durationMs } : {}),
        ...batchRewardMetrics(done.samples),
        'batch.iteration': unit.iteration,
        'batch.expected': unit.expected,
        'batch.partial': unit.partial ? 1 : 0,
        envSteps: this.stats.envSteps,
      },
    );
    this.refused.duplicates = 0;
    this.refused.otherRuns = 0;
    this.refused.droppedStale = 0;
    return { step, checkpoint: this.checkpoint(versionBefore, step) };
  }

  /** What a checkpoint of the current version records; `parentVersion` null and no step for a run's version 0. */
  checkpoint(parentVersion: number | null, lastStep: LearnerStepEvent | null): CheckpointRecord {
    return {
      version: this.stats.version,
      parentVersion,
      updates: this.stats.updates,
      offsets: this.positions.record(),
      recentSampleIds: this.recent.record(),
      lastStep,
      trainedIteration: this.stats.iteration,
    };
  }

  /** The version event of the current version: on start (a crash may have come before it went out) and after every update. */
  announcement(): Announcement {
    return { version: this.stats.version, learnerStep: Math.max(0, this.stats.updates - 1), progress: { iteration: this.stats.iteration, envSteps: this.stats.envSteps } };
  }

  /** The line the learner logs on start. */
  startLine(runId: string, checkpointDirectory: string, resumed: boolean): string {
    return resumed
      ? `learner: resumed run ${runId} at version ${this.stats.version} (${this.stats.updates} updates) from ${checkpointDirectory}`
      : `learner: new run ${runId}, initial policy v0 in ${checkpointDirectory}`;
  }
}

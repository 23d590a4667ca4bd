// The fault suite's bookkeeping: everything a run wrote, read back from Kafka (read_committed) and
// ClickHouse (FINAL), reduced to the figures the tests assert and print — steps sent, received in
// trajectories, samples and ClickHouse, duplicates, lost; the learner's versions and steps.
import type { LearnerStepEvent, PolicyVersionEvent, StepEvent, TrainingSampleEvent, TrajectoryEvent } from '../../schemas/index.js';
import { countFinal, readTopic, type FaultRun } from './harness.js';

export interface Ledger {
  readonly steps: StepEvent[];
  readonly trajectories: TrajectoryEvent[];
  readonly samples: TrainingSampleEvent[];
  readonly versions: PolicyVersionEvent[];
  readonly learnerSteps: LearnerStepEvent[];
}

export async function readLedger(run: FaultRun, runId = run.runId): Promise<Ledger> {
  const [steps, trajectories, samples, versions, learnerSteps] = await Promise.all([
    readTopic(run, 'env.steps', 'step'),
    readTopic(run, 'trajectories', 'trajectory'),
    readTopic(run, 'samples', 'sample'),
    readTopic(run, 'policy.versions', 'policy_version'),
    readTopic(run, 'learner.steps', 'learner_step'),
  ]);
  const mine = <T extends { runId: string }>(list: T[]) => list.filter((e) => e.runId === runId);
  return { steps: mine(steps), trajectories: mine(trajectories), samples: mine(samples), versions: mine(versions), learnerSteps: mine(learnerSteps) };
}

const stepKey = (episodeId: string, stepIndex: number) => `${episodeId}#${stepIndex}`;

export interface Figures {
  /** Step events on the steps topic, distinct by (episode, step index), and repeats of an eventId. */
  readonly stepsSent: number;
  readonly stepsDistinct: number;
  readonly stepDuplicates: number;
  /** Trajectory events, distinct episodes among them, and episodes written more than once. */
  readonly trajectories: number;
  readonly episodes: number;
  readonly trajectoryDuplicates: number;
  readonly incompleteTrajectories: number;
  /** Steps of distinct trajectories; steps on the topic in no trajectory (lost); trajectory steps not on the topic, or different from it. */
  readonly stepsInTrajectories: number;
  readonly stepsLost: number;
  readonly stepsForeign: number;
  readonly stepsAltered: number;
  /** Samples, distinct sample ids, repeats; samples expected from the groups (see expectedSamples); samples of no complete trajectory. */
  readonly samples: number;
  readonly samplesDistinct: number;
  readonly sampleDuplicates: number;
  readonly samplesExpected: number;
  readonly samplesOrphan: number;
  /** Policy versions: events, distinct numbers, numbers missing below the highest, repeats that differ from the first (checksum or URI). */
  readonly versionEvents: number;
  readonly versions: number[];
  readonly versionGaps: number[];
  readonly versionConflicts: number;
  /** Learner steps: events, distinct step numbers, missing numbers, samples trained over the distinct steps. */
  readonly learnerStepEvents: number;
  readonly learnerSteps: number;
  readonly learnerStepGaps: number[];
  readonly samplesTrained: number;
  readonly samplesAccounted: number;
}

/**
 * Samples the processors must write (no filters, min group size 2): every complete trajectory of a group
 * with at least two complete members. Groups the actors finished have all G; a group cut short by a
 * killed actor is emitted partial when two or more of its episodes completed.
 */
export function expectedSamples(trajectories: readonly TrajectoryEvent[], minGroupSize = 2): number {
  const completeByGroup = new Map<string, Set<string>>();
  for (const t of trajectories) {
    if (t.outcome === 'incomplete') continue;
    const set = completeByGroup.get(t.groupId) ?? new Set<string>();
    set.add(t.episodeId);
    completeByGroup.set(t.groupId, set);
  }
  return [...completeByGroup.values()].reduce((n, set) => n + (set.size >= minGroupSize ? set.size : 0), 0);
}

const gapsOf = (numbers: readonly number[]): number[] => {
  if (numbers.length === 0) return [];
  const have = new Set(numbers);
  const max = Math.max(...numbers);
  return Array.from({ length: max + 1 }, (_, i) => i).filter((i) => !have.has(i));
};

export function figuresOf(ledger: Ledger): Figures {
  const stepByKey = new Map<string, StepEvent>();
  const eventIds = new Set<string>();
  for (const step of ledger.steps) {
    stepByKey.set(stepKey(step.episodeId, step.stepIndex), step);
    eventIds.add(step.eventId);
  }
  const byEpisode = new Map<string, TrajectoryEvent>();
  for (const t of ledger.trajectories) if (!byEpisode.has(t.episodeId)) byEpisode.set(t.episodeId, t);
  const inTrajectories = new Set<string>();
  let foreign = 0;
  let altered = 0;
  for (const t of byEpisode.values()) {
    for (const s of t.steps) {
      const key = stepKey(t.episodeId, s.stepIndex);
      inTrajectories.add(key);
      const source = stepByKey.get(key);
      if (!source) foreign++;
      else if (source.action !== s.action || source.policyVersion !== s.policyVersion || source.reward !== s.reward) altered++;
    }
  }
  const lost = [...stepByKey.keys()].filter((key) => !inTrajectories.has(key)).length;

  const sampleIds = new Set(ledger.samples.map((s) => s.sampleId));
  const completeEpisodes = new Set([...byEpisode.values()].filter((t) => t.outcome !== 'incomplete').map((t) => t.episodeId));
  const orphan = ledger.samples.filter((s) => !completeEpisodes.has(s.episodeId)).length;

  const firstVersion = new Map<number, PolicyVersionEvent>();
  let conflicts = 0;
  for (const v of ledger.versions) {
    const first = firstVersion.get(v.version);
    if (!first) firstVersion.set(v.version, v);
    else if (first.checksum !== v.checksum || first.weightsUri !== v.weightsUri) conflicts++;
  }
  const versions = [...firstVersion.keys()].sort((a, b) => a - b);
  const stepByNumber = new Map<number, LearnerStepEvent>();
  for (const s of ledger.learnerSteps) if (!stepByNumber.has(s.step)) stepByNumber.set(s.step, s);
  const learnerStepNumbers = [...stepByNumber.keys()].sort((a, b) => a - b);
  const distinctSteps = [...stepByNumber.values()];
  const metric = (s: LearnerStepEvent, name: string) => s.metrics[name] ?? 0;

  return {
    stepsSent: ledger.steps.length,
    stepsDistinct: stepByKey.size,
    stepDuplicates: ledger.steps.length - eventIds.size,
    trajectories: ledger.trajectories.length,
    episodes: byEpisode.size,
    trajectoryDuplicates: ledger.trajectories.length - byEpisode.size,
    incompleteTrajectories: [...byEpisode.values()].filter((t) => t.outcome === 'incomplete').length,
    stepsInTrajectories: inTrajectories.size,
    stepsLost: lost,
    stepsForeign: foreign,
    stepsAltered: altered,
    samples: ledger.samples.length,
    samplesDistinct: sampleIds.size,
    sampleDuplicates: ledger.samples.length - sampleIds.size,
    samplesExpected: expectedSamples([...byEpisode.values()]),
    samplesOrphan: orphan,
    versionEvents: ledger.versions.length,
    versions,
    versionGaps: gapsOf(versions),
    versionConflicts: conflicts,
    learnerStepEvents: ledger.learnerSteps.length,
    learnerSteps: learnerStepNumbers.length,
    learnerStepGaps: gapsOf(learnerStepNumbers),
    samplesTrained: distinctSteps.reduce((n, s) => n + s.samples, 0),
    // Every sample a batch took: trained, or counted as a duplicate / stale / other run / skipped.
    samplesAccounted: distinctSteps.reduce((n, s) => n + s.samples + metric(s, 'duplicates') + metric(s, 'droppedStale') + metric(s, 'otherRuns') + metric(s, 'skippedSamples'), 0),
  };
}

export interface ClickHouseFigures {
  readonly steps: number;
  readonly stepEventIds: number;
  readonly trajectories: number;
  readonly samples: number;
  readonly learnerSteps: number;
  readonly versions: number;
}

/** What ClickHouse holds of the run, one row per event (FINAL), and the distinct step event ids. */
export async function clickHouseFigures(run: FaultRun, runId = run.runId): Promise<ClickHouseFigures> {
  const where = `run_id = '${runId}'`;
  const [steps, trajectories, samples, learnerSteps, versions, ids] = await Promise.all([
    countFinal(run, 'steps', where),
    countFinal(run, 'trajectories', where),
    countFinal(run, 'samples', where),
    countFinal(run, 'learner_steps', where),
    countFinal(run, 'policy_versions', where),
    run.ch.queryJson<{ n: string }>(`SELECT uniqExact(event_id) AS n FROM steps WHERE ${where}`),
  ]);
  return { steps, stepEventIds: Number(ids[0]!.n), trajectories, samples, learnerSteps, versions };
}

/** One line of figures, as every fault test prints it. */
export function describe(label: string, f: Figures, ch?: ClickHouseFigures): string {
  const versions = f.versions.length > 0 ? `${f.versions[0]}..${f.versions.at(-1)}` : 'none';
  let line =
    `fault[${label}]: steps ${f.stepsSent} sent, ${f.stepsInTrajectories} in trajectories, ${f.stepDuplicates} duplicates, ${f.stepsLost} lost; ` +
    `trajectories ${f.episodes} (${f.incompleteTrajectories} incomplete), ${f.trajectoryDuplicates} duplicates; ` +
    `samples ${f.samplesDistinct} of ${f.samplesExpected} expected, ${f.sampleDuplicates} duplicates; ` +
    `versions ${versions} (${f.versionEvents} events, gaps ${f.versionGaps.length}); learner steps ${f.learnerSteps} (${f.learnerStepEvents} events, gaps ${f.learnerStepGaps.length}), ${f.samplesTrained} samples trained`;
  if (ch)
    line += `; ClickHouse steps ${ch.steps} (${ch.stepEventIds} event ids), trajectories ${ch.trajectories}, samples ${ch.samples}, learner steps ${ch.learnerSteps}, versions ${ch.versions}`;
  return line;
}

export interface Drained {
  readonly ledger: Ledger;
  readonly figures: Figures;
  readonly clickhouse: ClickHouseFigures;
}

export interface DrainOptions {
  /** A learner trains this run: wait until it trained all but a tail smaller than its --min-samples. */
  readonly learnerMinSamples?: number;
  /** Samples the learner dropped as past its staleness bound (they count as handled; learnerDrops reads them). */
  readonly learnerDropped?: () => number;
  readonly timeoutMs?: number;
  /** Extra text for the timeout message (e.g. the parts' last lines). */
  readonly context?: () => string;
}

/**
 * Polls until everything the run's actors wrote went all the way: every step in a trajectory, every
 * expected sample written, (with a learner) trained, and every event of it in ClickHouse.
 */
export async function waitDrained(run: FaultRun, runId: string, options: DrainOptions = {}): Promise<Drained> {
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  let last: Drained | undefined;
  for (;;) {
    const ledger = await readLedger(run, runId);
    const figures = figuresOf(ledger);
    const clickhouse = await clickHouseFigures(run, runId);
    last = { ledger, figures, clickhouse };
    const f = figures;
    const trained = options.learnerMinSamples === undefined || f.samplesDistinct - f.samplesTrained - (options.learnerDropped?.() ?? 0) < options.learnerMinSamples;
    const stored =
      clickhouse.steps >= f.stepsDistinct &&
      clickhouse.trajectories >= f.episodes &&
      clickhouse.samples >= f.samplesDistinct &&
      clickhouse.learnerSteps >= f.learnerSteps &&
      clickhouse.versions >= f.versions.length;
    if (f.stepsSent > 0 && f.stepsLost === 0 && f.samplesDistinct >= f.samplesExpected && trained && stored) return last;
    if (Date.now() > deadline) {
      throw new Error(`run ${runId} did not drain in time:\n${describe('not drained', f, clickhouse)}\n${options.context?.() ?? ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** Stale samples a learner dropped, from its log lines ("learner: dropped N stale samples …"), over all its lives. */
export function learnerDrops(lines: readonly string[]): number {
  let dropped = 0;
  for (const line of lines) {
    const match = /learner: dropped (\d+) stale samples/.exec(line);
    if (match) dropped += Number(match[1]);
  }
  return dropped;
}

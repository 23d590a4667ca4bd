// A replay: selected trajectories → groups → today's rewards, filters and advantages → samples marked as
// replayed → <prefix>.samples, where the learner trains them with the decoupled objective (importance
// weights against the behaviour log-probs the events recorded, truncated at the cap; see learner.ts).
//
// Decisions:
//   - Groups are rebuilt by groupId from what was selected. A group is processed when it has at least
//     minGroupSize trajectories (default 2, as the live processors; at least 2, because a group of one has
//     no reward std and its sample would not pass validation) and, with completeGroups, every
//     trajectory it announced (metrics.groupSize; a group that announces nothing counts as complete).
//     Group-relative advantages over a partial group are legitimate but different from the live ones;
//     completeGroups is the switch for "exactly the groups the actors made".
//   - Groups are processed in batches of batchGroups (default 64, the live processors' maxBatchGroups), in
//     event-time order: batch-scope filters and estimators (StarPO-S, REINFORCE++) see batches like the
//     live ones. Trajectories inside a group are ordered by episode id, so the same selection always gives
//     the same samples.
//   - Processing is batchProcessor with today's settings (defaults as `trajflow processors`: env_return,
//     grpo, no filters, the processors' tokenizer for observations without token ids).
//   - Each sample's estimator becomes 'replay:' + estimator and its id is sampleIdOf(run, episode,
//     'replay-<replayId>'): never a live sample's id, and the same for a re-run of the same replayId (the
//     learner drops the repeats). batchProcessor has no sampleIdScope option, so the id is recomputed
//     here with the same function buildSample uses.
//   - intoRunId (optional) retargets the samples to another run's learner (the learner trains only its
//     own run's samples); by default they go to the selected run.
//   - A group whose samples cannot be built (SampleError: e.g. a trajectory without action tokens) is
//     dropped with reason 'sample-error' and the rest of its batch is processed without it.
//   - Every sample is checked with validateEvent before it is published (what consumers check after
//     decoding): one that fails is not published, its group is dropped with reason 'invalid-sample'.
//   - Selecting by success (or a reward threshold) leaves groups whose rewards are all equal: group-relative
//     estimators (grpo, rloo, dr_grpo, the baselines) give them zero advantages. That is the estimator's
//     answer, not hidden here; only reinforce_plus_plus (whitened over the batch, no group baseline) still
//     separates trajectories whose rewards differ across the batch.
import { randomBytes } from 'node:crypto';
import { topicName } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import { estimatorByName } from '../../processors/advantages/registry.js';
import { filterNames, type FilterName } from '../../processors/filters/registry.js';
import { batchProcessor, type ProcessingConfig, type RawGroup } from '../../processors/pipeline/process-batch.js';
import { SampleError, sampleIdOf } from '../../processors/samples/index.js';
import { validateEvent, type TrainingSampleEvent, type TrajectoryEvent } from '../../schemas/index.js';
import type { Backbone } from '../../streams/index.js';
import { REPLAY_ESTIMATOR_PREFIX, replaySampleScope } from './marker.js';
import { buildSelection, selectTrajectories, type ReplaySelection, type ReplaySelectionInput, type SelectOptions, type UnavailableTrajectory } from './select.js';

export interface ReplayProcessing {
  readonly processing: ProcessingConfig;
  readonly minGroupSize: number;
  readonly completeGroups: boolean;
  readonly batchGroups: number;
  readonly replayId: string;
  /** Run whose learner gets the samples; null: the selected run. */
  readonly intoRunId: string | null;
}

export type ReplayProcessingInput = Partial<Omit<ReplayProcessing, 'processing' | 'intoRunId'>> & {
  readonly processing?: Partial<ProcessingConfig>;
  readonly intoRunId?: string | null;
};

/** `trajflow processors`' defaults. */
export const DEFAULT_PROCESSING: ProcessingConfig = {
  reward: { terms: [{ kind: 'env_return' }] },
  estimator: { name: 'grpo' },
  filters: [],
};

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export function newReplayId(now = Date.now()): string {
  return `${now.toString(36)}-${randomBytes(3).toString('hex')}`;
}

/** Checks the processing settings (ConfigError); builds the reward, filters and estimator once to check them. */
export function buildReplayProcessing(input: ReplayProcessingInput = {}): ReplayProcessing {
  const processing: ProcessingConfig = { ...DEFAULT_PROCESSING, ...input.processing };
  if (typeof processing.estimator?.name !== 'string')
    throw new ConfigError(`replay: processing.estimator must be {"name": …}; use one of grpo, dr_grpo, rloo, starpo, reinforce_plus_plus, reinforce_plus_plus_baseline, gigpo`);
  estimatorByName(processing.estimator.name);
  if (!Array.isArray(processing.filters)) throw new ConfigError('replay: processing.filters must be a list of {"name": …}');
  for (const f of processing.filters) {
    if (!filterNames.includes(f?.name as FilterName)) throw new ConfigError(`replay: unknown filter ${JSON.stringify(f?.name)}; use one of ${filterNames.join(', ')}`);
  }
  batchProcessor(processing); // throws ConfigError on a bad reward spec or filter options
  const { minGroupSize = 2, completeGroups = false, batchGroups = 64, replayId = newReplayId(), intoRunId = null } = input;
  if (!Number.isInteger(minGroupSize) || minGroupSize < 2)
    throw new ConfigError(`replay: minGroupSize must be an integer >= 2 (a group of one has no reward std), got ${minGroupSize}`);
  if (!Number.isInteger(batchGroups) || batchGroups < 1) throw new ConfigError(`replay: batchGroups must be an integer >= 1, got ${batchGroups}`);
  if (typeof completeGroups !== 'boolean') throw new ConfigError(`replay: completeGroups must be true or false, got ${JSON.stringify(completeGroups)}`);
  if (typeof replayId !== 'string' || !ID.test(replayId)) throw new ConfigError(`replay: replayId=${JSON.stringify(replayId)} must be 1-100 letters, digits, '.', '_' or '-'`);
  if (intoRunId !== null && (typeof intoRunId !== 'string' || !ID.test(intoRunId)))
    throw new ConfigError(`replay: intoRunId=${JSON.stringify(intoRunId)} must be 1-100 letters, digits, '.', '_' or '-'`);
  return Object.freeze({ processing, minGroupSize, completeGroups, batchGroups, replayId, intoRunId });
}

export interface DroppedReplayGroup {
  readonly groupId: string;
  /** 'too-small', 'incomplete-group', 'sample-error', 'invalid-sample', or '<filter>/<reason>' for a filter's drop. */
  readonly reason: string;
  readonly detail: string;
}

export interface ReplayPlan {
  readonly samples: TrainingSampleEvent[];
  readonly groups: number;
  readonly keptGroups: number;
  readonly dropped: DroppedReplayGroup[];
}

/** Groups, processes and marks the selected trajectories. Pure: the same trajectories and settings give the same samples. */
export function planReplay(trajectories: readonly TrajectoryEvent[], settings: ReplayProcessing): ReplayPlan {
  const byGroup = new Map<string, TrajectoryEvent[]>();
  for (const t of trajectories) byGroup.set(t.groupId, [...(byGroup.get(t.groupId) ?? []), t]);
  const groups = [...byGroup]
    .map(([groupId, members]) => ({ groupId, trajectories: [...members].sort((a, b) => (a.episodeId < b.episodeId ? -1 : a.episodeId > b.episodeId ? 1 : 0)) }))
    .sort((a, b) => startOf(a) - startOf(b) || (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));

  const dropped: DroppedReplayGroup[] = [];
  const eligible: RawGroup[] = [];
  for (const group of groups) {
    const size = group.trajectories.length;
    const announced = group.trajectories.map((t) => t.metrics.groupSize).find((n) => n !== undefined && Number.isInteger(n) && n >= 1);
    if (size < settings.minGroupSize) dropped.push({ groupId: group.groupId, reason: 'too-small', detail: `${size} selected trajectories, minGroupSize ${settings.minGroupSize}` });
    else if (settings.completeGroups && announced !== undefined && size < announced)
      dropped.push({ groupId: group.groupId, reason: 'incomplete-group', detail: `${size} of the ${announced} trajectories the group announced were selected` });
    else eligible.push(group);
  }

  const process = batchProcessor(settings.processing);
  const scope = replaySampleScope(settings.replayId);
  const samples: TrainingSampleEvent[] = [];
  let kept = 0;
  for (let i = 0; i < eligible.length; i += settings.batchGroups) {
    const batch = eligible.slice(i, i + settings.batchGroups);
    const { output, failed } = processIsolatingErrors(process, batch);
    dropped.push(...failed);
    if (!output) continue;
    for (const d of output.dropped) dropped.push({ groupId: d.groupId, reason: `${d.filter}/${d.reason}`, detail: d.detail });
    const marked = output.samples.map((s) => ({
      ...s,
      sampleId: sampleIdOf(s.runId, s.episodeId, scope),
      runId: settings.intoRunId ?? s.runId,
      estimator: REPLAY_ESTIMATOR_PREFIX + s.estimator,
    }));
    const invalid = new Map<string, string>();
    for (const s of marked) {
      const check = validateEvent('sample', s);
      if (!check.ok && !invalid.has(s.groupId)) invalid.set(s.groupId, `sample of episode ${s.episodeId}: ${check.field} ${check.message}`);
    }
    for (const [groupId, detail] of invalid) dropped.push({ groupId, reason: 'invalid-sample', detail });
    kept += output.keptGroupIds.filter((id) => !invalid.has(id)).length;
    samples.push(...marked.filter((s) => !invalid.has(s.groupId)));
  }
  return { samples, groups: groups.length, keptGroups: kept, dropped };
}

function startOf(group: RawGroup): number {
  return Math.min(...group.trajectories.map((t) => t.lastEventTimeMs));
}

/** Runs a batch; when a sample cannot be built, finds the groups at fault (alone), drops them and runs the rest. */
function processIsolatingErrors(
  process: ReturnType<typeof batchProcessor>,
  batch: readonly RawGroup[],
): { output?: ReturnType<ReturnType<typeof batchProcessor>>; failed: DroppedReplayGroup[] } {
  try {
    return { output: process(batch), failed: [] };
  } catch (error) {
    if (!(error instanceof SampleError)) throw error;
  }
  const failed: DroppedReplayGroup[] = [];
  const good: RawGroup[] = [];
  for (const group of batch) {
    try {
      process([group]);
      good.push(group);
    } catch (error) {
      if (!(error instanceof SampleError)) throw error;
      failed.push({ groupId: group.groupId, reason: 'sample-error', detail: error.message });
    }
  }
  // A batch-scope step could still fail on the combination; then the groups go one by one.
  try {
    return { output: good.length > 0 ? process(good) : undefined, failed };
  } catch (error) {
    if (!(error instanceof SampleError)) throw error;
    for (const group of good) failed.push({ groupId: group.groupId, reason: 'sample-error', detail: `failed in its batch: ${error.message}` });
    return { failed };
  }
}

export interface ReplayReport {
  readonly replayId: string;
  readonly selection: ReplaySelection;
  /** Run the samples were published for (the learner of this run trains them). */
  readonly runId: string;
  readonly samplesTopic: string;
  readonly estimator: string;
  readonly sampleIdScope: string;
  /** Trajectory events scanned (Kafka) or rows returned (ClickHouse). */
  readonly trajectoriesRead: number;
  readonly trajectoriesSelected: number;
  /** Selected trajectories rebuilt from ClickHouse's steps table (not found in Kafka). */
  readonly rebuiltFromSteps: number;
  readonly duplicates: number;
  readonly undecodable: number;
  readonly unavailable: UnavailableTrajectory[];
  readonly groups: number;
  readonly groupsKept: number;
  readonly droppedGroups: DroppedReplayGroup[];
  readonly droppedByReason: Record<string, number>;
  /** Samples built; all of them are published unless dryRun. */
  readonly samplesBuilt: number;
  readonly samplesPublished: number;
  /** Policy versions the published samples were sampled with (oldest and newest), null without samples. */
  readonly policyVersions: { readonly min: number; readonly max: number } | null;
  readonly dryRun: boolean;
  readonly durationMs: number;
}

export interface StartReplayOptions extends SelectOptions {
  /** Select and process, but publish nothing. */
  readonly dryRun?: boolean;
  /** Called with (published, total) as the broker acknowledges samples, for progress. */
  readonly onPublished?: (published: number, total: number) => void;
}

/**
 * Runs one replay to the end: select, process with today's settings, publish the marked samples to
 * <prefix>.samples keyed by group id (what the live processors do). Resolves with the counts once every
 * sample is acknowledged by the broker. Validates both inputs (ConfigError), so it can serve an HTTP body.
 */
export async function startReplay(
  backbone: Backbone,
  selectionInput: ReplaySelection | ReplaySelectionInput,
  processingInput: ReplayProcessing | ReplayProcessingInput = {},
  options: StartReplayOptions = {},
): Promise<ReplayReport> {
  const started = performance.now();
  const selection = buildSelection(selectionInput as ReplaySelectionInput);
  const settings = buildReplayProcessing(processingInput as ReplayProcessingInput);
  const selected = await selectTrajectories(backbone, selection, options);
  const plan = planReplay(
    selected.trajectories.map((t) => t.trajectory),
    settings,
  );
  const samplesTopic = topicName(backbone.config, 'samples');
  if (!options.dryRun && plan.samples.length > 0) {
    let published = 0;
    const total = plan.samples.length;
    await Promise.all(plan.samples.map((sample) => backbone.producer.send(samplesTopic, 'sample', sample, sample.groupId).then(() => options.onPublished?.(++published, total))));
    await backbone.producer.flush();
  }
  const droppedByReason: Record<string, number> = {};
  for (const d of plan.dropped) droppedByReason[d.reason] = (droppedByReason[d.reason] ?? 0) + 1;
  const versions = plan.samples.map((s) => s.policyVersion);
  return {
    replayId: settings.replayId,
    selection,
    runId: settings.intoRunId ?? selection.runId,
    samplesTopic,
    estimator: REPLAY_ESTIMATOR_PREFIX + settings.processing.estimator.name,
    sampleIdScope: replaySampleScope(settings.replayId),
    trajectoriesRead: selected.read,
    trajectoriesSelected: selected.trajectories.length,
    rebuiltFromSteps: selected.trajectories.filter((t) => t.from === 'steps').length,
    duplicates: selected.duplicates,
    undecodable: selected.undecodable,
    unavailable: selected.unavailable,
    groups: plan.groups,
    groupsKept: plan.keptGroups,
    droppedGroups: plan.dropped,
    droppedByReason,
    samplesBuilt: plan.samples.length,
    samplesPublished: options.dryRun ? 0 : plan.samples.length,
    policyVersions: versions.length === 0 ? null : { min: Math.min(...versions), max: Math.max(...versions) },
    dryRun: options.dryRun === true,
    durationMs: performance.now() - started,
  };
}

/** The report as a few readable lines. */
export function formatReplayReport(r: ReplayReport): string {
  const s = r.selection;
  const reasons = Object.entries(r.droppedByReason)
    .map(([reason, n]) => `${reason} ${n}`)
    .join(', ');
  const unavailable = r.unavailable.length === 0 ? '' : `, ${r.unavailable.length} unavailable (${[...new Set(r.unavailable.map((u) => u.reason))].join(', ')})`;
  const lines = [
    `replay ${r.replayId}: run ${s.runId} from ${s.source}${s.source === 'clickhouse' ? ` (fetch ${s.fetch ?? 'auto'})` : ''}`,
    `  trajectories: ${r.trajectoriesRead} read, ${r.trajectoriesSelected} selected${r.rebuiltFromSteps > 0 ? ` (${r.rebuiltFromSteps} rebuilt from ClickHouse steps)` : ''}, ${r.duplicates} duplicates, ${r.undecodable} undecodable${unavailable}`,
    `  groups: ${r.groups}, ${r.groupsKept} kept, ${r.droppedGroups.length} dropped${reasons ? ` (${reasons})` : ''}`,
    `  samples: ${r.dryRun ? `${r.samplesBuilt} built, none published (dry run)` : `${r.samplesPublished} published to ${r.samplesTopic}`} for run ${r.runId}, estimator ${r.estimator}, id scope ${r.sampleIdScope}` +
      (r.policyVersions ? `, sampled with policy versions ${r.policyVersions.min}..${r.policyVersions.max}` : ''),
    `  took ${(r.durationMs / 1000).toFixed(1)} s`,
  ];
  for (const d of r.droppedGroups.slice(0, 20)) lines.push(`  dropped group ${d.groupId}: ${d.reason} (${d.detail})`);
  if (r.droppedGroups.length > 20) lines.push(`  … ${r.droppedGroups.length - 20} more dropped groups`);
  for (const u of r.unavailable.slice(0, 20)) lines.push(`  unavailable episode ${u.episodeId}: ${u.reason} (${u.detail})`);
  return lines.join('\n');
}

// The processors' operator chain: step envelopes in; units of output handed to `emit` (output-units.ts);
// each rollout batch's statistics out. No Kafka: the shell (processor.ts) feeds it the consumer's envelopes
// and writes what it emits.
//
//   a step read on another partition than its group's home → written to the home partition (re-routed);
//   steps of an episode already written (marked) → acknowledged only, not assembled again;
//   the rest, per consumer-group generation → a step whose announced group size is malformed or disagrees
//   with its group's → dead letter; the others → trajectories → groups → rollout batches → per run:
//   rewards, filters, advantages, samples (process-batch.ts) → one unit per group.
// A rebalance starts a new generation: the operators' open episodes and groups are dropped (their steps come
// again from the committed offsets) by restarting the chain for the new generation (perGeneration).
import { filter, groupBy, map, mergeMap, switchMap, type Observable, type OperatorFunction } from 'rxjs';
import type { DeadLetterInput, HeldDeadLetterSink } from '../../streams/dead-letter.js';
import { WireStep } from '../../schemas/wire-step.js';
import {
  assembleGroups,
  assembleTrajectories,
  createAssemblyStats,
  createGroupAssemblyStats,
  GroupOpenEpisodes,
  GroupSizes,
  type AssemblyStats,
  type GroupAssemblyStats,
  type GroupDrop,
  type TrajectoryGroup,
} from '../assembly/index.js';
import { rolloutBatches, type BatchKey } from '../assembly/rollout-batches.js';
import type { EpisodeMarks } from '../exactly-once/episode-marks.js';
import type { OutputUnit } from '../exactly-once/transactional-emitter.js';
import type { BatchStats } from '../stats/batch-stats.js';
import { acknowledgeOnly, episodesUnit, rolloutBatchUnits, type Member, type StepEnvelope } from './output-units.js';
import { homePartition } from './home-partition.js';
import type { BatchOutput, RawGroup } from './process-batch.js';
import type { ProcessorsConfig } from './config.js';

export interface StepPipelineOptions {
  readonly config: Omit<ProcessorsConfig, 'flushIntervalMs' | 'writeAsQueued' | 'topics'>;
  readonly processBatch: (groups: readonly RawGroup[]) => BatchOutput;
  /** The episodes already written (by this process, or by any earlier owner of the partitions). */
  readonly marks: Pick<EpisodeMarks, 'has'>;
  /** Takes a unit to write; called synchronously, in the order the units are made. */
  readonly emit: (unit: OutputUnit) => void;
  /** Takes a step refused before assembly (its dead letter, written with its offset). Default: acknowledged only. */
  readonly deadLetter?: HeldDeadLetterSink['hold'];
  /**
   * The steps topic's partition count, for each step's home partition (home-partition.ts), and the bytes to
   * re-route a step with. Without it (or while the count is unknown, 0) no step is re-routed.
   */
  readonly routing?: { readonly partitions: () => number; readonly bytesOf: (step: StepEnvelope['value']) => Buffer };
  /** The assembly counters (groups closed by reason, …); default fresh ones. */
  readonly stats?: PipelineStats;
}

/** The counters of the operator chain, for the shell to show. */
export interface PipelineStats {
  readonly assembly: AssemblyStats;
  readonly groups: GroupAssemblyStats;
}

export function createPipelineStats(): PipelineStats {
  return { assembly: createAssemblyStats(), groups: createGroupAssemblyStats() };
}

export function stepPipeline(options: StepPipelineOptions): OperatorFunction<StepEnvelope, BatchStats> {
  const { marks, emit } = options;
  const stats = options.stats ?? createPipelineStats();
  const { routing } = options;
  return (steps$) =>
    steps$.pipe(
      // A step away from its group's home partition is moved there, in the transaction of its offset, and
      // assembled by whoever owns that partition: so each group is assembled in one place whatever partitioner
      // its producers used (docs/design/group-completion.md).
      filter((envelope) => {
        const partitions = routing?.partitions() ?? 0;
        if (partitions <= 1 || homePartition(envelope.value.groupId, partitions) === envelope.partition) return true;
        emit(rerouteUnit(envelope, routing!.bytesOf(envelope.value)));
        return false;
      }),
      // Steps of episodes already turned into output (before a crash or on another instance): skip, acknowledge.
      filter((envelope) => {
        if (!marks.has(envelope.value.runId, envelope.value.episodeId)) return true;
        emit(acknowledgeOnly(envelope.generation, envelope));
        return false;
      }),
      perGeneration((generation) => generationPipeline(generation, options, stats)),
    );
}

/** A fresh `pipelineOf(generation)` for each generation; the previous one is unsubscribed (its state dropped) when the next begins. */
export function perGeneration<T extends { readonly generation: number }, R>(pipelineOf: (generation: number) => OperatorFunction<T, R>): OperatorFunction<T, R> {
  return (source) =>
    source.pipe(
      groupBy((item) => item.generation),
      switchMap((generation$) => generation$.pipe(pipelineOf(generation$.key))),
    );
}

/** One generation's chain, from its steps to its rollout batches' statistics. */
function generationPipeline(generation: number, options: StepPipelineOptions, stats: PipelineStats): OperatorFunction<StepEnvelope, BatchStats> {
  const { config, processBatch, emit } = options;
  const { consumerGroupId, iterationIdleMs } = config;
  const deadLetter = options.deadLetter ?? ((_letter: DeadLetterInput, envelope: StepEnvelope) => emit(acknowledgeOnly(generation, envelope)));
  const groupSizes = new GroupSizes();
  const openEpisodes = new GroupOpenEpisodes();
  return (steps$: Observable<StepEnvelope>) =>
    steps$.pipe(
      filter((envelope) => {
        const verdict = groupSizes.check(envelope.value);
        if (verdict.ok) return true;
        deadLetter(invalidStepLetter(envelope, verdict.detail), envelope);
        return false;
      }),
      assembleTrajectories<StepEnvelope>({
        stepOf: (envelope) => envelope.value,
        idleTimeoutMs: config.idleTimeoutMs,
        flushOnComplete: false,
        stats: stats.assembly,
        openEpisodesByGroup: openEpisodes,
        onDiscard: (envelope) => emit(acknowledgeOnly(generation, envelope)),
      }),
      assembleGroups<StepEnvelope>({
        groupSize: config.groupSize,
        minGroupSize: config.minGroupSize,
        groupTimeoutMs: config.groupTimeoutMs,
        idleCloseMs: config.groupIdleCloseMs,
        hasOpenEpisodes: (runId, groupId) => openEpisodes.has(runId, groupId),
        flushOnComplete: false,
        stats: stats.groups,
        onDrop: (drop: GroupDrop<Member>) => emit(episodesUnit(consumerGroupId, generation, drop.items, 'dropped')),
      }),
      rolloutBatches<TrajectoryGroup<Member>>({
        windowMs: config.batchWindowMs,
        maxGroups: config.maxBatchGroups,
        keyOf: iterationKeyOf,
        ...(iterationIdleMs === undefined ? {} : { iterationIdleMs }),
      }),
      // A rollout batch per run: filters and batch estimators never mix runs.
      mergeMap((batch: TrajectoryGroup<Member>[]) => [...groupByRun(batch).values()]),
      map((batch) => {
        const result = processBatch(batch.map((g) => ({ groupId: g.groupId, trajectories: g.members.map((m) => m.trajectory) })));
        for (const unit of rolloutBatchUnits(consumerGroupId, generation, batch, result)) emit(unit);
        return result.stats;
      }),
    );
}

/** The unit that moves a step to its group's home partition: the step keyed by its group id, and its offset. */
function rerouteUnit(envelope: StepEnvelope, bytes: Buffer): OutputUnit {
  return { generation: envelope.generation, samples: [], trajectories: [], marks: [], reroutes: [{ key: envelope.value.groupId, value: bytes }], sources: [envelope] };
}

/** The dead letter of a step refused before assembly: its bytes as read, when the step kept them. */
function invalidStepLetter(envelope: StepEnvelope, detail: string): DeadLetterInput {
  return {
    reason: 'invalid-value',
    detail,
    sourceTopic: envelope.topic,
    sourcePartition: envelope.partition,
    sourceOffset: envelope.offset,
    key: envelope.key,
    payload: envelope.value instanceof WireStep ? envelope.value.bytes : null,
  };
}

function groupByRun<G extends { readonly runId: string }>(groups: readonly G[]): Map<string, G[]> {
  const runs = new Map<string, G[]>();
  for (const group of groups) {
    const list = runs.get(group.runId);
    if (list) list.push(group);
    else runs.set(group.runId, [group]);
  }
  return runs;
}

/** The group's iteration and the iteration's group count, when its trajectories name them (rollout-batches.ts). */
function iterationKeyOf(group: TrajectoryGroup<Member>): BatchKey | null {
  const { metrics } = group.members[0]!.trajectory;
  const iteration = metrics.iteration;
  const groups = metrics.batchGroups;
  return iteration === undefined || groups === undefined ? null : { key: `${group.runId}\u0000${iteration}`, groups };
}

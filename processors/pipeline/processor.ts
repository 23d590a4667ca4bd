// The processors as one Kafka consumer group: steps → trajectories → groups → rollout batches →
// rewards, filters, advantages → training samples, written exactly once (TransactionalEmitter +
// EpisodeMarks). Scales out by partitions: every instance joins the same consumer group.
//
// A rebalance starts a new generation: the operators' open episodes and groups are dropped (their steps
// come again from the committed offsets) by restarting the operator chain per generation (switchMap),
// after the episode marks were reloaded (onAssignment) so that nothing already emitted is emitted again.
import { Subscription, filter, groupBy, interval, map, mergeMap, switchMap, type Observable } from 'rxjs';
import { topicName, type TrajflowConfig } from '../../core/config.js';
import { ConfigError } from '../../core/errors.js';
import type { StepEvent, TrainingSampleEvent } from '../../schemas/index.js';
import type { Backbone } from '../../streams/backbone.js';
import { createEventConsumer } from '../../streams/event-consumer.js';
import { offsetAtLeast } from '../../streams/offset-order.js';
import type { Envelope, TopicConsumer } from '../../streams/topic-consumer.js';
import {
  assembleGroups,
  assembleTrajectories,
  createAssemblyStats,
  createGroupAssemblyStats,
  type AssembledTrajectory,
  type GroupDrop,
  type TrajectoryGroup,
} from '../assembly/index.js';
import type { BatchStats } from '../stats/batch-stats.js';
import { deadLetterMarkKey, EpisodeMarks, episodeMarkKey, type EpisodeMark } from '../exactly-once/episode-marks.js';
import { batchProcessor, type ProcessingConfig } from './process-batch.js';
import { rolloutStatsEvents } from './rollout-stats-events.js';
import { flushOnOutput } from '../exactly-once/flush-on-output.js';
import { rolloutBatches, type BatchKey } from '../assembly/rollout-batches.js';
import { TransactionalEmitter, type OutputUnit } from '../exactly-once/transactional-emitter.js';

type StepEnvelope = Envelope<StepEvent>;
type Member = AssembledTrajectory<StepEnvelope>;

export interface ProcessorsOptions {
  /** Consumer group of the processors (all instances share it); default `<topic prefix>.processors`. */
  readonly consumerGroupId?: string;
  readonly processing: ProcessingConfig;
  readonly groupSize?: number;
  readonly minGroupSize?: number;
  readonly idleTimeoutMs?: number;
  readonly groupTimeoutMs?: number;
  /**
   * A rollout batch (what filters and batch estimators see together) closes batchWindowMs after its first
   * group (default 20) or when it holds maxBatchGroups groups (default 64), whichever comes first
   * (rollout-batches.ts). Set maxBatchGroups to the actors' groups per iteration for RAGEN's batches, with a
   * window long enough to collect them (trajflow train: 5 s). The default window is latency every group
   * pays (on average half of it); at 5,000 steps/s on the 2-core VM 20 ms took 10–22 ms off the p50 and
   * ≈ 19 ms off the p99 against 50 ms, for ≈ 50 % more (smaller) transactions.
   */
  readonly batchWindowMs?: number;
  readonly maxBatchGroups?: number;
  /** The batch of an actors' iteration (its groups name it) closes after this long without a new group of it; default 10,000 ms. */
  readonly iterationIdleMs?: number;
  /** Output is written as soon as it is queued; this interval (default 100) also writes mark releases. */
  readonly flushIntervalMs?: number;
  /**
   * Write output as soon as it is queued (default true). false: only every flushIntervalMs, as before —
   * for tests that stage one transaction holding everything a batch produced.
   */
  readonly writeAsQueued?: boolean;
  /** Topic names (defaults: the config's prefix with env.steps, samples, trajectories, processors.state). */
  readonly topics?: Partial<{ steps: string; samples: string; trajectories: string; rolloutStats: string; state: string; deadLetters: string }>;
  readonly onBatch?: (stats: BatchStats) => void;
  /**
   * Fault tests only: every transaction waits at its commit until handle.emitter.commitHold.release(). The
   * producers run on a worker thread, so a test cannot wrap them; it stages a slow commit this way.
   */
  readonly holdCommits?: boolean;
}

export interface ProcessorsHandle {
  readonly consumer: TopicConsumer<StepEvent>;
  readonly emitter: TransactionalEmitter;
  readonly marks: EpisodeMarks;
  /** Resolves when the pipeline stops; rejects on a failure (the process should exit and be restarted). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

export async function startProcessors(backbone: Backbone, options: ProcessorsOptions): Promise<ProcessorsHandle> {
  const config: TrajflowConfig = backbone.config;
  const {
    consumerGroupId = `${backbone.config.topicPrefix}.processors`,
    groupSize = 8,
    minGroupSize = 2,
    idleTimeoutMs = 120_000,
    groupTimeoutMs = 300_000,
    batchWindowMs = 20,
    maxBatchGroups = 64,
    flushIntervalMs = 100,
    writeAsQueued = true,
  } = options;
  if (!(flushIntervalMs > 0) || !(batchWindowMs > 0)) {
    throw new ConfigError('flushIntervalMs and batchWindowMs must be > 0 (milliseconds)');
  }
  const topics = {
    steps: options.topics?.steps ?? topicName(config, 'env.steps'),
    samples: options.topics?.samples ?? topicName(config, 'samples'),
    trajectories: options.topics?.trajectories ?? topicName(config, 'trajectories'),
    rolloutStats: options.topics?.rolloutStats ?? topicName(config, 'rollout.stats'),
    state: options.topics?.state ?? topicName(config, 'processors.state'),
    deadLetters: options.topics?.deadLetters ?? topicName(config, 'deadletter'),
  };
  const processBatch = batchProcessor(options.processing);
  const marks = new EpisodeMarks(consumerGroupId);
  await marks.reload(backbone.kafka, topics.state);

  const consumer = createEventConsumer(backbone.kafka, backbone.codec, 'step', {
    topic: topics.steps,
    groupId: consumerGroupId,
    // Dead letters are written exactly once, like the outputs: in a transaction with a mark of their position
    // (and the offsets); a message read again after a crash finds its mark and is only acknowledged.
    deadLetters: {
      hold: (letter, source) => {
        if (marks.hasDeadLetter(source.topic, source.partition, source.offset)) return source.ack();
        const mark: EpisodeMark = {
          key: deadLetterMarkKey(consumerGroupId, source.topic, source.partition, source.offset),
          topic: source.topic,
          partition: source.partition,
          maxOffset: source.offset,
          status: 'dead_letter',
        };
        emit({ generation: source.generation, samples: [], trajectories: [], marks: [mark], deadLetters: [letter], sources: [source] });
      },
    },
    commits: 'external',
    // Steps stay in their bytes until read (schemas/wire-step.ts): their text, token ids and log-probs are
    // copied from them into the trajectories and samples (processors/exactly-once/output-encoder.ts).
    wireSteps: true,
    // Open episodes and groups hold their steps un-acknowledged until their outputs are written.
    maxInFlight: 500_000,
    // Before anything of the new assignment is read: our own transaction in flight settles, the producers of
    // the partitions we got fence their previous owners (whose open transactions finish or abort), and only
    // then are the marks reloaded — so they hold everything any earlier owner committed.
    onAssignment: async (assignment) => {
      // Synchronously, right after the consumer started the generation: a transaction of the old one that
      // reaches its commit from here on is aborted (the worker reads this before each commit).
      out.generationChanged();
      await out.settled();
      await out.fence(assignment[topics.steps] ?? []);
      await marks.reload(backbone.kafka, topics.state);
    },
  });
  const out: TransactionalEmitter = new TransactionalEmitter(config.kafka, backbone.codec, consumer as TopicConsumer<unknown>, marks, topics, consumerGroupId, {
    holdCommits: options.holdCommits === true,
  });

  const markOf = (member: Member, status: EpisodeMark['status']): EpisodeMark => {
    const last = member.sources.reduce((a, b) => (offsetAtLeast(a.offset, b.offset) ? a : b));
    return {
      key: episodeMarkKey(consumerGroupId, member.trajectory.runId, member.trajectory.episodeId),
      topic: last.topic,
      partition: last.partition,
      maxOffset: last.offset,
      status,
    };
  };
  const unitOf = (generation: number, members: readonly Member[], status: EpisodeMark['status'], samples: OutputUnit['samples'] = []): OutputUnit => ({
    generation,
    samples,
    trajectories: members.map((m) => m.trajectory),
    marks: members.map((m) => markOf(m, status)),
    sources: members.flatMap((m) => m.sources),
  });

  // Output is handed to its partition's lane as soon as it is queued (flush-on-output.ts defers that by one
  // macrotask, so one batch's units travel together); a lane writes at once when idle, else in its next
  // transaction. The interval below also dispatches the episode-mark releases that commits queue.
  let failFlush: (error: unknown) => void = () => undefined;
  out.onFailure = (error) => failFlush(error);
  const flusher = flushOnOutput(async () => out.dispatch(), (error) => failFlush(error));
  const emit = (unit: OutputUnit): void => {
    out.enqueue(unit);
    if (writeAsQueued) flusher.kick();
  };

  // A step that feeds no output (late, or of an episode already written): acknowledge it with the next write.
  const acknowledgeOnly = (generation: number, envelope: StepEnvelope): OutputUnit => ({ generation, samples: [], trajectories: [], marks: [], sources: [envelope] });

  const pipeline = (generation: number) => (steps$: Observable<StepEnvelope>) =>
    steps$.pipe(
      assembleTrajectories<StepEnvelope>({
        stepOf: (envelope) => envelope.value,
        idleTimeoutMs,
        flushOnComplete: false,
        stats: assemblyStats,
        onDiscard: (envelope) => emit(acknowledgeOnly(generation, envelope)),
      }),
      assembleGroups<StepEnvelope>({
        groupSize,
        minGroupSize,
        groupTimeoutMs,
        flushOnComplete: false,
        stats: groupStats,
        onDrop: (drop: GroupDrop<Member>) => emit(unitOf(generation, drop.items, 'dropped')),
      }),
      rolloutBatches<TrajectoryGroup<Member>>({ windowMs: batchWindowMs, maxGroups: maxBatchGroups, keyOf: iterationKeyOf, ...(options.iterationIdleMs === undefined ? {} : { iterationIdleMs: options.iterationIdleMs }) }),
      // A rollout batch per run: filters and batch estimators never mix runs.
      mergeMap((batch: TrajectoryGroup<Member>[]) => [...groupByRun(batch).values()]),
      map((batch) => {
        const result = processBatch(batch.map((g) => ({ groupId: g.groupId, trajectories: g.members.map((m) => m.trajectory) })));
        const kept = new Set(result.keptGroupIds);
        const eventTimeMs = Math.max(...batch.flatMap((g) => g.members.map((m) => m.trajectory.lastEventTimeMs)));
        const rolloutStats = rolloutStatsEvents(batch[0]!.runId, batch.map((g) => g.groupId), result.stats, eventTimeMs);
        const samplesOf = new Map<string, TrainingSampleEvent[]>();
        for (const sample of result.samples) {
          const list = samplesOf.get(sample.groupId);
          if (list) list.push(sample);
          else samplesOf.set(sample.groupId, [sample]);
        }
        batch.forEach((group, i) => {
          const samples = samplesOf.get(group.groupId) ?? [];
          const unit = unitOf(generation, group.members, kept.has(group.groupId) ? 'emitted' : 'dropped', samples);
          // The batch's statistics travel with its first group, inside the same transaction.
          emit(i === 0 ? { ...unit, rolloutStats } : unit);
        });
        return result.stats;
      }),
    );

  const assemblyStats = createAssemblyStats();
  const groupStats = createGroupAssemblyStats();
  const subscription = new Subscription();
  const done = new Promise<void>((resolve, reject) => {
    failFlush = reject;
    subscription.add(
      consumer.events$
        .pipe(
          // Steps of episodes already turned into output (before a crash or on another instance): skip, acknowledge.
          filter((envelope) => {
            if (!marks.has(envelope.value.runId, envelope.value.episodeId)) return true;
            emit(acknowledgeOnly(envelope.generation, envelope));
            return false;
          }),
          groupBy((envelope) => envelope.generation),
          switchMap((generation$) => generation$.pipe(pipeline(generation$.key))),
        )
        .subscribe({ next: (stats) => options.onBatch?.(stats), error: reject, complete: resolve }),
    );
    subscription.add(interval(flushIntervalMs).subscribe(() => out.dispatch()));
  });
  done.catch(() => undefined);

  return {
    consumer,
    emitter: out,
    marks,
    done,
    // Stop the operators (open episodes are simply not acknowledged), write what is finished, then leave.
    close: async () => {
      subscription.unsubscribe();
      flusher.stop();
      await out.flush().catch(() => undefined);
      await consumer.close({ drain: false });
      await out.close();
    },
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

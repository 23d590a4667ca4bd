// The processors as one Kafka consumer group: steps → trajectories → groups → rollout batches →
// rewards, filters, advantages → training samples, written exactly once (TransactionalEmitter +
// EpisodeMarks). Scales out by partitions: every instance joins the same consumer group.
//
// A rebalance starts a new generation: the operators' open episodes and groups are dropped (their steps
// come again from the committed offsets) by restarting the operator chain per generation (step-pipeline.ts),
// after the episode marks were reloaded (onAssignment) so that nothing already emitted is emitted again.
//
// This file is the shell: the consumer, the transactional emitter, the timers. The decisions are pure parts
// beside it: config.ts (options, defaults, topics), step-pipeline.ts (the operator chain, and what each
// step, group and batch becomes), output-units.ts (what a unit holds and which episode marks it writes).
import { Subscription, interval } from 'rxjs';
import type { StepEvent } from '../../schemas/index.js';
import { WireStep } from '../../schemas/wire-step.js';
import type { Backbone } from '../../streams/backbone.js';
import type { HeldDeadLetterSink } from '../../streams/dead-letter.js';
import { createEventConsumer } from '../../streams/event-consumer.js';
import type { TopicConsumer, TopicConsumerOptions } from '../../streams/topic-consumer.js';
import { EpisodeMarks } from '../exactly-once/episode-marks.js';
import { flushOnOutput } from '../exactly-once/flush-on-output.js';
import { TransactionalEmitter, TransactionFailedError, type OutputUnit } from '../exactly-once/transactional-emitter.js';
import { deadLetterUnit } from './output-units.js';
import { batchProcessor } from './process-batch.js';
import { buildProcessorsConfig, type ProcessorsOptions, type ProcessorsConfig } from './config.js';
import { createPipelineStats, stepPipeline, type PipelineStats } from './step-pipeline.js';
import { STALL_REPORT_AFTER_MS, stallReport } from './stall-report.js';

export type { ProcessorsOptions } from './config.js';

/**
 * A rebalance's setup (settle, fence, reload the marks) still running after this long fails the pipeline,
 * which starts over from the committed offsets: each of its stages gives up on a broker outage well before
 * (the worker's requests at 2 minutes, the marks' reload after ≈ 2 minutes of outage).
 */
const SETUP_DEADLINE_MS = 180_000;

export interface ProcessorsHandle {
  readonly consumer: TopicConsumer<StepEvent>;
  readonly emitter: TransactionalEmitter;
  readonly marks: EpisodeMarks;
  /** The assembly's counters: groups closed by reason (full, idle, timeout, …), trajectories, drops. */
  readonly stats: PipelineStats;
  /** Resolves when the pipeline stops; rejects on a failure (the process should exit and be restarted). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

export async function startProcessors(backbone: Backbone, options: ProcessorsOptions): Promise<ProcessorsHandle> {
  const config = buildProcessorsConfig(backbone.config, options);
  const { consumerGroupId, topics, writeAsQueued } = config;
  const processBatch = batchProcessor(options.processing);
  const marks = new EpisodeMarks(consumerGroupId);
  await marks.reload(backbone.kafka, topics.state);

  const hold = deadLetterHold(marks, (unit) => emit(unit));
  const stats = createPipelineStats();
  const routing = await stepRouting(backbone, topics.steps);
  const reload = () => Promise.all([marks.reload(backbone.kafka, topics.state), routing.refresh()]).then(() => undefined);
  const setup: SetupClock = { current: null };
  const onAssignment = (assignment: Readonly<Record<string, readonly number[]>>) => timed(setup, (stage) => takeOver(out, assignment[topics.steps] ?? [], reload, stage));
  const consumer = stepConsumer(backbone, config, { hold, onAssignment });
  const out = stepEmitter(backbone, consumer, marks, config, options);
  const stallWatch = watchStalls(out, setup, options, (error) => failFlush(error));

  // Output is handed to its partition's lane as soon as it is queued (flush-on-output.ts defers that by one
  // macrotask, so one batch's units travel together); a lane writes at once when idle, else in its next
  // transaction. The interval below also dispatches the episode-mark releases that commits queue.
  let failFlush: (error: unknown) => void = () => undefined;
  out.onFailure = (error) => failFlush(error);
  const flusher = flushOnOutput(
    async () => out.dispatch(),
    (error) => failFlush(error),
  );
  const emit = (unit: OutputUnit): void => {
    out.enqueue(unit);
    if (writeAsQueued) flusher.kick();
  };

  const subscription = new Subscription();
  const done = new Promise<void>((resolve, reject) => {
    failFlush = reject;
    const steps = consumer.events$.pipe(stepPipeline({ config, processBatch, marks, emit, deadLetter: hold, stats, routing }));
    subscription.add(steps.subscribe({ next: (stats) => options.onBatch?.(stats), error: reject, complete: resolve }));
    subscription.add(interval(config.flushIntervalMs).subscribe(() => out.dispatch()));
  });
  // A failed pipeline writes nothing more: closing it waits for no transaction (one may be what it is stuck on).
  let failed = false;
  done.catch(() => (failed = true));
  return {
    consumer,
    emitter: out,
    marks,
    stats,
    done,
    // Stop the operators (open episodes are simply not acknowledged), write what is finished, then leave.
    close: async () => {
      clearInterval(stallWatch);
      subscription.unsubscribe();
      flusher.stop();
      if (!failed) await out.flush().catch(() => undefined);
      await consumer.close({ drain: false });
      await out.close({ flush: !failed });
    },
  };
}

/** The transactional emitter of the steps consumer's outputs. */
function stepEmitter(backbone: Backbone, consumer: TopicConsumer<StepEvent>, marks: EpisodeMarks, config: ProcessorsConfig, options: ProcessorsOptions): TransactionalEmitter {
  return new TransactionalEmitter(backbone.config.kafka, backbone.codec, consumer as TopicConsumer<unknown>, marks, config.topics, config.consumerGroupId, {
    holdCommits: options.holdCommits === true,
    transactionDeadlineMs: options.transactionDeadlineMs,
  });
}

/** The rebalance setup in progress (takeOver): its stage and when the setup began. */
interface SetupClock {
  current: { stage: string; since: number } | null;
}

/** Runs a setup, keeping `clock` on its current stage until it ends. */
async function timed(clock: SetupClock, run: (stage: (name: string) => void) => Promise<void>): Promise<void> {
  const since = performance.now();
  try {
    await run((stage) => (clock.current = { stage, since }));
  } finally {
    clock.current = null;
  }
}

/**
 * A line every STALL_REPORT_AFTER_MS while something has waited that long (stall-report.ts). A setup past its
 * deadline fails the pipeline like a lost transaction does (transaction-client.ts): its partitions would
 * otherwise be read by nobody.
 */
function watchStalls(out: TransactionalEmitter, setup: SetupClock, options: ProcessorsOptions, fail: (error: TransactionFailedError) => void): NodeJS.Timeout {
  const log = options.log ?? ((line: string) => console.error(line));
  const deadlineMs = options.setupDeadlineMs ?? SETUP_DEADLINE_MS;
  const watch = setInterval(
    () => {
      const now = performance.now();
      const current = setup.current && { stage: setup.current.stage, ageMs: now - setup.current.since };
      const line = stallReport({ oldestRequest: out.oldestRequest(), setup: current });
      if (line) log(line);
      if (current && current.ageMs >= deadlineMs) {
        fail(new TransactionFailedError(new Error(`a rebalance's setup did not finish in ${Math.round(current.ageMs / 1000)} s (stuck ${current.stage})`)));
      }
    },
    Math.min(STALL_REPORT_AFTER_MS, deadlineMs / 2),
  );
  watch.unref();
  return watch;
}

/** What re-routing needs: the steps topic's partitions, read again at every rebalance (each step's home depends on them). */
async function stepRouting(backbone: Backbone, topic: string) {
  let partitions = await partitionCount(backbone, topic);
  return {
    partitions: () => partitions,
    bytesOf: (step: StepEvent) => (step instanceof WireStep ? step.bytes : Buffer.from(backbone.codec.encode('step', step))),
    refresh: async () => {
      partitions = await partitionCount(backbone, topic);
    },
  };
}

/** How many partitions a topic has (0 when it does not exist yet: nothing is re-routed then). */
async function partitionCount(backbone: Backbone, topic: string): Promise<number> {
  const admin = backbone.kafka.admin();
  await admin.connect();
  try {
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] });
    return metadata.topics[0]?.partitions.length ?? 0;
  } catch {
    return 0;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Dead letters are written exactly once, like the outputs: in a transaction with a mark of their position
 * (and the offsets); a message read again after a crash finds its mark and is only acknowledged.
 */
function deadLetterHold(marks: EpisodeMarks, emit: (unit: OutputUnit) => void): HeldDeadLetterSink['hold'] {
  return (letter, source) => {
    const unit = deadLetterUnit(marks, letter, source);
    if (unit === null) source.ack();
    else emit(unit);
  };
}

/**
 * A new generation's partitions, before anything of them is read: our own transaction in flight settles,
 * the producers of the partitions we got fence their previous owners (whose open transactions finish or
 * abort), and only then are the marks reloaded — so they hold everything any earlier owner committed.
 */
async function takeOver(out: TransactionalEmitter, partitions: readonly number[], reloadMarks: () => Promise<void>, stage: (name: string) => void): Promise<void> {
  // Synchronously, right after the consumer started the generation: a transaction of the old one that
  // reaches its commit from here on is aborted (the worker reads this before each commit).
  out.generationChanged();
  stage('settling the transactions in flight');
  await out.settled();
  stage(`fencing the producers of partitions ${partitions.join(', ') || '(none)'}`);
  await out.fence(partitions);
  stage('reloading the episode marks');
  await reloadMarks();
}

/** The consumer of the steps topic, its offsets committed by the emitter's transactions. */
function stepConsumer(
  backbone: Backbone,
  config: ProcessorsConfig,
  hooks: { readonly hold: HeldDeadLetterSink['hold']; readonly onAssignment: NonNullable<TopicConsumerOptions<StepEvent>['onAssignment']> },
): TopicConsumer<StepEvent> {
  return createEventConsumer(backbone.kafka, backbone.codec, 'step', {
    topic: config.topics.steps,
    groupId: config.consumerGroupId,
    deadLetters: { hold: hooks.hold },
    commits: 'external',
    // Steps stay in their bytes until read (schemas/wire-step.ts): their text, token ids and log-probs are
    // copied from them into the trajectories and samples (processors/exactly-once/output-encoder.ts).
    wireSteps: true,
    // Open episodes and groups hold their steps un-acknowledged until their outputs are written.
    maxInFlight: 500_000,
    onAssignment: hooks.onAssignment,
  });
}

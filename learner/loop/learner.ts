// The learner on the event backbone: consume <prefix>.samples as one consumer group, train one rollout
// batch per update (which samples: batch-assembly.ts), and after every update write a checkpoint (and its
// weights to the weights topic: learner/checkpoint/weights-transport.ts), publish the learner step and the
// new policy version, then acknowledge the batch's samples (the consumer commits them).
//
// Exactly-once training across crashes: the checkpoint records, per partition, the lowest offset not yet
// trained (past every sample seen, never past one held for a later batch), and the ids of recent trained
// samples. On start the learner loads its newest checkpoint and the consumer skips every sample below those
// offsets, so samples trained before the crash are not trained again even when Kafka's committed offsets lag
// behind (a crash between checkpoint and commit); a trained sample above them comes again and is refused by
// its id, and samples never trained are not skipped (they were never acknowledged, so never committed).
// A crash between checkpoint and publish leaves a version unannounced: on start the newest checkpoint's
// version is published again (consumers ignore a version they already have; ClickHouse keeps one row).
//
// The decisions — what is held, dropped or refused, the counts, the positions and ids each checkpoint records,
// what each learner step and version event say — are the ledger's (ledger.ts, pure); this file is the shell
// around it: the consumer, the trainer, the checkpoint files and the producer.
import { topicName } from '../../core/config.js';
import { createEnv } from '../../envs/registry.js';
import type { LearnerStepEvent, PolicyVersionEvent, TrainingSampleEvent } from '../../schemas/index.js';
import { createEventConsumer, type Backbone, type Envelope } from '../../streams/index.js';
import { TOKENIZER_NAME } from '../../tokenizer/index.js';
import { selectBackend, type BackendInfo } from '../backend.js';
import { checkpointUri, latestCheckpoint, pruneCheckpoints, readVersion, writeCheckpoint, type Checkpoint } from '../checkpoint/checkpoint.js';
import { publishCheckpointWeights } from '../checkpoint/weights-topic.js';
import { weightsTransport } from '../checkpoint/weights-transport.js';
import { templateCollapseBeforeUpdate } from '../collapse/index.js';
import { createPolicyBundle, disposeBundle, type PolicyBundle } from '../policy/bundle.js';
import { bundleFromCheckpoint } from '../policy/checkpoint-provider.js';
import { REPLAY_ESTIMATOR_PREFIX } from '../replay/marker.js';
import { buildBatch } from '../train/batch.js';
import { PolicyTrainer } from '../train/trainer.js';
import type { TrainingUnit } from './batch-assembly.js';
import type { LearnerConfig } from './config.js';
import { policyVersionEvent } from './events.js';
import { LearnerLedger, type CheckpointRecord, type LearnerStats, type UpdateDone } from './ledger.js';
import { isReplayed } from './staleness.js';

/** Samples whose estimator starts with this were replayed (trajflow replay): decoupled objective. */
export { REPLAY_ESTIMATOR_PREFIX };
export type { LearnerStats };

export interface LearnerRun {
  readonly backend: BackendInfo;
  readonly stats: LearnerStats;
  /** Resolves when the learner stopped (maxUpdates reached or stop()); rejects on a fatal error. */
  readonly done: Promise<LearnerStats>;
  stop(): Promise<LearnerStats>;
}

export interface StartLearnerOptions {
  readonly log?: (line: string) => void;
  readonly onStep?: (step: LearnerStepEvent, version: PolicyVersionEvent) => void;
}

export async function startLearner(backbone: Backbone, config: LearnerConfig, options: StartLearnerOptions = {}): Promise<LearnerRun> {
  const log = options.log ?? ((line: string) => console.error(line));
  const backend = await selectBackend(config.backend);
  log(`learner: backend ${backend.description}`);
  log(`learner: config ${JSON.stringify(config)}`);
  const policy = await openPolicy(config);
  const ledger = new LearnerLedger<Delivery>(config, policy.resumed?.manifest ?? null);
  const shell: Shell = { backbone, config, backend, policy, ledger, log };
  await announceStart(shell);
  const intake = consumeSamples(shell);
  let running = true;
  const done = trainUntilDone(shell, intake, () => running, options.onStep);
  return {
    backend,
    stats: ledger.stats,
    done,
    async stop() {
      running = false;
      intake.wake();
      return done;
    },
  };
}

type Delivery = Envelope<TrainingSampleEvent>;

/** The policy a learner trains, restored from the run's newest checkpoint when there is one. */
interface Policy {
  readonly bundle: PolicyBundle;
  /** The frozen KL reference (loss.klCoeff > 0). */
  readonly reference: PolicyBundle | undefined;
  readonly trainer: PolicyTrainer;
  readonly resumed: Checkpoint | undefined;
}

/** What the shell's pieces share. */
interface Shell {
  readonly backbone: Backbone;
  readonly config: LearnerConfig;
  readonly backend: BackendInfo;
  readonly policy: Policy;
  readonly ledger: LearnerLedger<Delivery>;
  readonly log: (line: string) => void;
}

/** A written checkpoint, as a version event names it. */
interface Saved {
  readonly uri: string;
  readonly checksum: string;
}

async function openPolicy(config: LearnerConfig): Promise<Policy> {
  const resumed = await latestCheckpoint(config.checkpointDir);
  const bundle = resumed ? bundleFromCheckpoint(resumed) : createPolicyBundle(createEnv(config.envName).actionVocabulary, config.model);
  // The KL reference is the initial policy (version 0), frozen.
  const reference =
    config.loss.klCoeff > 0 ? (resumed ? bundleFromCheckpoint(await readVersion(config.checkpointDir, 0)) : createPolicyBundle(bundle.vocabulary.words, config.model)) : undefined;
  const trainer = new PolicyTrainer({ ...bundle, optimizer: config.optimizer, loss: config.loss, ...(reference ? { reference: reference.model } : {}) });
  if (resumed) {
    await trainer.restoreOptimizerState(resumed.optimizer);
    trainer.updates = resumed.manifest.updates;
  }
  return { bundle, reference, trainer, resumed };
}

/**
 * A new run checkpoints its version 0; either way the newest version and its update's metrics are announced
 * (again): a crash may have come between the checkpoint and the events (consumers keep one per version / step).
 */
async function announceStart(s: Shell): Promise<void> {
  const { resumed } = s.policy;
  const saved = resumed ? { uri: await weightsUri(s, resumed.directory), checksum: resumed.manifest.checksum } : await saveCheckpoint(s, s.ledger.checkpoint(null, null));
  s.log(s.ledger.startLine(s.config.runId, resumed?.directory ?? s.config.checkpointDir, resumed !== undefined));
  await publishVersion(s, saved);
  if (resumed?.manifest.lastStep) await publishStep(s, resumed.manifest.lastStep);
}

/** The checkpoint the ledger describes, with the weights and Adam's state; the newest `keepCheckpoints` stay. */
async function saveCheckpoint(s: Shell, record: CheckpointRecord): Promise<Saved> {
  const { bundle, trainer } = s.policy;
  const values = await bundle.model.values();
  const { directory, manifest } = await writeCheckpoint(s.config.checkpointDir, {
    runId: s.config.runId,
    version: record.version,
    parentVersion: record.parentVersion,
    updates: record.updates,
    tokenizer: TOKENIZER_NAME,
    replyWords: bundle.vocabulary.words,
    model: bundle.model.config,
    weights: [...bundle.model.parameters].map(([name, variable]) => ({ name, shape: variable.shape, values: values.get(name)! })),
    optimizer: await trainer.optimizerState(),
    offsets: record.offsets,
    recentSampleIds: record.recentSampleIds,
    lastStep: record.lastStep,
    trainedIteration: record.trainedIteration,
    env: { name: s.config.envName, options: s.config.envOptions },
  });
  await pruneCheckpoints(s.config.checkpointDir, s.config.keepCheckpoints);
  return { uri: await weightsUri(s, directory), checksum: manifest.checksum };
}

/**
 * The weightsUri a version event gives: the checkpoint directory, or (TRAJFLOW_WEIGHTS=topic) the version on
 * the weights topic, written there first (again, on a resume: a crash may have come before it was).
 */
async function weightsUri(s: Shell, directory: string): Promise<string> {
  if (weightsTransport(s.backbone.config) === 'file') return checkpointUri(directory);
  return publishCheckpointWeights(s.backbone.producer, topicName(s.backbone.config, 'policy.weights'), directory, { keep: s.config.keepCheckpoints });
}

async function publishVersion(s: Shell, saved: Saved): Promise<PolicyVersionEvent> {
  const { version, learnerStep, progress } = s.ledger.announcement();
  const event = policyVersionEvent(s.config.runId, version, saved.uri, saved.checksum, learnerStep, Date.now(), progress);
  await s.backbone.producer.send(topicName(s.backbone.config, 'policy.versions'), 'policy_version', event, s.config.runId);
  return event;
}

function publishStep(s: Shell, step: LearnerStepEvent): Promise<unknown> {
  return s.backbone.producer.send(topicName(s.backbone.config, 'learner.steps'), 'learner_step', step, s.config.runId);
}

/** The samples topic feeding the ledger; the training loop idles on it between units. */
interface Intake {
  /** Resolves on the next held delivery, a consumer failure, wake(), or after 200 ms. */
  idle(): Promise<void>;
  wake(): void;
  /** The consumer's error, once it failed. */
  failure(): unknown;
  close(): Promise<void>;
}

function consumeSamples(s: Shell): Intake {
  const consumer = createEventConsumer(s.backbone.kafka, s.backbone.codec, 'sample', {
    topic: topicName(s.backbone.config, 'samples'),
    groupId: s.config.groupId,
    deadLetters: s.backbone.deadLetters,
    // Samples stay unacknowledged until their update is checkpointed; room for a few batches.
    maxInFlight: 100_000,
    // The newest checkpoint's positions, kept current by the ledger (read-positions.ts).
    startOffsets: s.ledger.positions.start,
  });
  let wake: () => void = () => {};
  let failed: unknown;
  const subscription = consumer.events$.subscribe({
    next: (envelope) => {
      if (s.ledger.deliver(envelope, Date.now()) === 'held') return wake();
      // Another run's, or trained already: counted by the ledger, never trained.
      envelope.ack();
    },
    error: (error) => {
      failed = error;
      wake();
    },
  });
  return {
    idle: () =>
      new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 200);
      }),
    wake: () => wake(),
    failure: () => failed,
    async close() {
      subscription.unsubscribe();
      await consumer.close();
    },
  };
}

async function trainUntilDone(s: Shell, intake: Intake, running: () => boolean, onStep: StartLearnerOptions['onStep']): Promise<LearnerStats> {
  try {
    while (running() && !s.ledger.finished) {
      const failed = intake.failure();
      if (failed) throw failed;
      const unit = s.ledger.next(Date.now());
      if (!unit) {
        await intake.idle();
        continue;
      }
      await trainOnce(s, unit, onStep);
    }
    return s.ledger.stats;
  } finally {
    await intake.close();
    s.policy.trainer.dispose();
    disposeBundle(s.policy.bundle);
    if (s.policy.reference) disposeBundle(s.policy.reference);
  }
}

/** One unit: its batch trained in one update, checkpointed, announced, then its samples acknowledged. */
async function trainOnce(s: Shell, unit: TrainingUnit<Delivery>, onStep: StartLearnerOptions['onStep']): Promise<void> {
  const { ledger, policy } = s;
  const plan = ledger.plan(unit);
  for (const line of plan.lines) s.log(line);
  const batch = buildBatch(plan.kept, policy.bundle.head, policy.bundle.model.config.contextLength, { turnRows: policy.trainer.turnRows });
  const built = ledger.built(batch);
  for (const line of built.lines) s.log(line);
  if (!built.train) {
    // Nothing to train on: acknowledged (the positions still advance in the next checkpoint; the counts go with
    // the next learner step).
    unit.deliveries.forEach((e) => e.ack());
    return;
  }
  const template = measureTemplate(s, batch.samples);
  const metrics = policy.trainer.update(batch, { recompute: batch.samples.some(isReplayed) });
  const { step, checkpoint } = ledger.updated(unit, {
    metrics,
    samples: batch.samples,
    skipped: batch.skipped.length,
    updates: policy.trainer.updates,
    backend: s.backend.name,
    nowMs: Date.now(),
    template,
  });
  const saved = await saveCheckpoint(s, checkpoint);
  const [, version] = await Promise.all([publishStep(s, step), publishVersion(s, saved)]);
  ledger.stats.lastStep = step;
  unit.deliveries.forEach((e) => e.ack());
  onStep?.(step, version);
}

/** RAGEN-2 cross-scoring, on the weights that sampled (most of) the batch, before they move; null on the updates it skips. */
function measureTemplate(s: Shell, samples: readonly TrainingSampleEvent[]): UpdateDone['template'] {
  const { bundle, trainer } = s.policy;
  const started = performance.now();
  const at = { modelSeed: s.config.model.seed, update: trainer.updates };
  const metrics = templateCollapseBeforeUpdate(bundle.model, bundle.head, samples, at, { ...s.config.templateCollapse, temperature: s.config.optimizer.temperature });
  return metrics ? { metrics, durationMs: performance.now() - started } : null;
}

// The learner on the event backbone: consume <prefix>.samples as one consumer group, train one rollout
// batch per update (which samples: batch-assembly.ts), and after every update write a checkpoint, publish
// the learner step and the new policy version, then acknowledge the batch's samples (the consumer commits them).
//
// Exactly-once training across crashes: the checkpoint records, per partition, the lowest offset not yet
// trained (past every sample seen, never past one held for a later batch), and the ids of recent trained
// samples. On start the learner loads its newest checkpoint and the consumer skips every sample below those
// offsets, so samples trained before the crash are not trained again even when Kafka's committed offsets lag
// behind (a crash between checkpoint and commit); a trained sample above them comes again and is refused by
// its id, and samples never trained are not skipped (they were never acknowledged, so never committed).
// A crash between checkpoint and publish leaves a version unannounced: on start the newest checkpoint's
// version is published again (consumers ignore a version they already have; ClickHouse keeps one row).
import { topicName } from '../../core/config.js';
import { createEnv } from '../../envs/registry.js';
import type { LearnerStepEvent, PolicyVersionEvent, TrainingSampleEvent } from '../../schemas/index.js';
import { createEventConsumer, type Backbone, type Envelope, type TopicConsumer } from '../../streams/index.js';
import { selectBackend, type BackendInfo } from '../backend.js';
import { checkpointUri, latestCheckpoint, pruneCheckpoints, readVersion, writeCheckpoint } from '../checkpoint/checkpoint.js';
import { createPolicyBundle, disposeBundle } from '../policy/bundle.js';
import { bundleFromCheckpoint } from '../policy/checkpoint-provider.js';
import { TOKENIZER_NAME } from '../../tokenizer/index.js';
import { REPLAY_ESTIMATOR_PREFIX } from '../replay/marker.js';
import { buildBatch, turnsOf } from '../train/batch.js';
import { templateCollapseBeforeUpdate, templateMetricsEntries } from '../collapse/index.js';
import { PolicyTrainer } from '../train/trainer.js';
import type { LearnerConfig } from './config.js';
import { BatchAssembly, type TrainingUnit } from './batch-assembly.js';
import { learnerStepEvent, policyVersionEvent } from './events.js';

/** Samples whose estimator starts with this were replayed (trajflow replay): decoupled objective. */
export { REPLAY_ESTIMATOR_PREFIX };
const RECENT_IDS = 20_000;

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

  const resumed = await latestCheckpoint(config.checkpointDir);
  const bundle = resumed ? bundleFromCheckpoint(resumed) : createPolicyBundle(createEnv(config.envName).actionVocabulary, config.model);
  // The KL reference is the initial policy (version 0), frozen.
  const reference = config.loss.klCoeff > 0 ? (resumed ? bundleFromCheckpoint(await readVersion(config.checkpointDir, 0)) : createPolicyBundle(bundle.vocabulary.words, config.model)) : undefined;
  const trainer = new PolicyTrainer({ ...bundle, optimizer: config.optimizer, loss: config.loss, ...(reference ? { reference: reference.model } : {}) });
  const stats: LearnerStats = { version: 0, updates: 0, samplesTrained: 0, droppedStale: 0, duplicates: 0, otherRuns: 0, skippedSamples: 0, iteration: -1, envSteps: 0 };
  const offsets = new Map<string, bigint>();
  const recent = new Set<string>();
  let latest: { uri: string; checksum: string; updates: number };
  if (resumed) {
    await trainer.restoreOptimizerState(resumed.optimizer);
    trainer.updates = resumed.manifest.updates;
    stats.version = resumed.manifest.version;
    stats.updates = resumed.manifest.updates;
    stats.iteration = resumed.manifest.trainedIteration ?? -1;
    stats.envSteps = resumed.manifest.lastStep?.metrics.envSteps ?? 0;
    for (const [key, offset] of Object.entries(resumed.manifest.offsets)) offsets.set(key, BigInt(offset));
    resumed.manifest.recentSampleIds.forEach((id) => recent.add(id));
    latest = { uri: checkpointUri(resumed.directory), checksum: resumed.manifest.checksum, updates: resumed.manifest.updates };
    log(`learner: resumed run ${config.runId} at version ${stats.version} (${stats.updates} updates) from ${resumed.directory}`);
  } else {
    latest = await checkpoint(0, null, null);
    log(`learner: new run ${config.runId}, initial policy v0 in ${config.checkpointDir}`);
  }
  // (Re)announce the newest version and its update's metrics: a crash may have come between the
  // checkpoint and the events (consumers keep one per version / step).
  await publishVersion(stats.version, latest.uri, latest.checksum, Math.max(0, latest.updates - 1));
  if (resumed?.manifest.lastStep) await backbone.producer.send(topicName(backbone.config, 'learner.steps'), 'learner_step', resumed.manifest.lastStep, config.runId);

  async function checkpoint(version: number, parent: number | null, lastStep: LearnerStepEvent | null): Promise<{ uri: string; checksum: string; updates: number }> {
    const values = await bundle.model.values();
    const { directory, manifest } = await writeCheckpoint(config.checkpointDir, {
      runId: config.runId,
      version,
      parentVersion: parent,
      updates: trainer.updates,
      tokenizer: TOKENIZER_NAME,
      replyWords: bundle.vocabulary.words,
      model: bundle.model.config,
      weights: [...bundle.model.parameters].map(([name, variable]) => ({ name, shape: variable.shape, values: values.get(name)! })),
      optimizer: await trainer.optimizerState(),
      offsets: Object.fromEntries([...offsets].map(([k, v]) => [k, v.toString()])),
      recentSampleIds: [...recent].slice(-RECENT_IDS),
      lastStep,
      trainedIteration: stats.iteration,
      env: { name: config.envName, options: config.envOptions },
    });
    await pruneCheckpoints(config.checkpointDir, config.keepCheckpoints);
    return { uri: checkpointUri(directory), checksum: manifest.checksum, updates: trainer.updates };
  }

  async function publishVersion(version: number, uri: string, checksum: string, learnerStep: number): Promise<PolicyVersionEvent> {
    const event = policyVersionEvent(config.runId, version, uri, checksum, learnerStep, Date.now(), { iteration: stats.iteration, envSteps: stats.envSteps });
    await backbone.producer.send(topicName(backbone.config, 'policy.versions'), 'policy_version', event, config.runId);
    return event;
  }

  const consumer: TopicConsumer<TrainingSampleEvent> = createEventConsumer(backbone.kafka, backbone.codec, 'sample', {
    topic: topicName(backbone.config, 'samples'),
    groupId: config.groupId,
    deadLetters: backbone.deadLetters,
    // Samples stay unacknowledged until their update is checkpointed; room for a few batches.
    maxInFlight: 100_000,
    startOffsets: offsets,
  });
  const assembly = new BatchAssembly<Envelope<TrainingSampleEvent>>({
    runId: config.runId,
    batchTokens: config.batchTokens,
    minSamples: config.minSamples,
    maxWaitMs: config.maxWaitMs,
    batchTimeoutMs: config.batchTimeoutMs,
    trained: (sampleId) => recent.has(sampleId),
  });
  // Where a restart reads again from: past every delivery seen, but not past one still held.
  const seen = new Map<string, bigint>();
  // Counted between updates, reported with the next learner step (a unit that trains nothing makes none).
  const refused = { duplicates: 0, otherRuns: 0, droppedStale: 0 };
  let wake: () => void = () => {};
  let failed: unknown;
  const subscription = consumer.events$.subscribe({
    next: (envelope) => {
      const key = `${envelope.topic}/${envelope.partition}`;
      const next = BigInt(envelope.offset) + 1n;
      if ((seen.get(key) ?? -1n) < next) seen.set(key, next);
      const admission = assembly.add(envelope, Date.now());
      if (admission === 'held') return wake();
      const reason = admission === 'duplicate' ? 'duplicates' : 'otherRuns';
      refused[reason]++;
      stats[reason]++;
      envelope.ack();
    },
    error: (error) => {
      failed = error;
      wake();
    },
  });

  let running = true;
  const done = (async () => {
    try {
      while (running && (config.maxUpdates === null || stats.updates < config.maxUpdates)) {
        if (failed) throw failed;
        const unit = assembly.next(Date.now());
        if (!unit) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, 200);
          });
          continue;
        }
        await trainOnce(unit);
      }
      return stats;
    } finally {
      subscription.unsubscribe();
      await consumer.close();
      trainer.dispose();
      disposeBundle(bundle);
      if (reference) disposeBundle(reference);
    }
  })();

  async function trainOnce(unit: TrainingUnit<Envelope<TrainingSampleEvent>>): Promise<void> {
    const taken = unit.deliveries;
    const kept: TrainingSampleEvent[] = [];
    let stale = 0;
    for (const { value: sample } of taken) {
      // Past the bound: dropped and counted, never trained (replayed samples keep their own rule).
      if (config.maxStaleness !== null && stats.version - sample.policyVersion > config.maxStaleness && !sample.estimator.startsWith(REPLAY_ESTIMATOR_PREFIX)) stale++;
      else kept.push(sample);
    }
    if (stale > 0) {
      const oldest = Math.min(...taken.map((d) => d.value.policyVersion));
      log(`learner: dropped ${stale} stale samples of ${unit.batchId ?? 'a batch by token budget'} (iteration ${unit.iteration}): sampled with v${oldest}, learner at v${stats.version}, bound ${config.maxStaleness}`);
    }
    stats.droppedStale += stale;
    refused.droppedStale += stale;
    const accounting = { droppedStale: refused.droppedStale, duplicates: refused.duplicates, otherRuns: refused.otherRuns, skippedSamples: 0, replaySamples: 0 };
    // The checkpoint's positions: past everything seen, but not past a sample still held for a later update.
    const held = assembly.heldOffsets();
    for (const [key, next] of seen) offsets.set(key, held.get(key) ?? next);
    // The unit is consumed whether or not it trains anything: versions published from here on cover its iteration.
    if (unit.iteration > stats.iteration) stats.iteration = unit.iteration;
    const batch = buildBatch(kept, bundle.head, bundle.model.config.contextLength, { turnRows: trainer.turnRows });
    stats.skippedSamples += batch.skipped.length;
    for (const skip of batch.skipped) log(`learner: skipped sample ${skip.sampleId}: ${skip.reason}`);
    if (batch.rows === 0) {
      // Nothing to train on: acknowledge (the positions still advance in the next checkpoint; the counts go with
      // the next learner step).
      taken.forEach((e) => e.ack());
      return;
    }
    const replay = batch.samples.filter((s) => s.estimator.startsWith(REPLAY_ESTIMATOR_PREFIX)).length;
    // Staleness of live samples; a replayed sample may even be newer than this learner (clamped at 0).
    const live = batch.samples.filter((s) => !s.estimator.startsWith(REPLAY_ESTIMATOR_PREFIX));
    const staleness = (live.length > 0 ? live : batch.samples).map((s) => Math.max(0, stats.version - s.policyVersion));
    const versionBefore = stats.version;
    // Template collapse is measured on the weights that sampled (most of) the batch, before they move.
    const templateStarted = performance.now();
    const template = templateCollapseBeforeUpdate(bundle.model, bundle.head, batch.samples, { modelSeed: config.model.seed, update: trainer.updates }, { ...config.templateCollapse, temperature: config.optimizer.temperature });
    const templateMs = performance.now() - templateStarted;
    const metrics = trainer.update(batch, { recompute: replay > 0 });
    batch.samples.forEach((s) => recent.add(s.sampleId));
    while (recent.size > RECENT_IDS) recent.delete(recent.values().next().value!);
    stats.version++;
    stats.updates = trainer.updates;
    stats.samplesTrained += batch.rows;
    for (const sample of batch.samples) stats.envSteps += turnsOf(sample);
    const step = learnerStepEvent(
      config.runId,
      trainer.updates - 1,
      versionBefore,
      metrics,
      { ...accounting, skippedSamples: batch.skipped.length, replaySamples: replay, stalenessMean: staleness.reduce((a, b) => a + b, 0) / staleness.length, stalenessMax: Math.max(...staleness) },
      backend.name,
      Date.now(),
      {
        ...(template ? { ...templateMetricsEntries(template), 'template.durationMs': templateMs } : {}),
        'batch.iteration': unit.iteration,
        'batch.expected': unit.expected,
        'batch.partial': unit.partial ? 1 : 0,
        envSteps: stats.envSteps,
      },
    );
    refused.duplicates = 0;
    refused.otherRuns = 0;
    refused.droppedStale = 0;
    const saved = await checkpoint(stats.version, versionBefore, step);
    const [, version] = await Promise.all([
      backbone.producer.send(topicName(backbone.config, 'learner.steps'), 'learner_step', step, config.runId),
      publishVersion(stats.version, saved.uri, saved.checksum, trainer.updates - 1),
    ]);
    stats.lastStep = step;
    taken.forEach((e) => e.ack());
    options.onStep?.(step, version);
  }

  return {
    backend,
    stats,
    done,
    async stop() {
      running = false;
      wake();
      return done;
    },
  };
}

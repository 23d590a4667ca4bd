// Unit: the learner's core (ledger.ts, no Kafka, no TensorFlow.js): which deliveries are held or refused and how
// they are counted; per unit, the staleness drop and the positions a checkpoint records; per update, the next
// version, its learner step (counts since the last step, staleness, batch metrics, env steps), its checkpoint and
// its version event; a resumed run picks up where its checkpoint left off.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { LearnerLedger, type LedgerConfig, type Restored, type UpdateDone } from '../../../learner/loop/ledger.js';
import type { Delivered, TrainingUnit } from '../../../learner/loop/batch-assembly.js';
import { REPLAY_ESTIMATOR_PREFIX } from '../../../learner/replay/marker.js';
import type { UpdateMetrics } from '../../../learner/train/update-tally.js';
import type { SampleBatch, TrainingSampleEvent } from '../../../schemas/index.js';

const SETTINGS: LedgerConfig = { runId: 'run', batchTokens: 1000, minSamples: 1, maxWaitMs: 0, batchTimeoutMs: 1000, maxStaleness: 1, maxUpdates: 3 };

let nextOffset = 0;
function delivery(id: string, batch: SampleBatch | null, options: { runId?: string; policyVersion?: number; estimator?: string; partition?: number } = {}): Delivered {
  const value = {
    sampleId: id,
    runId: options.runId ?? 'run',
    groupId: 'g',
    episodeId: id,
    tokenIds: [1, 2, 3, 4],
    lossMask: [0, 1, 0, 1],
    policyVersion: options.policyVersion ?? 0,
    estimator: options.estimator ?? 'gigpo',
    batch,
  } as unknown as TrainingSampleEvent;
  return { value, topic: 'samples', partition: options.partition ?? 0, offset: String(nextOffset++) };
}
const batchOf = (iteration: number, samples: number): SampleBatch => ({ batchId: `b${iteration}`, iteration, samples });

const METRICS = {
  loss: 0.5,
  pgLoss: 0.4,
  entropy: 1,
  kl: 0,
  klLoss: 0,
  entropyLoss: 0,
  ppoKl: 0.01,
  clipFracHigh: 0,
  clipFracLow: 0,
  clipFracDual: 0,
  gradNorm: 1,
  learningRate: 1e-3,
  optimizerSteps: 1,
  skippedSteps: 0,
  klEarlyStop: 0,
  klAtStop: 0,
  lossTokens: 2,
  tokens: 3,
  samples: 1,
  importanceWeightMean: 1,
  importanceWeightMax: 1,
  truncatedWeights: 0,
  durationMs: 5,
} satisfies UpdateMetrics;

/** The update the shell would make of a unit's kept samples. */
function done(samples: readonly TrainingSampleEvent[], updates: number, extra: Partial<UpdateDone> = {}): UpdateDone {
  return { metrics: METRICS, samples, skipped: 0, updates, backend: 'wasm', nowMs: 1234, template: null, ...extra };
}

function take(ledger: LearnerLedger<Delivered>, now = 0): TrainingUnit<Delivered> {
  const unit = ledger.next(now);
  assert.ok(unit, 'a unit is ready');
  return unit;
}

describe('LearnerLedger', () => {
  test('deliveries: held for an update, or refused and counted (another run, trained already)', () => {
    const ledger = new LearnerLedger<Delivered>(SETTINGS);
    assert.equal(ledger.deliver(delivery('o', batchOf(0, 1), { runId: 'other' }), 0), 'refused');
    assert.equal(ledger.deliver(delivery('a', batchOf(0, 1)), 0), 'held');
    assert.equal(ledger.deliver(delivery('a', batchOf(0, 1)), 0), 'refused');
    assert.deepEqual([ledger.stats.otherRuns, ledger.stats.duplicates], [1, 1]);
    const unit = take(ledger);
    ledger.updated(unit, done(ledger.plan(unit).kept, 1));
    assert.equal(ledger.deliver(delivery('a', batchOf(0, 1)), 0), 'refused', 'trained: refused by its id');
    assert.equal(ledger.stats.duplicates, 2);
  });

  test('plan: samples past the bound dropped, counted and logged; the iteration advances even when nothing is kept', () => {
    const ledger = new LearnerLedger<Delivered>(SETTINGS, restored({ version: 3, trainedIteration: 4 }));
    ledger.deliver(delivery('new', batchOf(5, 3), { policyVersion: 3 }), 0);
    ledger.deliver(delivery('old', batchOf(5, 3), { policyVersion: 1 }), 0);
    ledger.deliver(delivery('replay', batchOf(5, 3), { policyVersion: 0, estimator: `${REPLAY_ESTIMATOR_PREFIX}grpo` }), 0);
    const plan = ledger.plan(take(ledger));
    assert.deepEqual(
      plan.kept.map((s) => s.sampleId),
      ['new', 'replay'],
    );
    assert.deepEqual(plan.lines, ['learner: dropped 1 stale samples of b5 (iteration 5): sampled with v0, learner at v3, bound 1']);
    assert.equal(ledger.stats.droppedStale, 1);
    assert.equal(ledger.stats.iteration, 5);
    assert.equal(ledger.announcement().progress.iteration, 5);
  });

  test('a resumed ledger trains the iteration after its checkpoint first, though a later batch is whole before it', () => {
    const ledger = new LearnerLedger<Delivered>(SETTINGS, restored({ version: 5, trainedIteration: 4 }));
    ledger.deliver(delivery('six', batchOf(6, 1), { policyVersion: 5 }), 0);
    assert.equal(ledger.next(1), null, 'iteration 6 waits for 5');
    ledger.deliver(delivery('five', batchOf(5, 1), { policyVersion: 4 }), 2);
    assert.equal(take(ledger, 2).iteration, 5);
  });

  test('built: skipped samples counted, one line each; no rows left means no update', () => {
    const ledger = new LearnerLedger<Delivered>(SETTINGS);
    const built = ledger.built({ rows: 0, skipped: [{ sampleId: 's1', reason: 'fewer than 2 tokens' }] });
    assert.deepEqual(built, { train: false, lines: ['learner: skipped sample s1: fewer than 2 tokens'] });
    assert.equal(ledger.stats.skippedSamples, 1);
    assert.equal(ledger.built({ rows: 2, skipped: [] }).train, true);
  });

  test('updated: the next version, its learner step and checkpoint; the counts since the last step go with it, then restart', () => {
    nextOffset = 0;
    const ledger = new LearnerLedger<Delivered>(SETTINGS);
    ledger.deliver(delivery('x', batchOf(0, 2), { runId: 'other' }), 0);
    ledger.deliver(delivery('a', batchOf(0, 2)), 0);
    ledger.deliver(delivery('b', batchOf(0, 2)), 0);
    ledger.deliver(delivery('later', batchOf(1, 2), { partition: 1 }), 0);
    const unit = take(ledger);
    const samples = ledger.plan(unit).kept;
    const template = { metrics: { mutualInformation: 0.2, perToken: { mutualInformation: 0.05 } } as never, durationMs: 7 };
    const { step, checkpoint } = ledger.updated(unit, done(samples, 1, { skipped: 0, template: null }));
    assert.deepEqual([ledger.stats.version, ledger.stats.updates, ledger.stats.samplesTrained, ledger.stats.envSteps], [1, 1, 2, 4], 'two samples of two turns each');
    assert.deepEqual([step.step, step.policyVersion, step.stalenessMean, step.stalenessMax, step.backend, step.eventTimeMs], [0, 0, 0, 0, 'wasm', 1234]);
    assert.deepEqual(
      {
        otherRuns: step.metrics.otherRuns,
        duplicates: step.metrics.duplicates,
        droppedStale: step.metrics.droppedStale,
        iteration: step.metrics['batch.iteration'],
        expected: step.metrics['batch.expected'],
        partial: step.metrics['batch.partial'],
        envSteps: step.metrics.envSteps,
      },
      { otherRuns: 1, duplicates: 0, droppedStale: 0, iteration: 0, expected: 2, partial: 0, envSteps: 4 },
    );
    assert.equal('template.mi' in step.metrics, false);
    assert.deepEqual(
      checkpoint,
      { version: 1, parentVersion: 0, updates: 1, offsets: { 'samples/0': '3', 'samples/1': '3' }, recentSampleIds: ['a', 'b'], lastStep: step, trainedIteration: 0 },
      'partition 1 held back at the sample of iteration 1',
    );
    assert.deepEqual(ledger.announcement(), { version: 1, learnerStep: 0, progress: { iteration: 0, envSteps: 4 } });
    // The next update reports only what was refused since, and the cross-scoring when it was measured.
    ledger.deliver(delivery('later2', batchOf(1, 2), { partition: 1 }), 0);
    const next = take(ledger);
    const second = ledger.updated(next, done(ledger.plan(next).kept, 2, { template: template as UpdateDone['template'] }));
    assert.equal(second.step.metrics.otherRuns, 0);
    assert.deepEqual([second.step.metrics['template.mi'], second.step.metrics['template.durationMs']], [0.2, 7]);
    assert.deepEqual(second.checkpoint.offsets, { 'samples/0': '3', 'samples/1': '5' });
    assert.equal(ledger.finished, false);
  });

  test('a unit that trains nothing makes no step: its drops are reported with the next one', () => {
    const ledger = new LearnerLedger<Delivered>(SETTINGS, restored({ version: 4 }));
    ledger.deliver(delivery('stale', batchOf(1, 1), { policyVersion: 0 }), 0);
    const empty = take(ledger);
    assert.deepEqual(ledger.plan(empty).kept, []);
    ledger.deliver(delivery('fresh', batchOf(2, 1), { policyVersion: 4 }), 0);
    const unit = take(ledger);
    const { step } = ledger.updated(unit, done(ledger.plan(unit).kept, 11));
    assert.equal(step.metrics.droppedStale, 1);
    assert.equal(step.policyVersion, 4);
    assert.equal(step.step, 10);
  });

  test('staleness of an update: over its live samples, against the version before it', () => {
    const ledger = new LearnerLedger<Delivered>({ ...SETTINGS, maxStaleness: null }, restored({ version: 2 }));
    for (const [id, v] of [
      ['a', 2],
      ['b', 0],
    ] as const)
      ledger.deliver(delivery(id, batchOf(0, 2), { policyVersion: v }), 0);
    const unit = take(ledger);
    const { step } = ledger.updated(unit, done(ledger.plan(unit).kept, 1));
    assert.deepEqual([step.stalenessMean, step.stalenessMax], [1, 2]);
  });

  test('a resumed run: version, updates, iteration, env steps, positions and trained ids from its checkpoint', () => {
    const ledger = new LearnerLedger<Delivered>(
      SETTINGS,
      restored({ version: 3, updates: 3, trainedIteration: 2, offsets: { 'samples/0': '17' }, recentSampleIds: ['t1'], envSteps: 40 }),
    );
    assert.deepEqual([ledger.stats.version, ledger.stats.updates, ledger.stats.iteration, ledger.stats.envSteps], [3, 3, 2, 40]);
    assert.deepEqual([...ledger.positions.start], [['samples/0', 17n]]);
    assert.equal(ledger.deliver(delivery('t1', batchOf(3, 1)), 0), 'refused');
    assert.deepEqual(ledger.announcement(), { version: 3, learnerStep: 2, progress: { iteration: 2, envSteps: 40 } });
    assert.equal(ledger.finished, true, 'maxUpdates 3 reached');
    assert.match(ledger.startLine('run', '/ck/v00000003', true), /^learner: resumed run run at version 3 \(3 updates\) from \/ck\/v00000003$/);
  });

  test('a new run: version 0 checkpointed with nothing trained, announced as update 0', () => {
    const ledger = new LearnerLedger<Delivered>({ ...SETTINGS, maxUpdates: null });
    assert.deepEqual(ledger.checkpoint(null, null), { version: 0, parentVersion: null, updates: 0, offsets: {}, recentSampleIds: [], lastStep: null, trainedIteration: -1 });
    assert.deepEqual(ledger.announcement(), { version: 0, learnerStep: 0, progress: { iteration: -1, envSteps: 0 } });
    assert.equal(ledger.finished, false);
    assert.equal(ledger.startLine('run', '/ck', false), 'learner: new run run, initial policy v0 in /ck');
  });
});

function restored(r: { version: number; updates?: number; trainedIteration?: number; offsets?: Record<string, string>; recentSampleIds?: string[]; envSteps?: number }): Restored {
  return {
    version: r.version,
    updates: r.updates ?? r.version,
    trainedIteration: r.trainedIteration ?? r.version - 1,
    offsets: r.offsets ?? {},
    recentSampleIds: r.recentSampleIds ?? [],
    lastStep: r.envSteps === undefined ? null : ({ metrics: { envSteps: r.envSteps } } as never),
  };
}

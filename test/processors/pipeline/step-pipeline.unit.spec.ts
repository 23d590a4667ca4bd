// The processors' operator chain without Kafka: step envelopes in, units out (one per group, in the order
// they are made), the steps of written episodes only acknowledged, and a new consumer-group generation
// starting from scratch (what a rebalance relies on: the old generation's open episodes are dropped and
// their steps, delivered again, assembled anew).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Subject, finalize, scan, type Subscription } from 'rxjs';
import { groupSteps } from '../../../bench/load/episodes.js';
import type { OutputUnit } from '../../../processors/exactly-once/transactional-emitter.js';
import type { StepEnvelope } from '../../../processors/pipeline/output-units.js';
import { batchProcessor } from '../../../processors/pipeline/process-batch.js';
import { buildProcessorsConfig } from '../../../processors/pipeline/config.js';
import { perGeneration, stepPipeline } from '../../../processors/pipeline/step-pipeline.js';
import type { BatchStats } from '../../../processors/stats/batch-stats.js';

const config = buildProcessorsConfig({ topicPrefix: 'tf' }, { groupSize: 2, maxBatchGroups: 2, batchWindowMs: 10_000 });
const processBatch = batchProcessor({ reward: { terms: [{ kind: 'env_return' }] }, estimator: { name: 'grpo' }, filters: [] });

function envelopes(generation: number, firstOffset = 0): StepEnvelope[] {
  return groupSteps('r', 2, 2, 2).map((value, i) => ({
    topic: 'steps',
    partition: 0,
    offset: String(firstOffset + i),
    key: null,
    timestamp: 0,
    value,
    generation,
    ack: () => undefined,
  }));
}

const offsets = (sources: readonly { readonly offset: string }[]): number[] => sources.map((s) => Number(s.offset)).sort((a, b) => a - b);
const offsetsOf = (units: readonly OutputUnit[]): number[] => offsets(units.flatMap((u) => u.sources as StepEnvelope[]));

function run(marked: ReadonlySet<string> = new Set()) {
  const units: OutputUnit[] = [];
  const stats: BatchStats[] = [];
  const steps = new Subject<StepEnvelope>();
  const marks = { has: (runId: string, episodeId: string) => marked.has(`${runId}|${episodeId}`) };
  const subscription: Subscription = steps.pipe(stepPipeline({ config, processBatch, marks, emit: (unit) => units.push(unit) })).subscribe((s) => stats.push(s));
  return { units, stats, steps, subscription };
}

test('two full groups of a run: one rollout batch, one unit per group with its samples and marks, every step in exactly one unit', () => {
  const r = run();
  const sent = envelopes(1);
  for (const e of sent) r.steps.next(e);
  r.subscription.unsubscribe();
  assert.equal(r.stats.length, 1, 'one batch');
  assert.equal(r.units.length, 2);
  assert.deepEqual(
    r.units.map((u) => u.marks.map((m) => m.status)),
    [
      ['emitted', 'emitted'],
      ['emitted', 'emitted'],
    ],
  );
  assert.deepEqual(
    r.units.map((u) => u.samples.length),
    [2, 2],
  );
  assert.ok(r.units[0]!.rolloutStats && !('rolloutStats' in r.units[1]!), 'the statistics go with the first group');
  assert.deepEqual(offsetsOf(r.units), offsets(sent), 'each step acknowledged by one unit');
  assert.ok(r.units.every((u) => u.generation === 1));
});

test('steps of an episode already written are acknowledged at once and not assembled again', () => {
  const sent = envelopes(1);
  const written = sent[0]!.value.episodeId;
  const r = run(new Set([`r|${written}`]));
  for (const e of sent) r.steps.next(e);
  r.subscription.unsubscribe();
  const acknowledgedOnly = r.units.filter((u) => u.trajectories.length === 0);
  assert.deepEqual(
    acknowledgedOnly.flatMap((u) => u.sources),
    sent.filter((e) => e.value.episodeId === written),
  );
  assert.ok(!r.units.some((u) => u.trajectories.some((t) => t.episodeId === written)));
});

test('a new generation starts from scratch: what the old one held is dropped, its steps delivered again make the output once', () => {
  const r = run();
  const first = envelopes(1);
  for (const e of first.slice(0, 5)) r.steps.next(e); // the first group done, the second one open
  const before = r.units.length;
  const again = envelopes(2, 100);
  for (const e of again) r.steps.next(e);
  r.subscription.unsubscribe();
  assert.equal(before, 0, 'one group alone does not fill the batch');
  assert.equal(r.units.length, 2);
  assert.ok(r.units.every((u) => u.generation === 2));
  assert.deepEqual(offsetsOf(r.units), offsets(again), "only the new generation's steps");
});

test('perGeneration: one pipeline per generation, the previous one unsubscribed when the next begins', () => {
  const ended: number[] = [];
  const out: string[] = [];
  const items = new Subject<{ generation: number; n: number }>();
  items
    .pipe(
      perGeneration(
        (generation) => (source) =>
          source.pipe(
            scan((sum, item) => sum + item.n, 0),
            finalize(() => ended.push(generation)),
            (sums) => sums.pipe(scan((_, sum) => `${generation}:${sum}`, '')),
          ),
      ),
    )
    .subscribe((x) => out.push(x));
  for (const [generation, n] of [
    [1, 1],
    [1, 2],
    [2, 10],
    [2, 20],
    [3, 5],
  ] as const)
    items.next({ generation, n });
  assert.deepEqual(out, ['1:1', '1:3', '2:10', '2:30', '3:5'], 'sums start again with each generation');
  assert.deepEqual(ended, [1, 2]);
});

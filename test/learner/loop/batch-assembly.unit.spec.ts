// Unit: the learner's batch assembly (pure): a named rollout batch is one update once complete, batches go in
// iteration order, incomplete ones after their timeout, samples without a batch by the token budget, and the
// positions a restart reads again from never pass a held sample; after a restart, a complete batch past the next
// iteration waits for it, up to the batch timeout.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BatchAssembly, type Delivered } from '../../../learner/loop/batch-assembly.js';
import type { SampleBatch, TrainingSampleEvent } from '../../../schemas/index.js';

let nextOffset = 0;
function delivery(id: string, batch: SampleBatch | null, options: { runId?: string; tokens?: number; partition?: number } = {}): Delivered {
  const tokens = options.tokens ?? 10;
  const value = { sampleId: id, runId: options.runId ?? 'run', groupId: 'g', episodeId: id, tokenIds: new Array<number>(tokens).fill(1), batch } as unknown as TrainingSampleEvent;
  return { value, topic: 'samples', partition: options.partition ?? 0, offset: String(nextOffset++) };
}

const batchOf = (iteration: number, samples: number): SampleBatch => ({ batchId: `b${iteration}`, iteration, samples });

/** An assembly whose last trained iteration follows the units it hands out, as the ledger's does. */
function assembly(trained: Set<string> = new Set(), lastTrained = -1) {
  let last = lastTrained;
  const a = new BatchAssembly<Delivered>({
    runId: 'run',
    batchTokens: 25,
    minSamples: 2,
    maxWaitMs: 100,
    batchTimeoutMs: 1000,
    trained: (id) => trained.has(id),
    lastTrainedIteration: () => last,
  });
  const next = a.next.bind(a);
  a.next = (nowMs) => {
    const unit = next(nowMs);
    if (unit && unit.iteration > last) last = unit.iteration;
    return unit;
  };
  return a;
}

const ids = (unit: { deliveries: readonly Delivered[] } | null) => unit?.deliveries.map((d) => d.value.sampleId);

describe('BatchAssembly', () => {
  test('a named batch is one unit once it holds all its samples, whatever the token budget', () => {
    const a = assembly();
    const b0 = batchOf(0, 3);
    a.add(delivery('s1', b0, { tokens: 100 }), 0);
    a.add(delivery('s2', b0, { tokens: 100 }), 0);
    assert.equal(a.next(10), null, 'incomplete: 2 of 3');
    a.add(delivery('s3', b0, { tokens: 100 }), 0);
    const unit = a.next(10);
    assert.deepEqual(ids(unit), ['s1', 's2', 's3']);
    assert.deepEqual(
      { batchId: unit!.batchId, iteration: unit!.iteration, expected: unit!.expected, partial: unit!.partial },
      { batchId: 'b0', iteration: 0, expected: 3, partial: false },
    );
    assert.equal(a.next(10), null);
    assert.equal(a.held, 0);
  });

  test('batches go in iteration order: a complete later one waits while an earlier one fills', () => {
    const a = assembly();
    a.add(delivery('a1', batchOf(1, 1)), 0);
    a.add(delivery('b1', batchOf(0, 2)), 0);
    assert.equal(a.next(1), null, 'iteration 1 is complete but iteration 0 is still filling');
    a.add(delivery('b2', batchOf(0, 2)), 0);
    assert.deepEqual(ids(a.next(2)), ['b1', 'b2']);
    assert.deepEqual(ids(a.next(2)), ['a1']);
  });

  test('an incomplete batch is trained as it is batchTimeoutMs after its last sample, marked partial', () => {
    const a = assembly();
    a.add(delivery('x1', batchOf(4, 3)), 0);
    a.add(delivery('x2', batchOf(4, 3)), 500);
    assert.equal(a.next(1499), null);
    const unit = a.next(1500);
    assert.deepEqual(ids(unit), ['x1', 'x2']);
    assert.equal(unit!.partial, true);
  });

  test('after a restart a complete batch past the next iteration waits for it, up to the batch timeout after completing', () => {
    const a = assembly(new Set(), 4);
    a.add(delivery('c1', batchOf(6, 1)), 0);
    assert.equal(a.next(999), null, 'iteration 6 is whole, but 5 comes first and has not been read yet');
    a.add(delivery('d1', batchOf(5, 1)), 500);
    assert.deepEqual(ids(a.next(500)), ['d1']);
    assert.deepEqual(ids(a.next(500)), ['c1']);
  });

  test('a wait for a missing iteration that runs out trains the later batch, and later gaps are not waited for', () => {
    const a = assembly(new Set(), 4);
    a.add(delivery('c1', batchOf(6, 1)), 0);
    assert.equal(a.next(999), null);
    assert.deepEqual(ids(a.next(1000)), ['c1'], 'iteration 5 never came: 6 goes after the batch timeout');
    a.add(delivery('e1', batchOf(9, 1)), 1000);
    assert.deepEqual(ids(a.next(1000)), ['e1'], 'the producer skips iterations: no more waiting');
  });

  test('samples of other runs, trained samples and repeats are refused', () => {
    const a = assembly(new Set(['old']));
    assert.equal(a.add(delivery('o', batchOf(0, 1), { runId: 'other' }), 0), 'otherRun');
    assert.equal(a.add(delivery('old', batchOf(0, 2)), 0), 'duplicate');
    assert.equal(a.add(delivery('n', batchOf(0, 2)), 0), 'held');
    assert.equal(a.add(delivery('n', batchOf(0, 2)), 0), 'duplicate');
    assert.equal(a.add(delivery('l', null), 0), 'held');
    assert.equal(a.add(delivery('l', null), 0), 'duplicate');
  });

  test('samples without a batch: by the token budget, or minSamples after maxWaitMs', () => {
    const a = assembly();
    a.add(delivery('l1', null), 0);
    assert.equal(a.next(50), null, 'one sample, 10 of 25 tokens, not yet waited');
    a.add(delivery('l2', null), 10);
    assert.equal(a.next(50), null);
    assert.deepEqual(ids(a.next(100)), ['l1', 'l2'], 'two samples waited maxWaitMs');
    for (const id of ['m1', 'm2', 'm3']) a.add(delivery(id, null), 200);
    const unit = a.next(200);
    assert.deepEqual(ids(unit), ['m1', 'm2'], '30 tokens reached the budget; the unit takes what fits 25 (at least one)');
    assert.equal(unit!.batchId, null);
  });

  test('heldOffsets: the lowest held offset per partition, so a restart never skips a sample not yet trained', () => {
    const a = assembly();
    nextOffset = 100;
    a.add(delivery('p0a', batchOf(1, 2), { partition: 0 }), 0); // 100
    a.add(delivery('p0b', batchOf(0, 1), { partition: 0 }), 0); // 101
    a.add(delivery('p1a', batchOf(1, 2), { partition: 1 }), 0); // 102
    assert.deepEqual(ids(a.next(0)), ['p0b']);
    assert.deepEqual([...a.heldOffsets()].sort(), [
      ['samples/0', 100n],
      ['samples/1', 102n],
    ]);
    assert.deepEqual(ids(a.next(0)), ['p0a', 'p1a']);
    assert.equal(a.heldOffsets().size, 0);
  });
});

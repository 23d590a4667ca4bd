// Unit tier: the bounded memory of closed episodes and groups forgets the key whose latest add is oldest,
// exactly as a Set that re-inserts on add and evicts its first key, and its queue stays bounded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RecentlyClosed } from '../../../processors/assembly/recently-closed.js';

/** The reference: a Set in insertion order, a re-added key moved to the young end, the first key evicted. */
class ReferenceMemory {
  private readonly keys = new Set<string>();
  constructor(private readonly capacity: number) {}
  add(key: string): void {
    if (this.capacity <= 0) return;
    this.keys.delete(key);
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value as string);
  }
  has(key: string): boolean {
    return this.keys.has(key);
  }
  get size(): number {
    return this.keys.size;
  }
}

test('remembers and forgets exactly the keys the reference Set does, re-adds included', () => {
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 6 }), fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 3000 }), (capacity, adds) => {
      const memory = new RecentlyClosed(capacity);
      const reference = new ReferenceMemory(capacity);
      for (const n of adds) {
        memory.add(`k${n}`);
        reference.add(`k${n}`);
        assert.equal(memory.size, reference.size);
        for (let m = 0; m <= 12; m++) assert.equal(memory.has(`k${m}`), reference.has(`k${m}`), `k${m} after adding k${n}`);
      }
    }),
    { numRuns: 200 },
  );
});

test('at capacity, a new key evicts the one added longest ago; a key added again is the youngest', () => {
  const memory = new RecentlyClosed(3);
  for (const key of ['a', 'b', 'c', 'a', 'd']) memory.add(key);
  assert.deepEqual(
    ['a', 'b', 'c', 'd'].map((k) => memory.has(k)),
    [true, false, true, true],
  );
  const none = new RecentlyClosed(0);
  none.add('a');
  assert.equal(none.has('a'), false);
});

test('the queue stays within twice the keys held (and 1024), however often keys are added again', () => {
  const memory = new RecentlyClosed(10_000);
  for (let i = 0; i < 100_000; i++) memory.add(`k${i % 3}`);
  assert.equal(memory.size, 3);
  assert.ok(memory.queued <= 1024, `${memory.queued} entries queued for 3 keys`);
  for (let i = 0; i < 100_000; i++) memory.add(`n${i}`);
  assert.equal(memory.size, 10_000);
  assert.ok(memory.queued <= 20_000, `${memory.queued} entries queued for 10,000 keys`);
});

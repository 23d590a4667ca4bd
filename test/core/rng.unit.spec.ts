import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Rng } from '../../core/rng.js';

describe('Rng', () => {
  test('the same seed and stream give the same draws; other seeds and streams differ', () => {
    const draws = (seed: number, stream = 0) => {
      const rng = new Rng(seed, stream);
      return Array.from({ length: 8 }, () => rng.next());
    };
    assert.deepEqual(draws(42), draws(42));
    assert.notDeepEqual(draws(42), draws(43));
    assert.notDeepEqual(draws(42, 1), draws(42, 2));
    // Seeds above 2^32 are folded in, not truncated away.
    assert.notDeepEqual(draws(5), draws(5 + 2 ** 32));
  });

  test('next is uniform in [0, 1); int and intBetween stay in range', () => {
    const rng = new Rng(7);
    const buckets = new Array(10).fill(0);
    for (let i = 0; i < 100_000; i++) {
      const x = rng.next();
      assert.ok(x >= 0 && x < 1);
      buckets[Math.floor(x * 10)] += 1;
    }
    for (const b of buckets) assert.ok(Math.abs(b - 10_000) < 500, `bucket ${b}`);
    for (let i = 0; i < 1000; i++) {
      const n = rng.int(4);
      assert.ok(Number.isInteger(n) && n >= 0 && n < 4);
      const m = rng.intBetween(1, 5);
      assert.ok(m >= 1 && m <= 5);
    }
  });
});

// The token bucket and the per-key limiter, on a hand-stepped clock: no test here waits for real time.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RateLimiter, TokenBucket } from '../../api/token-bucket.js';

function manualClock(start = 1000) {
  let now = start;
  return { now: () => now, advance: (ms: number) => void (now += ms), set: (ms: number) => void (now = ms) };
}

test('a new bucket is full: it admits a whole burst at once, then nothing', () => {
  const clock = manualClock();
  const bucket = new TokenBucket({ ratePerSecond: 10, burst: 5, now: clock.now });
  assert.deepEqual(bucket.take(5), { ok: true, remaining: 0 });
  const refused = bucket.take(1);
  assert.equal(refused.ok, false);
});

test('a refusal says how long until the tokens are there, and takes none', () => {
  const clock = manualClock();
  const bucket = new TokenBucket({ ratePerSecond: 10, burst: 5, now: clock.now });
  bucket.take(5);
  assert.deepEqual(bucket.take(3), { ok: false, retryAfterMs: 300 });
  clock.advance(299);
  assert.equal(bucket.take(3).ok, false, 'one millisecond early is still too early');
  clock.advance(1);
  assert.deepEqual(bucket.take(3), { ok: true, remaining: 0 });
});

test('refills at the configured rate and never above the burst', () => {
  const clock = manualClock();
  const bucket = new TokenBucket({ ratePerSecond: 2, burst: 4, now: clock.now });
  bucket.take(4);
  clock.advance(1000);
  assert.equal(bucket.available(), 2);
  clock.advance(60_000);
  assert.equal(bucket.available(), 4);
  assert.equal(bucket.isFull(), true);
});

test('fractional rates work (one step every ten seconds)', () => {
  const clock = manualClock();
  const bucket = new TokenBucket({ ratePerSecond: 0.1, burst: 1, now: clock.now });
  bucket.take(1);
  assert.deepEqual(bucket.take(1), { ok: false, retryAfterMs: 10_000 });
  clock.advance(10_000);
  assert.equal(bucket.take(1).ok, true);
});

test('a clock stepping backwards does not drain or overfill the bucket', () => {
  const clock = manualClock(50_000);
  const bucket = new TokenBucket({ ratePerSecond: 1, burst: 3, now: clock.now });
  bucket.take(2);
  clock.set(10_000);
  assert.equal(bucket.available(), 1);
  clock.advance(1000);
  assert.equal(bucket.available(), 2);
});

test('taking more than the burst, or a non-positive count, is a programming error', () => {
  const bucket = new TokenBucket({ ratePerSecond: 1, burst: 3, now: () => 0 });
  assert.throws(() => bucket.take(4), RangeError);
  assert.throws(() => bucket.take(0), RangeError);
  assert.throws(() => bucket.take(1.5), RangeError);
  assert.throws(() => new TokenBucket({ ratePerSecond: 0, burst: 3 }), RangeError);
  assert.throws(() => new TokenBucket({ ratePerSecond: 1, burst: 0 }), RangeError);
});

test('the limiter keeps one bucket per key: one token running dry leaves another untouched', () => {
  const clock = manualClock();
  const limiter = new RateLimiter({ ratePerSecond: 1, burst: 2, now: clock.now });
  assert.equal(limiter.take('token:1', 2).ok, true);
  assert.equal(limiter.take('token:1', 1).ok, false);
  assert.equal(limiter.take('token:2', 2).ok, true);
});

test('the limiter forgets buckets that refilled, so its memory is bounded by active keys', () => {
  const clock = manualClock();
  const limiter = new RateLimiter({ ratePerSecond: 1, burst: 2, now: clock.now, maxKeys: 3 });
  for (const key of ['a', 'b', 'c']) limiter.take(key, 1);
  assert.equal(limiter.size, 3);
  clock.advance(1000); // a, b, c are full again
  limiter.take('d', 2);
  assert.equal(limiter.size, 1, 'the full buckets were dropped when a fourth key arrived');
  assert.equal(limiter.take('d', 1).ok, false, 'the drained bucket was kept');
});

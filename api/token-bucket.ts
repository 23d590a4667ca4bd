// Token-bucket rate limiting, pure: time comes from an injected clock, so tests step it by hand.
// A bucket holds up to `burst` tokens and refills at `ratePerSecond`; taking n tokens either succeeds
// at once or says how long until n would be there. RateLimiter keeps one bucket per key (per API token)
// and forgets buckets that have refilled completely, so its memory is bounded by the active keys.

export type Clock = () => number;

/** Refills add up fractions of a token; this much rounding error still counts as a whole token. */
const EPSILON = 1e-9;

export type TakeResult = { readonly ok: true; readonly remaining: number } | { readonly ok: false; readonly retryAfterMs: number };

export interface TokenBucketOptions {
  readonly ratePerSecond: number;
  readonly burst: number;
  /** Milliseconds, monotonic if possible (default performance.now). */
  readonly now?: Clock;
}

export class TokenBucket {
  readonly ratePerSecond: number;
  readonly burst: number;
  private readonly now: Clock;
  private tokens: number;
  private updatedAt: number;

  constructor(options: TokenBucketOptions) {
    const { ratePerSecond, burst, now = () => performance.now() } = options;
    if (!(ratePerSecond > 0) || !Number.isFinite(ratePerSecond)) throw new RangeError(`ratePerSecond must be a finite number > 0, got ${ratePerSecond}`);
    if (!Number.isInteger(burst) || burst < 1) throw new RangeError(`burst must be an integer >= 1, got ${burst}`);
    this.ratePerSecond = ratePerSecond;
    this.burst = burst;
    this.now = now;
    this.tokens = burst;
    this.updatedAt = now();
  }

  /** Tokens available now (fractional while refilling). */
  available(): number {
    this.refill();
    return this.tokens;
  }

  /** True when the bucket is full again, i.e. forgetting it changes nothing. */
  isFull(): boolean {
    return this.available() + EPSILON >= this.burst;
  }

  /** Takes n tokens if all n are there; otherwise takes none and says when to retry. */
  take(n = 1): TakeResult {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`take(n) needs an integer n >= 1, got ${n}`);
    if (n > this.burst) throw new RangeError(`take(${n}) can never succeed: the bucket holds at most ${this.burst}`);
    this.refill();
    if (this.tokens + EPSILON >= n) {
      this.tokens = Math.max(0, this.tokens - n);
      return { ok: true, remaining: Math.floor(this.tokens + EPSILON) };
    }
    return { ok: false, retryAfterMs: Math.ceil(((n - this.tokens) / this.ratePerSecond) * 1000) };
  }

  private refill(): void {
    const now = this.now();
    // A clock that steps back (not monotonic) must not drain the bucket.
    const elapsedMs = Math.max(0, now - this.updatedAt);
    this.tokens = Math.min(this.burst, this.tokens + (elapsedMs / 1000) * this.ratePerSecond);
    this.updatedAt = now;
  }
}

export interface RateLimiterOptions extends Omit<TokenBucketOptions, 'now'> {
  readonly now?: Clock;
  /** Full buckets are forgotten once more than this many keys are held (default 10,000). */
  readonly maxKeys?: number;
}

/** One token bucket per key. */
export class RateLimiter {
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly now: Clock;
  private readonly maxKeys: number;

  constructor(private readonly options: RateLimiterOptions) {
    this.now = options.now ?? (() => performance.now());
    this.maxKeys = options.maxKeys ?? 10_000;
    // Fail at construction, not on the first request.
    new TokenBucket({ ...options, now: this.now });
  }

  take(key: string, n = 1): TakeResult {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.forgetFull();
      bucket = new TokenBucket({ ratePerSecond: this.options.ratePerSecond, burst: this.options.burst, now: this.now });
      this.buckets.set(key, bucket);
    }
    return bucket.take(n);
  }

  /** Keys currently held (for tests and diagnostics). */
  get size(): number {
    return this.buckets.size;
  }

  /** Drops buckets that refilled completely: a new bucket for that key would be identical. */
  forgetFull(): void {
    for (const [key, bucket] of this.buckets) if (bucket.isFull()) this.buckets.delete(key);
  }
}

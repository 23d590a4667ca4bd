// Small statistics over recent values: a bounded window, mean, median, MAD. Population moments
// throughout (a detector describes the window it has, it does not estimate a larger population).

/** The last `capacity` values pushed, oldest first. */
export class Window {
  private readonly items: number[] = [];

  constructor(readonly capacity: number) {
    if (!(Number.isInteger(capacity) && capacity >= 1)) throw new RangeError(`Window capacity must be an integer ≥ 1, got ${capacity}`);
  }

  push(value: number): void {
    this.items.push(value);
    if (this.items.length > this.capacity) this.items.shift();
  }

  get length(): number {
    return this.items.length;
  }

  get full(): boolean {
    return this.items.length === this.capacity;
  }

  /** The values, oldest first (a copy). */
  values(): number[] {
    return [...this.items];
  }

  /** The newest `n` values (fewer when the window holds fewer). */
  last(n: number): number[] {
    return this.items.slice(Math.max(0, this.items.length - n));
  }

  /** Every value but the newest `n`. */
  allBut(n: number): number[] {
    return this.items.slice(0, Math.max(0, this.items.length - n));
  }
}

export function mean(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  let sum = 0;
  for (const x of xs) sum += x;
  return sum / xs.length;
}

/** Population standard deviation. */
export function std(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const m = mean(xs);
  let ss = 0;
  for (const x of xs) ss += (x - m) * (x - m);
  return Math.sqrt(ss / xs.length);
}

/** The median (mean of the two middle values for an even count), as ClickHouse's `median` interpolates. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median absolute deviation from the median (unscaled; × 1.4826 estimates σ for normal data). */
export function mad(xs: readonly number[], center = median(xs)): number {
  return median(xs.map((x) => Math.abs(x - center)));
}

/** Consistency constant: 1.4826 · MAD estimates the standard deviation of normally distributed data. */
export const MAD_TO_SIGMA = 1.4826;

/**
 * A recent level against a lagging baseline: `recent` = mean of the newest `recentSize` values,
 * `baseline` = median of up to `baselineSize` values before those. The lag keeps a sudden change out of
 * the baseline it is compared with.
 */
export class LaggedBaseline {
  private readonly window: Window;

  constructor(
    baselineSize: number,
    private readonly recentSize: number,
    private readonly minBaseline: number,
  ) {
    this.window = new Window(baselineSize + recentSize);
  }

  /** Adds a value; the levels once at least minBaseline baseline values exist, else null. */
  push(value: number): { recent: number; baseline: number; baselinePoints: number } | null {
    this.window.push(value);
    const base = this.window.allBut(this.recentSize);
    if (base.length < this.minBaseline) return null;
    return { recent: mean(this.window.last(this.recentSize)), baseline: median(base), baselinePoints: base.length };
  }
}

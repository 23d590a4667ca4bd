// The pure parts of `trajflow bench collapse`: when a success curve "fell", how early the first collapse
// alert came, and the text charts. No training here (bench/collapse.ts runs the loops).
//
// "Fell" is defined on the rolling mean of the per-iteration train success (trailing window of `window`
// iterations, full windows only): the first iteration whose rolling mean is below `ratio` × the highest
// rolling mean so far AND at least `minDrop` below it. The peak is the iteration of that highest rolling mean
// before the fall. Lead time = fall iteration − iteration at which the first alert was raised: positive
// means the warning came first.
//
// The window and the margins keep sampling noise around a flat curve, and one bad batch, from counting as a fall
// (the reasoning, and what a smaller window and margin did: docs/results/collapse.md).

export interface FallRule {
  /** Trailing window of the rolling mean, in iterations. */
  readonly window: number;
  /** Fell when the rolling mean is below ratio × its running peak … */
  readonly ratio: number;
  /** … and at least this far below it (absolute success rate). */
  readonly minDrop: number;
}

export const defaultFallRule: FallRule = Object.freeze({ window: 5, ratio: 0.8, minDrop: 0.15 });

/** Trailing mean over `window` points; NaN until a full window is available. */
export function rollingMean(values: readonly number[], window: number): number[] {
  if (!Number.isInteger(window) || window < 1) throw new RangeError(`window must be a positive integer, got ${window}`);
  let sum = 0;
  return values.map((v, i) => {
    sum += v;
    if (i >= window) sum -= values[i - window]!;
    return i >= window - 1 ? sum / window : Number.NaN;
  });
}

export interface Fall {
  /** Index of the highest rolling mean before the fall (the end of its window). */
  readonly peakIndex: number;
  readonly peak: number;
  /** First index where the rule holds. */
  readonly fallIndex: number;
  /** The rolling mean there. */
  readonly value: number;
}

/** Where the success curve fell under `rule` (indices into `success`), or null if it never did. */
export function findFall(success: readonly number[], rule: FallRule = defaultFallRule): Fall | null {
  const rolling = rollingMean(success, rule.window);
  let peak = Number.NEGATIVE_INFINITY;
  let peakIndex = -1;
  for (let i = 0; i < rolling.length; i++) {
    const r = rolling[i]!;
    if (Number.isNaN(r)) continue;
    if (peakIndex >= 0 && r < rule.ratio * peak && peak - r >= rule.minDrop) return { peakIndex, peak, fallIndex: i, value: r };
    if (r > peak) {
      peak = r;
      peakIndex = i;
    }
  }
  return null;
}

/** An alert as the bench records it: the iteration during which the detectors raised it. */
export interface AlertMark {
  readonly iteration: number;
  readonly kind: string;
}

export interface LeadTime {
  readonly firstAlert: AlertMark | null;
  /** fall iteration − first alert iteration; null without a fall or without an alert. */
  readonly leadIterations: number | null;
  /** Alerts raised at or before the peak (before success even started to fall). */
  readonly alertsBeforePeak: number;
  /** Alerts raised before the fall iteration. */
  readonly alertsBeforeFall: number;
}

/** The lead time of the first alert over the fall (alerts in any order). */
export function leadTime(alerts: readonly AlertMark[], fall: Pick<Fall, 'peakIndex' | 'fallIndex'> | null): LeadTime {
  const sorted = [...alerts].sort((a, b) => a.iteration - b.iteration);
  const firstAlert = sorted[0] ?? null;
  return {
    firstAlert,
    leadIterations: firstAlert && fall ? fall.fallIndex - firstAlert.iteration : null,
    alertsBeforePeak: fall ? sorted.filter((a) => a.iteration <= fall.peakIndex).length : 0,
    alertsBeforeFall: fall ? sorted.filter((a) => a.iteration < fall.fallIndex).length : 0,
  };
}

const BARS = '▁▂▃▄▅▆▇█';

/** One character per value, scaled to [lo, hi] (non-finite values print as '·'). */
export function sparkline(values: readonly number[], lo: number, hi: number): string {
  return values
    .map((v) => {
      if (!Number.isFinite(v)) return '·';
      const t = hi > lo ? (Math.min(hi, Math.max(lo, v)) - lo) / (hi - lo) : 0;
      return BARS[Math.min(BARS.length - 1, Math.floor(t * BARS.length))]!;
    })
    .join('');
}

/** A marker row under a sparkline: `mark` at each given iteration, '^' for the fall, spaces elsewhere. */
export function markerRow(length: number, marks: readonly number[], fallIndex: number | null, mark = '!'): string {
  const row = Array.from({ length }, () => ' ');
  for (const i of marks) if (i >= 0 && i < length) row[i] = mark;
  if (fallIndex !== null && fallIndex >= 0 && fallIndex < length) row[fallIndex] = row[fallIndex] === mark ? '*' : '^';
  return row.join('').trimEnd();
}

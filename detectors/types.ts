// What every collapse detector shares: the alert it returns and the shape of a detector.
//
// A detector is a small state machine over one time-ordered stream of metric points (one point per
// learner update, per rollout batch or per window of trajectories). `observe` returns the alerts the new
// point raises: most points raise none, and a condition raises one alert per spell (AlertLatch), not
// one per update. Detectors know nothing of runs, Kafka or events: the engine keeps one set per run and
// turns their alerts into CollapseAlertEvents.

/** The collapse_alert schema's severities. */
export type Severity = 'info' | 'warning' | 'critical';

export interface DetectorAlert {
  /** The collapse_alert kind, e.g. 'reward_variance_cliff'. */
  readonly kind: string;
  readonly severity: Severity;
  /** Position of the point that fired, in the detector's own units (learner step, batch ordinal, window index). */
  readonly at: number;
  /** The observed value of the monitored signal. */
  readonly value: number;
  /** The threshold it crossed. */
  readonly threshold: number;
  readonly message: string;
  /** Supporting numbers (baselines, window statistics). */
  readonly evidence: Readonly<Record<string, number>>;
}

export interface Detector<P> {
  observe(point: P): DetectorAlert[];
}

/** Runs a detector over a whole series: every alert it raises, in order. */
export function runDetector<P>(detector: Detector<P>, points: Iterable<P>): DetectorAlert[] {
  const alerts: DetectorAlert[] = [];
  for (const point of points) alerts.push(...detector.observe(point));
  return alerts;
}

/** A number for messages: 4 significant digits, no exponent for everyday magnitudes. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  const abs = Math.abs(x);
  if (abs !== 0 && (abs < 1e-3 || abs >= 1e6)) return x.toExponential(3);
  return String(Number(x.toPrecision(4)));
}

// The scoring of `trajflow bench alerts` (pure), fixed before any run was scored:
// - a run is labelled collapsing when its train success fell (collapse-analysis.ts's rule: the rolling mean of 5
//   below 0.8 × its running peak and ≥ 0.15 below it) and stayed down: the rolling mean did not climb back to
//   0.8 × that peak within the next `sustain` updates. A dip that recovers is noise of the tasks drawn (a batch of
//   8 fresh maps), not a collapse; healthy otherwise — whatever the run staged. `sustain` was 10 until the
//   FrozenLake preset's runs on the tuning seeds (alerts-scenarios.ts) dipped for 20 and 22 updates before
//   climbing on to their best (docs/results/alerts.md); the scored runs' labels are the same under 10 and 30;
// - an alert is right when its run fell and it came at most `horizon` updates before the fall, or after the fall
//   while the run was still down (before its rolling mean climbed back to `ratio` × the peak, or the run ended):
//   an alert on a run that has collapsed and not recovered is worth reading. Every other alert is a false alarm;
// - a fall is caught by a detector when that detector raised an alert at most `horizon` updates before the fall or
//   `after` updates after it (an alert later than that no longer tells of the fall), and caught early when that
//   alert came at or before the fall; the lead time is the fall's update minus the first catching alert's
//   (negative: the alert came after the fall — an abrupt fault gives no earlier sign);
// - on a run whose fault was staged at a known update (the onset), the delay is the first catching alert at or
//   after the onset minus the onset, and the reach is the fall minus the onset: the most lead any detector could
//   have had, so a lead goal above a fault's reach cannot be met on it;
// - a healthy run passes when it raised no critical alert and at most one warning.
import { defaultFallRule, rollingMean, type Fall, type FallRule } from './collapse-analysis.js';
import { median } from './median.js';

export const SCORING = Object.freeze({ horizon: 30, after: 10, sustain: 30, healthyMaxWarnings: 1 });

/** The first fall under `rule` that does not recover within `sustain` updates (null: none), and the dips before it. */
export function findSustainedFall(success: readonly number[], rule: FallRule = defaultFallRule, sustain = SCORING.sustain): { fall: Fall | null; dips: number } {
  const rolling = rollingMean(success, rule.window);
  let peak = Number.NEGATIVE_INFINITY;
  let peakIndex = -1;
  let dips = 0;
  for (let i = 0; i < rolling.length; i++) {
    const r = rolling[i]!;
    if (Number.isNaN(r)) continue;
    if (peakIndex >= 0 && r < rule.ratio * peak && peak - r >= rule.minDrop) {
      const after = rolling.slice(i + 1, i + 1 + sustain);
      const recovery = after.findIndex((x) => x >= rule.ratio * peak);
      if (recovery < 0) return { fall: { peakIndex, peak, fallIndex: i, value: r }, dips };
      dips++;
      i += recovery;
      continue;
    }
    if (r > peak) {
      peak = r;
      peakIndex = i;
    }
  }
  return { fall: null, dips };
}

/** The first index after the fall where the rolling mean is back at `ratio` × the peak (the run's length: never). */
function recoveryIndex(success: readonly number[], fall: Fall, rule: FallRule = defaultFallRule): number {
  const rolling = rollingMean(success, rule.window);
  const back = rolling.findIndex((r, i) => i > fall.fallIndex && r >= rule.ratio * fall.peak);
  return back < 0 ? success.length : back;
}

export interface ScoredAlert {
  readonly iteration: number;
  readonly kind: string;
  readonly severity: string;
}

export interface ScoredRun {
  readonly name: string;
  readonly trainSuccess: readonly number[];
  readonly alerts: readonly ScoredAlert[];
  /** The update a staged fault started at, when the run staged one. */
  readonly onset?: number;
}

export interface RunVerdict {
  readonly name: string;
  readonly fell: boolean;
  readonly fall: Fall | null;
  /** Falls under the rule that recovered within `sustain` updates (not collapses). */
  readonly dips: number;
  readonly rightAlerts: number;
  readonly falseAlarms: number;
  /** Fall − the first catching alert (negative: after the fall); null without a fall or without such an alert. */
  readonly lead: number | null;
  /** Staged faults that fell: the first catching alert at or after the onset − the onset (null: none). */
  readonly delay: number | null;
  /** Staged faults that fell: the fall − the onset. */
  readonly reach: number | null;
  readonly criticals: number;
  readonly warnings: number;
  /** Healthy runs: no critical and at most one warning; null for runs that fell. */
  readonly healthyPass: boolean | null;
}

export interface DetectorScore {
  readonly kind: string;
  readonly alerts: number;
  /** Right alerts / alerts; null when the detector raised none. */
  readonly precision: number | null;
  /** Falls caught / falls; null when no run fell. */
  readonly recall: number | null;
  /** Falls caught at or before the fall / falls. */
  readonly earlyRecall: number | null;
  readonly medianLead: number | null;
}

export interface AlertsScore {
  readonly runs: RunVerdict[];
  readonly detectors: DetectorScore[];
  readonly overall: DetectorScore;
  readonly healthyRuns: number;
  readonly healthyPassing: number;
  /** Median over staged faults that fell and were caught of the delay after the onset, and of their reach. */
  readonly medianDelay: number | null;
  readonly medianReach: number | null;
}

/** Where a run's alerts count as right (precision) and where they catch its fall (recall, lead time). */
interface FallWindows {
  readonly fall: Fall;
  /** The first update the run is back up (or its length). */
  readonly recovery: number;
}

function fallWindows(run: ScoredRun): { windows: FallWindows | null; dips: number } {
  const { fall, dips } = findSustainedFall(run.trainSuccess);
  return { windows: fall ? { fall, recovery: recoveryIndex(run.trainSuccess, fall) } : null, dips };
}

/** A quiet run raised no critical alert and at most `healthyMaxWarnings` warnings. */
export function isQuiet(alerts: readonly ScoredAlert[]): boolean {
  const criticals = alerts.filter((a) => a.severity === 'critical').length;
  return criticals === 0 && alerts.length - criticals <= SCORING.healthyMaxWarnings;
}

const isRight = (iteration: number, w: FallWindows | null) => w !== null && iteration >= w.fall.fallIndex - SCORING.horizon && iteration < w.recovery;
const catches = (iteration: number, w: FallWindows | null) => w !== null && iteration >= w.fall.fallIndex - SCORING.horizon && iteration <= w.fall.fallIndex + SCORING.after;

function verdictOf(run: ScoredRun, { windows, dips }: { windows: FallWindows | null; dips: number }): RunVerdict {
  const fall = windows?.fall ?? null;
  const right = run.alerts.filter((a) => isRight(a.iteration, windows)).length;
  const catching = run.alerts.filter((a) => catches(a.iteration, windows)).map((a) => a.iteration);
  const criticals = run.alerts.filter((a) => a.severity === 'critical').length;
  const warnings = run.alerts.length - criticals;
  return {
    name: run.name,
    fell: fall !== null,
    fall,
    dips,
    rightAlerts: right,
    falseAlarms: run.alerts.length - right,
    lead: fall && catching.length > 0 ? fall.fallIndex - Math.min(...catching) : null,
    ...onsetTimes(run, fall, catching),
    criticals,
    warnings,
    healthyPass: fall ? null : isQuiet(run.alerts),
  };
}

function onsetTimes(run: ScoredRun, fall: Fall | null, catching: readonly number[]): { delay: number | null; reach: number | null } {
  if (run.onset === undefined || fall === null) return { delay: null, reach: null };
  const afterOnset = catching.filter((i) => i >= run.onset!);
  return { delay: afterOnset.length > 0 ? Math.min(...afterOnset) - run.onset : null, reach: fall.fallIndex - run.onset };
}

/** One detector's score (`kind` null: any detector). */
function detectorScore(kind: string | null, runs: readonly ScoredRun[], windows: readonly (FallWindows | null)[]): DetectorScore {
  let alerts = 0;
  let right = 0;
  const leads: number[] = [];
  runs.forEach((run, i) => {
    const w = windows[i]!;
    const own = run.alerts.filter((a) => kind === null || a.kind === kind);
    const caught = own.filter((a) => catches(a.iteration, w));
    alerts += own.length;
    right += own.filter((a) => isRight(a.iteration, w)).length;
    if (w && caught.length > 0) leads.push(w.fall.fallIndex - Math.min(...caught.map((a) => a.iteration)));
  });
  const falls = windows.filter((w) => w !== null).length;
  const share = (n: number) => (falls > 0 ? n / falls : null);
  return {
    kind: kind ?? 'any',
    alerts,
    precision: alerts > 0 ? right / alerts : null,
    recall: share(leads.length),
    earlyRecall: share(leads.filter((lead) => lead >= 0).length),
    medianLead: leads.length > 0 ? median(leads) : null,
  };
}

/** Every run's verdict, each detector's and the overall precision, recall and lead time. */
export function scoreAlerts(runs: readonly ScoredRun[]): AlertsScore {
  const falls = runs.map(fallWindows);
  const verdicts = runs.map((run, i) => verdictOf(run, falls[i]!));
  const windows = falls.map((f) => f.windows);
  const kinds = [...new Set(runs.flatMap((r) => r.alerts.map((a) => a.kind)))].sort();
  const healthy = verdicts.filter((v) => !v.fell);
  return {
    runs: verdicts,
    detectors: kinds.map((kind) => detectorScore(kind, runs, windows)),
    overall: detectorScore(null, runs, windows),
    healthyRuns: healthy.length,
    healthyPassing: healthy.filter((v) => v.healthyPass).length,
    ...medianOnsetTimes(verdicts),
  };
}

function medianOnsetTimes(verdicts: readonly RunVerdict[]): { medianDelay: number | null; medianReach: number | null } {
  const caught = verdicts.filter((v) => v.delay !== null);
  return caught.length === 0 ? { medianDelay: null, medianReach: null } : { medianDelay: median(caught.map((v) => v.delay!)), medianReach: median(caught.map((v) => v.reach!)) };
}

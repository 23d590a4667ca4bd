// The scoring of `trajflow bench alerts` (pure), fixed before any run was scored:
// - a run is labelled collapsing when its train success fell (collapse-analysis.ts's rule: the rolling mean of 5
//   below 0.8 × its running peak and ≥ 0.15 below it) and stayed down: the rolling mean did not climb back to
//   0.8 × that peak within the next `sustain` updates. A dip that recovers is noise of the tasks drawn (a batch of
//   8 fresh maps), not a collapse; healthy otherwise — whatever the run staged. `sustain` was 10 until the
//   FrozenLake preset's runs on the tuning seeds (alerts-scenarios.ts) dipped for 20 and 22 updates before
//   climbing on to their best (docs/results/alerts.md); the scored runs' labels are the same under 10 and 30;
// - an alert is right when its run fell and it came at most `horizon` updates before the fall or `after` updates
//   after it (it still points at the collapse); every other alert is a false alarm;
// - a fall is caught by a detector when that detector raised a right alert (in the window above), and caught
//   early when that alert came at or before the fall; the lead time is the fall's update minus the first right
//   alert's (negative: the alert came after the fall — an abrupt fault gives no earlier sign);
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

export interface ScoredAlert {
  readonly iteration: number;
  readonly kind: string;
  readonly severity: string;
}

export interface ScoredRun {
  readonly name: string;
  readonly trainSuccess: readonly number[];
  readonly alerts: readonly ScoredAlert[];
}

export interface RunVerdict {
  readonly name: string;
  readonly fell: boolean;
  readonly fall: Fall | null;
  /** Falls under the rule that recovered within `sustain` updates (not collapses). */
  readonly dips: number;
  readonly rightAlerts: number;
  readonly falseAlarms: number;
  /** Fall − the first right alert (negative: after the fall); null without a fall or without such an alert. */
  readonly lead: number | null;
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
}

const inWindow = (iteration: number, fall: Fall | null) => fall !== null && iteration >= fall.fallIndex - SCORING.horizon && iteration <= fall.fallIndex + SCORING.after;

function verdictOf(run: ScoredRun): RunVerdict {
  const { fall, dips } = findSustainedFall(run.trainSuccess);
  const right = run.alerts.filter((a) => inWindow(a.iteration, fall)).map((a) => a.iteration);
  const criticals = run.alerts.filter((a) => a.severity === 'critical').length;
  const warnings = run.alerts.length - criticals;
  return {
    name: run.name,
    fell: fall !== null,
    fall,
    dips,
    rightAlerts: right.length,
    falseAlarms: run.alerts.length - right.length,
    lead: fall && right.length > 0 ? fall.fallIndex - Math.min(...right) : null,
    criticals,
    warnings,
    healthyPass: fall ? null : criticals === 0 && warnings <= SCORING.healthyMaxWarnings,
  };
}

/** One detector's score (`kind` null: any detector). */
function detectorScore(kind: string | null, runs: readonly ScoredRun[], verdicts: readonly RunVerdict[]): DetectorScore {
  let alerts = 0;
  let right = 0;
  const leads: number[] = [];
  runs.forEach((run, i) => {
    const { fall } = verdicts[i]!;
    const own = run.alerts.filter((a) => kind === null || a.kind === kind);
    const caught = own.filter((a) => inWindow(a.iteration, fall));
    alerts += own.length;
    right += caught.length;
    if (fall && caught.length > 0) leads.push(fall.fallIndex - Math.min(...caught.map((a) => a.iteration)));
  });
  const falls = verdicts.filter((v) => v.fell).length;
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
  const verdicts = runs.map(verdictOf);
  const kinds = [...new Set(runs.flatMap((r) => r.alerts.map((a) => a.kind)))].sort();
  const healthy = verdicts.filter((v) => !v.fell);
  return {
    runs: verdicts,
    detectors: kinds.map((kind) => detectorScore(kind, runs, verdicts)),
    overall: detectorScore(null, runs, verdicts),
    healthyRuns: healthy.length,
    healthyPassing: healthy.filter((v) => v.healthyPass).length,
  };
}

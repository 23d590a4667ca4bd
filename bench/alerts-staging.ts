// The second view of `trajflow bench alerts` (pure): runs labelled by what they staged instead of by their success
// curve. A run that staged a fault (a broken reward, a learning rate gone wrong, GRPO at a rate that breaks it) is
// broken from its onset on, whether or not its success has fallen yet; a run that staged none is healthy.
// - an alert is right when its run staged a fault and it came at or after the onset, a false alarm otherwise;
// - a fault is caught when any alert came at or after its onset; the delay is that first alert's update − the onset;
// - a run that staged no fault is quiet as a healthy run is under the fall rule (isQuiet).
// The fall rule (alerts-score.ts) stays the benchmark's label: a reward bug that success has not yet paid for counts
// as healthy there, and an alert on it as a false alarm. This view shows how many alerts point at a real fault.
import { isQuiet, type ScoredRun } from './alerts-score.js';
import { median } from './median.js';

export interface StagingScore {
  readonly alerts: number;
  /** Alerts at or after a staged fault's onset / alerts; null without alerts. */
  readonly precision: number | null;
  readonly faults: number;
  /** Faults caught / faults; null without faults. */
  readonly recall: number | null;
  /** Median over the caught faults of the first alert's update − the onset. */
  readonly medianDelay: number | null;
  readonly unfaultedRuns: number;
  readonly unfaultedQuiet: number;
}

export function scoreStaging(runs: readonly ScoredRun[]): StagingScore {
  let alerts = 0;
  let right = 0;
  const delays: number[] = [];
  let unfaultedQuiet = 0;
  for (const run of runs) {
    alerts += run.alerts.length;
    if (run.onset === undefined) {
      if (isQuiet(run.alerts)) unfaultedQuiet++;
      continue;
    }
    const after = run.alerts.filter((a) => a.iteration >= run.onset!).map((a) => a.iteration);
    right += after.length;
    if (after.length > 0) delays.push(Math.min(...after) - run.onset);
  }
  const faults = runs.filter((r) => r.onset !== undefined).length;
  return {
    alerts,
    precision: alerts > 0 ? right / alerts : null,
    faults,
    recall: faults > 0 ? delays.length / faults : null,
    medianDelay: delays.length > 0 ? median(delays) : null,
    unfaultedRuns: runs.length - faults,
    unfaultedQuiet,
  };
}

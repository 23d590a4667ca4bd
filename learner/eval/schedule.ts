// When the evaluator evaluates (pure): the untrained version 0 first, then the newest version once it is at
// least `every` versions past the last one evaluated, and the run's final version whatever its distance. A
// version announced while an evaluation runs is not queued: only the newest is evaluated next (an evaluator
// that falls behind skips versions rather than lagging further).

export interface EvalSchedule {
  /** Versions between two evaluations (≥ 1). */
  readonly every: number;
  /** The run's last version (evaluated, then the evaluator stops); null: runs until stopped. */
  readonly finalVersion: number | null;
}

/** Whether `newest` is due, after `lastEvaluated` (null: nothing evaluated yet). */
export function isDue(newest: number, lastEvaluated: number | null, schedule: EvalSchedule): boolean {
  if (lastEvaluated === null) return true;
  if (newest <= lastEvaluated) return false;
  return newest >= lastEvaluated + schedule.every || newest === schedule.finalVersion;
}

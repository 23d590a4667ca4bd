// Which policy version the evaluator evaluates next (pure; the schedule's rule is schedule.ts's isDue): of the
// versions announced, only the newest is kept — a version announced while an evaluation runs is not queued, so an
// evaluator that falls behind skips versions rather than lagging further — and once the run's final version is
// evaluated, the evaluator is done.
import { isDue, type EvalSchedule } from './schedule.js';

export class NextEvaluation<V extends { readonly version: number }> {
  private newest: V | null = null;
  private lastEvaluated: number | null = null;

  constructor(private readonly schedule: EvalSchedule) {}

  /** A version event read (the topic may repeat or reorder them): kept when it is the newest yet. */
  announced(event: V): void {
    if (!this.newest || event.version > this.newest.version) this.newest = event;
  }

  /** The version to evaluate now, or null: wait for the next announcement. */
  due(): V | null {
    const candidate = this.newest;
    return candidate && isDue(candidate.version, this.lastEvaluated, this.schedule) ? candidate : null;
  }

  /** `version` evaluated (and its event published): true when it was the run's final version, the evaluator's last. */
  evaluated(version: number): boolean {
    this.lastEvaluated = version;
    return version === this.schedule.finalVersion;
  }
}

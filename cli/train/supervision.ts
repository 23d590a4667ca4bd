// What `trajflow train` does when one of its parts exits (pure). A part that exits on its own (e.g. the processors
// abort a transaction when the broker goes away, by design) is started again, up to MAX_RESTARTS times; the run
// ends when the learner finishes its --updates (after the evaluator's last evaluation, which the summary needs),
// on Ctrl-C, or when a part keeps failing.

export const MAX_RESTARTS = 5;
/** The wait before a part is started again. */
export const RESTART_DELAY_MS = 2000;
/** How long the finished learner waits for the evaluator's final evaluation. */
export const EVALUATOR_GRACE_MS = 600_000;

export type ExitDecision =
  /** Nothing to do: the run is stopping, or the evaluator finished its final version. */
  | { readonly kind: 'ignore' }
  /** The learner made its updates: the run ends well, once the evaluator (when there is one) is done. */
  | { readonly kind: 'done' }
  | { readonly kind: 'restart'; readonly line: string }
  | { readonly kind: 'fail'; readonly line: string };

export class Supervision {
  private readonly restarts = new Map<string, number>();

  exited(name: string, code: number | null, stopping: boolean): ExitDecision {
    if (stopping) return { kind: 'ignore' };
    if (name === 'evaluator' && code === 0) return { kind: 'ignore' };
    if (name === 'learner' && code === 0) return { kind: 'done' };
    const count = (this.restarts.get(name) ?? 0) + 1;
    this.restarts.set(name, count);
    if (count > MAX_RESTARTS) return { kind: 'fail', line: `trajflow train: ${name} exited with ${code} ${count} times; stopping the other parts` };
    return { kind: 'restart', line: `trajflow train: ${name} exited with ${code}; starting it again (${count}/${MAX_RESTARTS})` };
  }
}

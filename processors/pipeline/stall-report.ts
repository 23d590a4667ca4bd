// What the processors say when they have waited long on one thing: a transaction the worker has not
// finished, or a rebalance's setup (settling, fencing, reloading the marks) that has not ended. Waiting
// there writes nothing, and without this line a stalled pipeline printed nothing at all — an operator (and
// a failed test's log) could not tell a quiet run from a stuck one (docs/concepts/exactly-once.md).
import type { PendingRequest } from '../exactly-once/transaction-client.js';

/** A rebalance's setup in progress (processor.ts takeOver): its current stage and how long the setup has run. */
export interface SetupInProgress {
  readonly stage: string;
  readonly ageMs: number;
}

export interface StallState {
  readonly oldestRequest: PendingRequest | null;
  readonly setup: SetupInProgress | null;
}

/** Waits shorter than this are normal (a transaction's p99 is under a second, a setup a few seconds). */
export const STALL_REPORT_AFTER_MS = 30_000;

/** The line to print, or null when nothing has waited `afterMs` or longer. */
export function stallReport(state: StallState, afterMs = STALL_REPORT_AFTER_MS): string | null {
  const parts: string[] = [];
  const request = state.oldestRequest;
  if (request && request.ageMs >= afterMs) {
    const what = request.partition === null ? `a ${request.kind}` : `a ${request.kind} on partition ${request.partition}`;
    parts.push(`the transaction worker has run ${what} for ${seconds(request.ageMs)}`);
  }
  if (state.setup && state.setup.ageMs >= afterMs) parts.push(`a rebalance's setup has run ${seconds(state.setup.ageMs)} (now ${state.setup.stage})`);
  return parts.length === 0 ? null : `processors: waiting — ${parts.join('; ')}`;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}

// What follows a failed insert. ClickHouse refusing the insert or being away (a ClickHouseError) is waited
// out: the batch is encoded and sent again after a backoff that starts at the initial delay and doubles up
// to the maximum, with nothing acknowledged meanwhile — the consumer's in-flight bound then stops fetching,
// so the sink holds a bounded number of events and loses none. Anything else thrown is a bug: the sink
// stops. A sink that is stopping gives the batch up unacknowledged: its events come again after the restart.
import { ClickHouseError } from '../../infra/clickhouse/http.js';

export interface InsertAttempt {
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** How long to wait should this attempt fail. */
  readonly delayMs: number;
}

export const firstInsertAttempt = (initialMs: number): InsertAttempt => ({ attempt: 1, delayMs: initialMs });

export type AfterFailedInsert = { readonly action: 'throw' } | { readonly action: 'give-up' } | { readonly action: 'retry'; readonly waitMs: number; readonly next: InsertAttempt };

export function afterFailedInsert(attempt: InsertAttempt, error: unknown, stopping: boolean, maxMs: number): AfterFailedInsert {
  if (!(error instanceof ClickHouseError)) return { action: 'throw' };
  if (stopping) return { action: 'give-up' };
  return { action: 'retry', waitMs: attempt.delayMs, next: { attempt: attempt.attempt + 1, delayMs: Math.min(maxMs, attempt.delayMs * 2) } };
}

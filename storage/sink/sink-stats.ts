// The sink's counters (SinkHandle.stats), and how inserts move them.
import type { TableName } from './rows.js';

export interface SinkStats {
  /** Events received (including ones dead-lettered). */
  events: number;
  /** Events fully stored and acked. */
  stored: number;
  /** Payloads that could not be decoded, sent to the dead-letter topic. */
  deadLettered: number;
  inserts: number;
  failedInserts: number;
  rows: { [T in TableName]?: number };
  lastError: string | null;
}

export const newSinkStats = (): SinkStats => ({ events: 0, stored: 0, deadLettered: 0, inserts: 0, failedInserts: 0, rows: {}, lastError: null });

/** A confirmed insert of `rows` rows into `table`. */
export function countInsert(stats: SinkStats, table: TableName, rows: number): void {
  stats.inserts++;
  stats.rows[table] = (stats.rows[table] ?? 0) + rows;
}

/** A failed insert attempt (it is retried). */
export function countFailedInsert(stats: SinkStats, error: Error): void {
  stats.failedInserts++;
  stats.lastError = error.message;
}

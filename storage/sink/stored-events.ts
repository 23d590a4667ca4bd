// When an event counts as stored, so that its offset may be committed: once every row it became has been
// confirmed inserted. Most events are one row; an event of several rows (a trajectory and its metrics, a
// sample and its tokens) may have them in batches of different tables, inserted in any order, and is
// acknowledged with the last of them. Pure bookkeeping: the sink (sink.ts) acks what these functions name.
import type { Envelope } from '../../streams/index.js';
import type { SinkRow } from './inserter.js';
import type { TableName, TableRow } from './rows.js';
import { TranscodedStep } from './step-transcoder.js';

type EventEnvelope = Envelope<Buffer | null>;

/** An event that became several rows: stored when the last of them is. */
export interface PendingEvent {
  remaining: number;
  readonly envelope: EventEnvelope;
}

/** A row to store in `table` (the batcher's lane); `shared` when its event became several rows. */
export interface RowItem {
  readonly table: TableName;
  readonly row: SinkRow;
  readonly envelope: EventEnvelope;
  readonly shared: PendingEvent | null;
}

/** A transcoded step (nearly every row) is its own item: one event, one row, acknowledged through its source. */
export type SinkItem = RowItem | TranscodedStep<EventEnvelope>;

/** The items of one event's rows; they share one count when there are several. */
export function rowItems(rows: readonly TableRow[], envelope: EventEnvelope): RowItem[] {
  const shared: PendingEvent | null = rows.length === 1 ? null : { remaining: rows.length, envelope };
  return rows.map(({ table, row }) => ({ table, row, envelope, shared }));
}

/**
 * Calls `stored` for every event an insert of `items` completed: an item's own event, or a shared event
 * whose last row this was (the count goes down here, so call it once per confirmed insert). Returns how
 * many events that was.
 */
export function eventsStored(items: readonly SinkItem[], stored: (envelope: EventEnvelope) => void): number {
  let count = 0;
  for (const item of items) {
    if (item instanceof TranscodedStep) {
      stored(item.source);
      count++;
    } else if (item.shared === null || --item.shared.remaining === 0) {
      stored(item.envelope);
      count++;
    }
  }
  return count;
}

/** What an insert sends for the items: the rows, transcoded steps as they are. */
export function rowsOf(items: readonly SinkItem[]): SinkRow[] {
  return items.map((item) => (item instanceof TranscodedStep ? item : item.row));
}

// When an event counts as stored, so that its offset may be committed: once every row it became has been
// confirmed inserted. Most events are one row; an event of several rows (a trajectory and its metrics, a
// sample and its tokens) may have them in batches of different tables, inserted in any order, and is
// acknowledged with the last of them. Pure bookkeeping: the sink (sink.ts) acks what these functions name.
import type { Envelope } from '../../streams/index.js';
import type { SinkRow } from './inserter.js';
import { TranscodedStep } from './step-transcoder.js';

type EventEnvelope = Envelope<Buffer | null>;

/** An event that became several rows: stored when the last of them is. */
export interface PendingEvent {
  remaining: number;
  readonly envelope: EventEnvelope;
}

/** A row to store (its table is the batcher's lane); `shared` when its event became several rows. */
export interface RowItem {
  readonly row: SinkRow;
  readonly envelope: EventEnvelope;
  readonly shared: PendingEvent | null;
}

/** A transcoded step (nearly every row) is its own item: one event, one row, acknowledged through its source. */
export type SinkItem = RowItem | TranscodedStep<EventEnvelope>;

/** The count an event's rows share until the last of them is stored; null for an event of one row. */
export function pendingEvent(rows: number, envelope: EventEnvelope): PendingEvent | null {
  return rows === 1 ? null : { remaining: rows, envelope };
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

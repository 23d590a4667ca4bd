// The exactly-once copy's bookkeeping (pure): per input partition the steps delivered but not yet written, at most
// one transaction in flight, and what arrived meanwhile written by the next one, until every step is written.

/** A partition's values waiting for its next transaction, in delivery order, and the offset of the newest. */
export interface PendingValues<V> {
  readonly chunks: readonly (readonly V[])[];
  readonly lastOffset: string;
}

export interface CopyState<V> {
  readonly pending: ReadonlyMap<number, PendingValues<V>>;
  readonly inFlight: ReadonlySet<number>;
  /** Values whose transaction committed. */
  readonly written: number;
}

/** A transaction to start: the partition's pending values and the offset to commit after the newest. */
export interface CopyWrite<V> {
  readonly partition: number;
  readonly values: V[];
  readonly lastOffset: string;
}

export function emptyCopy<V>(): CopyState<V> {
  return { pending: new Map(), inFlight: new Set(), written: 0 };
}

interface Step<V> {
  readonly state: CopyState<V>;
  readonly write: CopyWrite<V> | null;
}

/** The partition's pending values as a write, unless it has a transaction in flight or nothing pending. */
function nextWrite<V>(state: CopyState<V>, partition: number): Step<V> {
  const queued = state.pending.get(partition);
  if (state.inFlight.has(partition) || queued === undefined) return { state, write: null };
  const pending = new Map(state.pending);
  pending.delete(partition);
  const inFlight = new Set(state.inFlight).add(partition);
  return { state: { ...state, pending, inFlight }, write: { partition, values: queued.chunks.flat() as V[], lastOffset: queued.lastOffset } };
}

/** A batch delivered from `partition`: queued, and written at once when the partition has no transaction in flight. */
export function batchDelivered<V>(state: CopyState<V>, partition: number, values: readonly V[], lastOffset: string): Step<V> {
  if (values.length === 0) return { state, write: null };
  const queued = state.pending.get(partition);
  const pending = new Map(state.pending).set(partition, { chunks: [...(queued?.chunks ?? []), values], lastOffset });
  return nextWrite({ ...state, pending }, partition);
}

/** A partition's transaction of `count` values committed: finished once `stepCount` are written, else what queued meanwhile is written next. */
export function writeCommitted<V>(state: CopyState<V>, partition: number, count: number, stepCount: number): Step<V> & { readonly finished: boolean } {
  const inFlight = new Set(state.inFlight);
  inFlight.delete(partition);
  const committed = { ...state, inFlight, written: state.written + count };
  if (committed.written >= stepCount) return { state: committed, write: null, finished: true };
  return { ...nextWrite(committed, partition), finished: false };
}

/** The output messages of a write: every `perMessage` consecutive values concatenated into one. */
export function copyMessages(values: readonly Buffer[], perMessage: number): { key: null; value: Buffer }[] {
  const messages: { key: null; value: Buffer }[] = [];
  for (let i = 0; i < values.length; i += perMessage) messages.push({ key: null, value: Buffer.concat(values.slice(i, i + perMessage)) });
  return messages;
}

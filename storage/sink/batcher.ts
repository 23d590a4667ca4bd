// Per-table batching for the sink: a table's rows are cut into a batch when `maxRows` are buffered, or
// `maxDelayMs` after the first of them arrived, whichever comes first; each table has at most `concurrency`
// batches being flushed (inserted) at a time, and the next ones wait their turn in order. While a batch is
// in flight the sink keeps consuming and filling the next one, so decoding overlaps the insert.
export interface BatcherOptions<K, T> {
  readonly maxRows: number;
  readonly maxDelayMs: number;
  readonly concurrency: number;
  /** Stores one batch; a rejection is a bug (failures to retry are handled inside) and goes to onError. */
  readonly flush: (key: K, batch: T[]) => Promise<void>;
  readonly onError: (error: unknown) => void;
}

interface Lane<T> {
  buffer: T[];
  timer: NodeJS.Timeout | null;
  readonly waiting: T[][];
  running: number;
}

export class Batcher<K, T> {
  private readonly lanes = new Map<K, Lane<T>>();
  private readonly running = new Set<Promise<void>>();
  private ended = false;

  constructor(private readonly options: BatcherOptions<K, T>) {
    if (!(options.maxRows >= 1)) throw new RangeError(`maxRows must be ≥ 1, got ${options.maxRows}`);
    if (!(options.maxDelayMs > 0)) throw new RangeError(`maxDelayMs must be > 0, got ${options.maxDelayMs}`);
    if (!(options.concurrency >= 1)) throw new RangeError(`concurrency must be ≥ 1, got ${options.concurrency}`);
  }

  add(key: K, item: T): void {
    if (this.ended) return; // after end() nothing more is stored: not acked, it comes again
    let lane = this.lanes.get(key);
    if (!lane) {
      lane = { buffer: [], timer: null, waiting: [], running: 0 };
      this.lanes.set(key, lane);
    }
    lane.buffer.push(item);
    if (lane.buffer.length >= this.options.maxRows) this.cut(key, lane);
    else lane.timer ??= setTimeout(() => this.cut(key, lane), this.options.maxDelayMs);
  }

  /** Flushes what is buffered and resolves once every batch has settled; later adds are dropped. */
  async end(): Promise<void> {
    this.ended = true;
    for (const [key, lane] of this.lanes) this.cut(key, lane);
    while (this.running.size > 0) await Promise.allSettled([...this.running]);
  }

  private cut(key: K, lane: Lane<T>): void {
    if (lane.timer) clearTimeout(lane.timer);
    lane.timer = null;
    if (lane.buffer.length === 0) return;
    lane.waiting.push(lane.buffer);
    lane.buffer = [];
    this.pump(key, lane);
  }

  private pump(key: K, lane: Lane<T>): void {
    while (lane.running < this.options.concurrency && lane.waiting.length > 0) {
      const batch = lane.waiting.shift()!;
      lane.running++;
      const flushed: Promise<void> = this.options
        .flush(key, batch)
        .catch(this.options.onError)
        .finally(() => {
          lane.running--;
          this.running.delete(flushed);
          this.pump(key, lane);
        });
      this.running.add(flushed);
    }
  }
}

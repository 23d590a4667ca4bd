// How far the gateway has read each partition of the steps topic, and who waits for it to reach given offsets
// (a partition's high watermark when a call arrived): a waiter is released once every partition's next offset
// to read is at or past its target. No Kafka here: episode-log.ts reports what it read and asks to wait.
export type Offsets = ReadonlyMap<number, bigint>;

interface Waiter {
  readonly targets: Offsets;
  readonly resolve: () => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
}

export class ReadBarrier {
  private readonly next = new Map<number, bigint>();
  private readonly waiters = new Set<Waiter>();
  private failure: Error | null = null;

  /** Starts each partition at its first offset to read. */
  constructor(start: Offsets) {
    for (const [partition, offset] of start) this.next.set(partition, offset);
  }

  /** The message at `offset` of `partition` has been read (or skipped). */
  read(partition: number, offset: bigint): void {
    if (offset + 1n > (this.next.get(partition) ?? 0n)) this.next.set(partition, offset + 1n);
    for (const waiter of this.waiters) if (this.reached(waiter.targets)) this.settle(waiter, null);
  }

  /** True when every partition has been read up to its target (exclusive). */
  reached(targets: Offsets): boolean {
    for (const [partition, target] of targets) if ((this.next.get(partition) ?? 0n) < target) return false;
    return true;
  }

  /** Resolves once `targets` are reached; rejects after `timeoutMs`, or when the reading failed. */
  wait(targets: Offsets, timeoutMs: number): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.reached(targets)) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => this.settle(waiter, new Error(`the steps topic was not read up to the calls' arrival within ${timeoutMs} ms`)), timeoutMs);
      const waiter: Waiter = { targets, resolve, reject, timer };
      this.waiters.add(waiter);
    });
  }

  /** The reading stopped: every waiter, and every later one, gets `error`. */
  fail(error: Error): void {
    this.failure = error;
    for (const waiter of this.waiters) this.settle(waiter, error);
  }

  private settle(waiter: Waiter, error: Error | null): void {
    if (!this.waiters.delete(waiter)) return;
    clearTimeout(waiter.timer);
    if (error) waiter.reject(error);
    else waiter.resolve();
  }
}

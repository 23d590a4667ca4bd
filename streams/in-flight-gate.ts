// A counting gate that bounds how many delivered messages may be waiting for downstream, and optionally
// how many payload bytes they hold (a count alone bounds memory only as well as the largest message: a
// backlog of trajectory events, each carrying its steps, weighs 10–50× one of steps).
// The consumer awaits `whenOpen()` before handing over the next message, so a slow subscriber stops
// the fetch loop instead of growing a buffer (RxJS has no demand signal; this is ours).

export class InFlightGate {
  private waiters: Array<() => void> = [];

  constructor(
    readonly limit: number,
    private readonly count: () => number,
    /** Payload bytes in flight at most (a message is let through while fewer are held, so one larger than this still passes alone). */
    readonly byteLimit = Infinity,
    private readonly bytes: () => number = () => 0,
  ) {
    if (!Number.isInteger(limit) || limit < 1) {
      throw new RangeError(`maxInFlight must be a positive integer, got ${limit}`);
    }
    if (!(byteLimit >= 1)) throw new RangeError(`maxInFlightBytes must be ≥ 1, got ${byteLimit}`);
  }

  get open(): boolean {
    return this.count() < this.limit && this.bytes() < this.byteLimit;
  }

  /**
   * Resolves when fewer than `limit` messages are in flight, or when `cancelled()` turns true.
   * `tick` runs every `tickMs` while waiting (the consumer sends heartbeats from it).
   */
  async whenOpen(options: { tick?: () => Promise<void>; tickMs?: number; cancelled?: () => boolean } = {}): Promise<void> {
    const { tick, tickMs = 1000, cancelled = () => false } = options;
    while (!this.open && !cancelled()) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        timer = setTimeout(resolve, tickMs);
      });
      clearTimeout(timer);
      if (!this.open && tick) await tick();
    }
  }

  /** Call after an ack or a reset: wakes the waiters to re-check. */
  changed(): void {
    if (this.waiters.length === 0) return; // the common case: called at every ack, with nobody waiting
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }
}

// One serial lane of writes per input partition. The processors' output of partition p is written by p's
// transactional producer, one transaction at a time; the lanes of different partitions do not wait for
// each other, so a slow transaction on one partition (p99 of 300–500 ms on a loaded 2-core machine, against
// p50 20–30 ms) holds back only its own partition's output, not every partition's as one flush of all
// partitions did. What is submitted to a busy lane waits and goes into its next transaction together
// (natural batching per partition).
//
// An exclusive write (output whose steps span partitions, written in one transaction with all their
// offsets) runs alone: after every lane has finished what was submitted before it, and before anything
// submitted after it. The caller submits nothing while one is pending (see `exclusive`).
export class PartitionLanes<B> {
  private readonly queues = new Map<number, B[]>();
  /** Lanes with a write loop going (it leaves when it finds its queue empty). */
  private readonly running = new Set<number>();
  private exclusiveRun: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;
  private idleWaiters: Array<() => void> = [];

  constructor(
    /** Writes the batches a lane had queued (at least one), in submission order, as one unit of work. */
    private readonly write: (partition: number, batches: B[]) => Promise<void>,
    /** The first failed write (nothing is written after it: the pipeline restarts from committed offsets). */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** True while an exclusive write waits or runs: submit nothing then. */
  get exclusive(): boolean {
    return this.exclusiveRun !== null;
  }

  get failed(): unknown {
    return this.failure?.error;
  }

  submit(partition: number, batch: B): void {
    if (this.exclusiveRun) throw new Error('PartitionLanes.submit during an exclusive write');
    if (this.failure) return;
    const queue = this.queues.get(partition);
    if (queue) queue.push(batch);
    else this.queues.set(partition, [batch]);
    if (!this.running.has(partition)) this.start(partition);
  }

  /** Runs `write` once every lane is idle; lanes start nothing meanwhile (the caller submits nothing). */
  runExclusive(write: () => Promise<void>): Promise<void> {
    if (this.exclusiveRun) throw new Error('PartitionLanes.runExclusive during an exclusive write');
    const run = (async () => {
      await this.lanesIdle();
      if (this.failure) return;
      try {
        await write();
      } catch (error) {
        this.fail(error);
      }
    })().finally(() => {
      this.exclusiveRun = null;
      this.notifyIdle();
    });
    this.exclusiveRun = run;
    return run;
  }

  /** Resolves when no lane has anything queued or running and no exclusive write is pending. */
  async idle(): Promise<void> {
    while (this.running.size > 0 || this.exclusiveRun) {
      if (this.exclusiveRun) await this.exclusiveRun;
      else await this.lanesIdle();
    }
  }

  private lanesIdle(): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private notifyIdle(): void {
    if (this.running.size > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private start(partition: number): void {
    // Deferred by a microtask, so batches submitted in the same synchronous run share the first write. The
    // lane leaves `running` in the same synchronous step that finds its queue empty: a submit can never
    // see it running after it has stopped looking at its queue.
    const run = async (): Promise<void> => {
      for (;;) {
        const batches = this.queues.get(partition);
        this.queues.delete(partition);
        if (!batches || batches.length === 0 || this.failure) {
          this.running.delete(partition);
          this.notifyIdle();
          return;
        }
        try {
          await this.write(partition, batches);
        } catch (error) {
          this.fail(error);
        }
      }
    };
    this.running.add(partition);
    void Promise.resolve().then(run);
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    this.queues.clear();
    this.onError(error);
  }
}

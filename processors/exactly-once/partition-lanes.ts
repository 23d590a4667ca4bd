// One serial lane of writes per input partition. The processors' output of partition p is written by p's
// transactional producer, one transaction at a time; the lanes of different partitions do not wait for
// each other, so a slow transaction on one partition (on a loaded machine the slowest take many times the
// median: docs/results/processors.md) holds back only its own partition's output, not every partition's as
// one flush of all partitions did. What is submitted to a busy lane waits and goes into its next transaction
// together (natural batching per partition).
//
// Each lane is a promise chain (`tail`): a submit to a lane with no write scheduled appends one write of
// whatever the lane has queued when that write starts. So `settled()` can wait on a snapshot of the tails —
// the work submitted before it was called, at most one transaction more — and never on work that keeps
// coming. (An earlier version waited until no lane was running, which under steady input on several
// partitions may never happen: a rebalance's onAssignment waited on it and the processors stalled.)
//
// An exclusive write (output whose steps span partitions, written in one transaction with all their
// offsets) runs alone: after every lane has finished what was submitted before it, and before anything
// submitted after it. The caller submits nothing while one is pending (see `exclusive`).
interface Lane<B> {
  queue: B[];
  /** A write is chained on `tail` and has not taken the queue yet: a submit joins it. */
  scheduled: boolean;
  /** The lane's last scheduled write; never rejects (failures go to onError). */
  tail: Promise<void>;
}

export class PartitionLanes<B> {
  private readonly lanes = new Map<number, Lane<B>>();
  private exclusiveRun: Promise<void> | null = null;
  private failure: { error: unknown } | null = null;

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
    let lane = this.lanes.get(partition);
    if (!lane) this.lanes.set(partition, (lane = { queue: [], scheduled: false, tail: Promise.resolve() }));
    lane.queue.push(batch);
    if (lane.scheduled) return;
    // Chained by a promise reaction, so batches submitted in the same synchronous run share the write.
    lane.scheduled = true;
    const current = lane;
    lane.tail = lane.tail.then(() => this.drain(partition, current));
  }

  /** Runs `write` once every lane has written what was submitted before; lanes start nothing meanwhile. */
  runExclusive(write: () => Promise<void>): Promise<void> {
    if (this.exclusiveRun) throw new Error('PartitionLanes.runExclusive during an exclusive write');
    const before = this.tails();
    const run = (async () => {
      await before;
      if (this.failure) return;
      try {
        await write();
      } catch (error) {
        this.fail(error);
      }
    })().finally(() => {
      this.exclusiveRun = null;
    });
    this.exclusiveRun = run;
    return run;
  }

  /** Resolves when everything submitted (or run exclusively) before this call is written or failed. */
  settled(): Promise<void> {
    const exclusive = this.exclusiveRun;
    return Promise.all([this.tails(), exclusive]).then(() => undefined);
  }

  /**
   * Resolves when nothing is queued, running or pending, including what is submitted meanwhile (a write
   * dispatched after an exclusive one). For shutdown, when no new input arrives; use settled() otherwise.
   */
  async idle(): Promise<void> {
    while (this.exclusiveRun || [...this.lanes.values()].some((lane) => lane.scheduled)) await this.settled();
    await this.settled();
  }

  private tails(): Promise<void> {
    return Promise.all([...this.lanes.values()].map((lane) => lane.tail)).then(() => undefined);
  }

  private async drain(partition: number, lane: Lane<B>): Promise<void> {
    lane.scheduled = false;
    const batches = lane.queue;
    lane.queue = [];
    if (batches.length === 0 || this.failure) return;
    try {
      await this.write(partition, batches);
    } catch (error) {
      this.fail(error);
    }
  }

  private fail(error: unknown): void {
    if (this.failure) return;
    this.failure = { error };
    for (const lane of this.lanes.values()) lane.queue = [];
    this.onError(error);
  }
}

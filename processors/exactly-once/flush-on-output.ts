// When the processors hand their output on: as soon as it is queued, deferred by one macrotask
// (setImmediate) so that the writes of one batch, queued synchronously, travel together. Kicks while a
// run is going coalesce into one more run. The processors' run is a dispatch to the per-partition lanes
// (partition-lanes.ts), which write at once when idle and otherwise put what came meanwhile into their
// next transaction (natural batching, no fixed interval to wait out).
export interface FlushOnOutput {
  /** Output was queued: write it soon. */
  kick(): void;
  /** No more writes are started (one in flight finishes). */
  stop(): void;
}

export function flushOnOutput(flush: () => Promise<void>, onError: (error: unknown) => void): FlushOnOutput {
  let running = false;
  let again = false;
  let stopped = false;
  const run = async () => {
    try {
      do {
        again = false;
        await flush();
      } while (again && !stopped);
    } catch (error) {
      stopped = true;
      onError(error);
    } finally {
      running = false;
    }
  };
  return {
    kick() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      running = true;
      setImmediate(() => void run());
    },
    stop() {
      stopped = true;
    },
  };
}

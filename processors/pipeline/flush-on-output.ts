// When the processors write: as soon as output is queued and no transaction is in flight. What is queued
// while one is in flight goes into the next, so an idle pipeline writes each batch at once (latency of
// one transaction) and a busy one writes back to back with larger transactions (natural batching, no
// fixed interval to wait out). The writes of one batch are queued synchronously, so deferring the start
// by one macrotask (setImmediate) puts them in one transaction.
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

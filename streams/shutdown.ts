// Graceful shutdown on SIGINT/SIGTERM: every registered closer (consumers first, so their last
// commits go out, then producers, so queued events are flushed) runs once; a second signal exits.
export interface Closeable {
  close(): Promise<void>;
}

export function shutdownOnSignals(closeables: readonly Closeable[], options: { exit?: boolean } = {}): () => void {
  const { exit = true } = options;
  let shuttingDown = false;
  const handler = (signal: NodeJS.Signals) => {
    if (shuttingDown) {
      console.error(`trajflow: ${signal} again, exiting without waiting`);
      process.exit(130);
    }
    shuttingDown = true;
    console.error(`trajflow: ${signal} received, closing (commit offsets, flush producers)…`);
    void (async () => {
      for (const closeable of closeables) {
        await closeable.close().catch((error) => console.error('trajflow: error while closing:', error));
      }
      if (exit) process.exit(0);
    })();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return () => {
    process.off('SIGINT', handler);
    process.off('SIGTERM', handler);
  };
}

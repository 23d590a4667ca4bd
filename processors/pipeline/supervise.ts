// Keeps the processors running through failures they can recover from by themselves: a transaction that
// fails (the broker went away, its group coordinator moved) aborts, and everything not committed is
// simply processed again — so a fresh pipeline on the same backbone, resuming from the committed offsets
// and episode marks, is the whole recovery. Its new transactional producer, with the same id, fences the
// failed one. Other errors, and more than `maxRestarts` failures close together, end the process as before.
import { TransactionFailedError } from '../exactly-once/transactional-emitter.js';

export interface Restartable {
  readonly done: Promise<void>;
  close(): Promise<void>;
}

export interface SuperviseOptions<T extends Restartable = Restartable> {
  /** Failures allowed within `windowMs` of each other before giving up (default 10). */
  readonly maxRestarts?: number;
  /** A run this long without failure starts the count again (default 5 minutes). */
  readonly windowMs?: number;
  /** Wait before restart n (from 1): min(maxBackoffMs, baseBackoffMs · 2^(n−1)). Defaults 1 s and 15 s. */
  readonly baseBackoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly log?: (line: string) => void;
  /** The currently running pipeline, for shutdown handlers. */
  readonly onStart?: (current: T) => void;
  /** Checked after a failure: true when the process is shutting down (no restart). */
  readonly stopping?: () => boolean;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Runs `start()` until a pipeline completes; restarts it after recoverable failures. Resolves with the restart count. */
export async function superviseProcessors<T extends Restartable>(start: () => Promise<T>, options: SuperviseOptions<T> = {}): Promise<number> {
  const {
    maxRestarts = 10,
    windowMs = 300_000,
    baseBackoffMs = 1000,
    maxBackoffMs = 15_000,
    log = () => undefined,
    stopping = () => false,
    now = () => Date.now(),
    sleep = (ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
  } = options;
  let restarts = 0;
  let recent = 0;
  let lastFailure = Number.NEGATIVE_INFINITY;
  for (;;) {
    const current = await start();
    options.onStart?.(current);
    try {
      await current.done;
      return restarts;
    } catch (error) {
      await current.close().catch(() => undefined);
      if (!(error instanceof TransactionFailedError) || stopping()) throw error;
      const at = now();
      recent = at - lastFailure > windowMs ? 1 : recent + 1;
      lastFailure = at;
      if (recent > maxRestarts) throw error;
      restarts++;
      const wait = Math.min(maxBackoffMs, baseBackoffMs * 2 ** (recent - 1));
      log(
        `processors: ${error.message.replace(/; restart the processors[^(]*/, ' ')}— resuming in this process from the committed offsets in ${(wait / 1000).toFixed(1)} s (failure ${recent} of at most ${maxRestarts})`,
      );
      await sleep(wait);
      if (stopping()) return restarts;
    }
  }
}

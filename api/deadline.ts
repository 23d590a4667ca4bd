// A bound on how long a request waits for a service: the API answers 503 after the deadline instead of
// holding the client (and a socket) while kafkajs retries a broker that is gone. The work itself is not
// cancelled — an event queued in the producer may still be written later, which is why the 503 says a
// retry is safe (consumers drop duplicate eventIds).
import { TrajflowError } from '../core/errors.js';

export class DeadlineError extends TrajflowError {
  constructor(what: string, ms: number) {
    super('DEADLINE', `${what} did not finish within ${ms} ms`, { retriable: true });
  }
}

export async function withDeadline<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(what, ms)), ms);
  });
  try {
    return await Promise.race([work, expired]);
  } finally {
    clearTimeout(timer);
  }
}

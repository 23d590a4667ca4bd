// A lock file so two `trajflow up` runs (or two test files) do not start the same service twice.
// The holder's pid is written inside; a lock left by a dead process is taken over.
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { ServiceError } from '../core/errors.js';
import { isAlive, sleep } from './process.js';

function tryAcquire(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return false;
  }
}

function holder(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

export async function withLock<T>(path: string, timeoutMs: number, body: () => Promise<T>): Promise<T> {
  mkdirSync(dirname(path), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  let emptySince: number | undefined;
  while (!tryAcquire(path)) {
    const pid = holder(path);
    // Held by this very process (two start calls in parallel): wait like anyone else.
    if (pid !== undefined && !isAlive(pid)) {
      rmSync(path, { force: true }); // left behind by a crashed run
      continue;
    }
    if (pid === undefined) {
      // Between another process' create and write the file is empty; only an old empty file is stale.
      emptySince ??= Date.now();
      if (Date.now() - emptySince > 2000) rmSync(path, { force: true });
    }
    if (Date.now() > deadline) {
      throw new ServiceError(
        `another trajflow process (pid ${pid ?? '?'}) holds ${path} for more than ${Math.round(timeoutMs / 1000)} s: wait for it, or delete the file if that process is gone.`,
        { retriable: true },
      );
    }
    await sleep(200);
  }
  try {
    return await body();
  } finally {
    rmSync(path, { force: true });
  }
}

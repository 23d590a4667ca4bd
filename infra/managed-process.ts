// The rules every service trajflow runs itself follows, in one place: under a lock, reuse a live process
// from the pid file that answers its probe; replace one that is dead or does not answer (stale); refuse,
// naming the setting to change, when another program holds the ports; stop with SIGTERM then SIGKILL.
import { existsSync } from 'node:fs';
import { ServiceError } from '../core/errors.js';
import { withLock } from './lock.js';
import { describeTakenPorts, isAlive, livePid, removeFile, stopProcessGroup, waitUntil } from './process.js';

export interface ManagedProcess {
  /** Service name for messages ("Kafka", "ClickHouse"). */
  readonly name: string;
  readonly pidFile: string;
  readonly lockFile: string;
  /** A string the process's command line must contain, so a reused pid of another program is not taken for ours. */
  readonly marker: string;
  readonly ports: readonly { port: number; setting: string }[];
  /** What to say when the ports are taken: how to point trajflow at a service the user already runs. */
  readonly externalHint: string;
  readonly startTimeoutMs: number;
  readonly stopGraceMs: number;
  /** Does the service answer? */
  probe(): Promise<boolean>;
  /** How long a live process may take to answer before it counts as stale. */
  readonly staleAfterMs: number;
  /** Starts a new process, waits until it answers, writes the pid file; returns the pid. */
  launch(): Promise<number>;
}

export async function ensureProcess(service: ManagedProcess, log: (line: string) => void): Promise<{ pid: number; reused: boolean }> {
  return withLock(service.lockFile, service.startTimeoutMs + service.stopGraceMs + 60_000, async () => {
    const pid = livePid(service.pidFile, service.marker);
    if (pid !== undefined) {
      const answered = await waitUntil(service.probe, {
        timeoutMs: service.staleAfterMs,
        intervalMs: 250,
        giveUp: () => (isAlive(pid) ? undefined : 'exited'),
      });
      if (answered === 'ok') return { pid, reused: true };
      log(`${service.name.toLowerCase()}: pid ${pid} from ${service.pidFile} does not answer; restarting it`);
      await stopProcessGroup(pid, service.stopGraceMs);
    }
    removeFile(service.pidFile);
    const taken = await describeTakenPorts(service.ports);
    if (taken) throw new ServiceError(`cannot start ${service.name}: ${taken} (${service.externalHint})`);
    return { pid: await service.launch(), reused: false };
  });
}

/** Stops the process trajflow started (SIGTERM, then SIGKILL after the grace time). Resolves false if none ran. */
export async function stopProcess(service: Pick<ManagedProcess, 'pidFile' | 'lockFile' | 'marker' | 'stopGraceMs'>): Promise<boolean> {
  return withLock(service.lockFile, service.stopGraceMs + 60_000, async () => {
    const pid = livePid(service.pidFile, service.marker);
    if (pid !== undefined) await stopProcessGroup(pid, service.stopGraceMs);
    if (existsSync(service.pidFile)) removeFile(service.pidFile);
    return pid !== undefined;
  });
}

// Helpers for the services trajflow starts as detached processes: pid files, liveness, stopping,
// polling until a probe answers, and the tail of a log for error messages.
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, readdirSync, mkdirSync, openSync, readFileSync, readSync, fstatSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';

/** True when a process with this pid exists and is not a zombie waiting to be reaped. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat is "pid (comm) S ..."; comm may contain spaces, so read the state after the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') return true;
    // A killed multi-threaded process (the JVM) shows its main thread as a zombie while other threads still
    // exit and still hold its sockets: it is gone only when no other thread is left.
    return readdirSync(`/proc/${pid}/task`).length > 1;
  } catch {
    return !existsSync('/proc/self'); // no /proc (not Linux): trust kill(0); gone meanwhile: dead
  }
}

/** The command line of a live process, or '' when it cannot be read. Guards against reused pids. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
  } catch {
    return '';
  }
}

export function readPidFile(path: string): number | undefined {
  if (!existsSync(path)) return undefined;
  const pid = Number(readFileSync(path, 'utf8').trim());
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

export function writePidFile(path: string, pid: number): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${pid}\n`);
}

export function removeFile(path: string): void {
  rmSync(path, { force: true });
}

/**
 * The pid recorded in `pidFile` if that process is alive and its command line contains `marker`
 * (so a pid reused by an unrelated process after a reboot is not mistaken for our service).
 */
export function livePid(pidFile: string, marker: string): number | undefined {
  const pid = readPidFile(pidFile);
  if (pid === undefined || !isAlive(pid)) return undefined;
  const cmd = commandLine(pid);
  return cmd === '' || cmd.includes(marker) ? pid : undefined;
}

export interface DetachedOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  /** stdout and stderr are appended here, so crashes before the service's own logging starts are visible. */
  readonly outputFile: string;
  readonly env?: NodeJS.ProcessEnv;
}

/** Starts a process in its own process group that outlives the caller; returns its pid. */
export function spawnDetached(options: DetachedOptions): number {
  mkdirSync(dirname(options.outputFile), { recursive: true });
  const out = openSync(options.outputFile, 'a');
  try {
    const child = spawn(options.command, [...options.args], {
      cwd: options.cwd,
      env: options.env ?? process.env,
      detached: true,
      stdio: ['ignore', out, out],
    });
    if (child.pid === undefined) throw new Error(`could not start ${options.command}`);
    child.on('error', () => undefined); // reported through liveness checks instead
    child.unref();
    return child.pid;
  } finally {
    closeSync(out);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Sends SIGTERM to the process group led by `pid`, waits up to `graceMs`, then SIGKILLs it.
 * Resolves true if it had to kill.
 */
export async function stopProcessGroup(pid: number, graceMs: number): Promise<boolean> {
  const signal = (sig: NodeJS.Signals): void => {
    try {
      process.kill(-pid, sig);
    } catch {
      try {
        process.kill(pid, sig); // not a group leader (started by something else)
      } catch {
        /* already gone */
      }
    }
  };
  if (!isAlive(pid)) return false;
  signal('SIGTERM');
  signal('SIGCONT'); // a stopped (SIGSTOP, ^Z) process only acts on SIGTERM once it runs again
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return false;
    await sleep(100);
  }
  signal('SIGKILL');
  const killDeadline = Date.now() + 5000;
  while (isAlive(pid) && Date.now() < killDeadline) await sleep(50);
  return true;
}

export interface WaitOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Checked between probes: return a reason to give up early (e.g. the process died). */
  readonly giveUp?: () => string | undefined;
}

/** Polls `probe` until it resolves true; resolves to 'ok', 'timeout' or the giveUp reason. */
export async function waitUntil(probe: () => Promise<boolean>, options: WaitOptions): Promise<'ok' | 'timeout' | string> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 250;
  for (;;) {
    if (await probe().catch(() => false)) return 'ok';
    const reason = options.giveUp?.();
    if (reason !== undefined) return reason;
    if (Date.now() >= deadline) return 'timeout';
    await sleep(interval);
  }
}

/** The last `lines` lines of a text file (reads at most the last 64 KiB), or a note that it is missing. */
export function tail(path: string, lines = 30): string {
  if (!existsSync(path)) return `(no ${path})`;
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const length = Math.min(size, 64 * 1024);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer
      .toString('utf8')
      .split('\n')
      .filter((l) => l.trim() !== '')
      .slice(-lines)
      .join('\n');
  } finally {
    closeSync(fd);
  }
}

/** True when something accepts TCP connections on host:port. */
export function isListening(port: number, host = '127.0.0.1', timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host });
    const done = (result: boolean): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Best effort: which process listens on a TCP port (from `ss`), for error messages. */
export function portOwner(port: number): string | undefined {
  const result = spawnSync('ss', ['-ltnpH', `sport = :${port}`], { encoding: 'utf8' });
  if (result.status !== 0) return undefined;
  const users = /users:\(\((.*?)\)\)/.exec(result.stdout);
  return users?.[1];
}

/** A message naming the port's owner when a port we need is taken by something that is not our service. */
export async function describeTakenPorts(ports: readonly { port: number; setting: string }[]): Promise<string | undefined> {
  for (const { port, setting } of ports) {
    if (await isListening(port)) {
      const owner = portOwner(port);
      return `port ${port} is already in use${owner ? ` by ${owner}` : ''}, and not by the process in trajflow's pid file: stop that process or set ${setting} to a free port.`;
    }
  }
  return undefined;
}

export interface RunResult {
  readonly status: number | null;
  /** stdout and stderr interleaved as they arrived. */
  readonly output: string;
  /** Set when the command could not be started at all (e.g. ENOENT). */
  readonly error?: NodeJS.ErrnoException;
}

/**
 * Runs a command to completion without blocking the event loop (so Kafka's jar fetch and ClickHouse's start
 * really run in parallel). Never rejects: callers read `status` and `error`.
 */
export function run(command: string, args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const child = spawn(command, [...args], { cwd: options.cwd, env: options.env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const timer = options.timeoutMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({ status: null, output: Buffer.concat(chunks).toString('utf8'), error });
    });
    child.once('close', (status) => {
      clearTimeout(timer);
      resolve({ status, output: Buffer.concat(chunks).toString('utf8') });
    });
  });
}

// Installs Debian packages the Python example needs, when they are missing: `apt-get install -y`, and
// when that fails (a stale or empty package list), `apt-get update` and the install once more.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface CommandResult {
  readonly code: number | null;
  readonly output: string;
}

export function run(command: string, args: readonly string[], options: { timeoutMs: number; env?: NodeJS.ProcessEnv; cwd?: string }): Promise<CommandResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env, cwd: options.cwd });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${command}: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== null) reject(new Error(`${command} ${args.join(' ')} was killed by ${signal} after ${options.timeoutMs} ms\n${output}`));
      else resolve({ code, output });
    });
  });
}

/** Null when apt-get can be used here, else why not (the only reason to skip the test). */
export function aptUnavailable(): string | null {
  if (!existsSync('/usr/bin/apt-get')) return 'apt-get is not available (not a Debian-family system)';
  if (typeof process.getuid === 'function' && process.getuid() !== 0) return 'apt-get needs root, and the tests are not running as root';
  return null;
}

/** Makes sure `python` can import every module; installs the packages otherwise. */
export async function ensureDebianPackages(python: string, modules: readonly string[], packages: readonly string[], timeoutMs: number): Promise<void> {
  const importAll = async () => (await run(python, ['-c', modules.map((m) => `import ${m}`).join('; ')], { timeoutMs: 30_000 })).code === 0;
  if (existsSync(python) && (await importAll())) return;
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => run('apt-get', ['install', '-y', '--no-install-recommends', ...packages], { timeoutMs, env });
  let result = await install();
  if (result.code !== 0) {
    const update = await run('apt-get', ['update'], { timeoutMs, env });
    if (update.code !== 0) throw new Error(`apt-get update failed (exit ${update.code}):\n${update.output.slice(-2000)}`);
    result = await install();
  }
  if (result.code !== 0) throw new Error(`apt-get install ${packages.join(' ')} failed (exit ${result.code}):\n${result.output.slice(-2000)}`);
  if (!(await importAll())) throw new Error(`${python} still cannot import ${modules.join(', ')} after installing ${packages.join(' ')}`);
}

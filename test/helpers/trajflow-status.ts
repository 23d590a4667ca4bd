// `trajflow status` as a child process, for tests of what it says about services and credentials.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { projectRoot } from '../../core/config.js';

/** Runs `trajflow status` with `env` added; resolves its exit code and everything it printed. */
export function trajflowStatus(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(projectRoot, 'bin', 'trajflow.mjs'), 'status'], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

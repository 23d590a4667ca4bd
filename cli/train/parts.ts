// The parts of a training run as child processes, each the same `trajflow <part>` a user can start by
// hand: separate processes use both cores (training blocks its event loop for a second per update) and
// a part that fails does not take the others' state with it. Lines the parts print are passed through
// a filter, prefixed with the part's name.
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { nodeFlagsFor } from '../../infra/node-flags.mjs';

const CLI = fileURLToPath(new URL('../../bin/trajflow.mjs', import.meta.url));

export interface PartSpec {
  readonly name: string;
  readonly args: readonly string[];
  /** Lines to show (default: all). */
  readonly show?: (line: string) => boolean;
  readonly onLine?: (line: string) => void;
}

export interface RunningPart {
  readonly name: string;
  readonly child: ChildProcess;
  /** Resolves with the exit code (null: killed by a signal). */
  readonly exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

export function startPart(spec: PartSpec, write: (line: string) => void, env: NodeJS.ProcessEnv = process.env): RunningPart {
  const child = spawn(process.execPath, [...nodeFlagsFor([spec.name, ...spec.args]), CLI, spec.name, ...spec.args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout!, child.stderr!]) {
    createInterface({ input: stream }).on('line', (line) => {
      spec.onLine?.(line);
      if (spec.show?.(line) ?? true) write(`[${spec.name}] ${line}`);
    });
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    name: spec.name,
    child,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

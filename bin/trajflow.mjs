#!/usr/bin/env node
// The `trajflow` command. The sources are TypeScript run through tsx, so a clone needs no build step.
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { fileURLToPath } from 'node:url';
import { missingNodeFlags } from '../infra/node-flags.mjs';

const args = process.argv.slice(2);
const missing = missingNodeFlags(args);
if (missing.length > 0) process.exit(await relaunch(missing));

if (process.env.TRAJFLOW_RELAUNCHED && process.channel) {
  // Started by relaunch() below: end with the process that started us, even one killed with SIGKILL.
  process.on('disconnect', () => process.exit(137));
  process.channel.unref();
}
const { register } = await import('tsx/esm/api');
register();
const { main } = await import('./main.ts');
// Exit explicitly: a command that failed may leave a client or timer open (e.g. a consumer whose
// pipeline stopped), and a failed part must end so a supervisor (trajflow train, systemd) sees it.
process.exit(await main(args));

/**
 * Runs this command again under the node flags it needs (node-flags.mjs), with this terminal, and exits
 * as it does. SIGTERM and SIGHUP are passed on; Ctrl-C reaches both processes from the terminal already.
 */
function relaunch(flags) {
  const child = spawn(process.execPath, [...process.execArgv, ...flags, fileURLToPath(import.meta.url), ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, TRAJFLOW_RELAUNCHED: '1' },
  });
  for (const signal of ['SIGTERM', 'SIGHUP']) process.on(signal, () => child.kill(signal));
  process.on('SIGINT', () => undefined);
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? 128 + (constants.signals[signal] ?? 1))));
}

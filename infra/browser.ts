// Finds the browser the web dashboard's tests drive, installing Debian's chromium package when it is
// missing. Never a downloaded browser build: playwright-core drives the machine's own Chromium.
import { existsSync } from 'node:fs';
import { ServiceError } from '../core/errors.js';
import { run } from './process.js';

/** Where Debian's chromium package puts its launcher. */
export const CHROMIUM_PATH = '/usr/bin/chromium';
const PACKAGE = 'chromium';

async function aptGet(args: string[]): Promise<{ ok: boolean; output: string }> {
  const result = await run('apt-get', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeoutMs: 15 * 60_000 });
  return { ok: result.status === 0, output: result.error ? `apt-get: ${result.error.message}` : result.output };
}

/** The path of Chromium, installed with apt-get when missing (needs root). */
export async function ensureChromium(log: (line: string) => void = () => undefined, path = CHROMIUM_PATH): Promise<string> {
  if (existsSync(path)) return path;
  const how = `install it (sudo apt-get install ${PACKAGE}) so that ${path} exists`;
  if (process.getuid?.() !== 0) throw new ServiceError(`Chromium is not installed and this process is not root, so it cannot install it: ${how}.`);
  log(`browser: installing Debian package ${PACKAGE} with apt-get`);
  let result = await aptGet(['install', '-y', '-q', '--no-install-recommends', PACKAGE]);
  if (!result.ok) {
    // A fresh machine often has no package lists yet ("Unable to locate package").
    const update = await aptGet(['update', '-q']);
    if (update.ok) result = await aptGet(['install', '-y', '-q', '--no-install-recommends', PACKAGE]);
  }
  if (!result.ok || !existsSync(path)) {
    throw new ServiceError(`apt-get could not install ${PACKAGE}:\n${result.output.trim().split('\n').slice(-15).join('\n')}\nFix the error above and ${how}.`, {
      retriable: true,
    });
  }
  return path;
}

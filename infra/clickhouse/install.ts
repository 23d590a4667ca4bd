// Finds the ClickHouse server binary, installing Debian's clickhouse-server package when it is missing.
import { existsSync } from 'node:fs';
import { ServiceError } from '../../core/errors.js';
import { run } from '../process.js';

export interface ClickHouseBinary {
  readonly command: string;
  /** Arguments before the server's own: `server` for the single `clickhouse` binary of newer releases. */
  readonly prefixArgs: readonly string[];
}

const CANDIDATES: readonly ClickHouseBinary[] = [
  { command: '/usr/sbin/clickhouse-server', prefixArgs: [] }, // Debian's 18.16 package
  { command: '/usr/bin/clickhouse-server', prefixArgs: [] },
  { command: '/usr/bin/clickhouse', prefixArgs: ['server'] }, // ClickHouse's own packages
  { command: '/usr/local/bin/clickhouse', prefixArgs: ['server'] },
];

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir !== '' && existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return undefined;
}

export function findClickHouse(): ClickHouseBinary | undefined {
  const server = onPath('clickhouse-server');
  if (server) return { command: server, prefixArgs: [] };
  const single = onPath('clickhouse');
  if (single) return { command: single, prefixArgs: ['server'] };
  return CANDIDATES.find((c) => existsSync(c.command));
}

async function aptGet(args: string[]): Promise<{ ok: boolean; output: string }> {
  const result = await run('apt-get', args, { env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' }, timeoutMs: 15 * 60_000 });
  return { ok: result.status === 0, output: result.error ? `apt-get: ${result.error.message}` : result.output };
}

/** The server binary, installed with apt-get when missing (needs root). */
export async function ensureClickHouse(log: (line: string) => void = () => undefined): Promise<ClickHouseBinary> {
  const found = findClickHouse();
  if (found) return found;
  const how = 'install it (sudo apt-get install clickhouse-server), or set TRAJFLOW_CLICKHOUSE_URL to a server you run';
  if (process.getuid?.() !== 0) throw new ServiceError(`ClickHouse is not installed and trajflow is not root, so it cannot install it: ${how}.`);
  log('clickhouse: installing Debian package clickhouse-server with apt-get');
  let result = await aptGet(['install', '-y', '-q', 'clickhouse-server']);
  if (!result.ok) {
    // A fresh machine often has no package lists yet ("Unable to locate package").
    const update = await aptGet(['update', '-q']);
    if (update.ok) result = await aptGet(['install', '-y', '-q', 'clickhouse-server']);
  }
  const installed = findClickHouse();
  if (!result.ok || !installed) {
    throw new ServiceError(`apt-get could not install clickhouse-server:\n${result.output.trim().split('\n').slice(-15).join('\n')}\nFix the error above and ${how}.`, {
      retriable: true,
    });
  }
  return installed;
}

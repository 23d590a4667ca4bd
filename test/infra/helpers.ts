// Shared by the infra integration tests: private configs (own home and ports) so lifecycle tests never touch
// the services teammates use, free ports, and the pid of a process that is certainly dead.
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, type TrajflowConfig } from '../../core/config.js';
import { isListening } from '../../infra/process.js';

export const uniqueSuffix = (): string => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e6).toString(36)}`;

/** A port nothing listens on, from a range the default config does not use. */
export async function freePort(avoid: readonly number[] = []): Promise<number> {
  for (;;) {
    const port = 42000 + Math.floor(Math.random() * 20000);
    if (!avoid.includes(port) && !(await isListening(port))) return port;
  }
}

/** A config with its own TRAJFLOW_HOME and ports; the jar cache is shared so nothing is downloaded again. */
export async function privateConfig(extra: Record<string, string> = {}): Promise<TrajflowConfig> {
  const home = mkdtempSync(join(tmpdir(), 'trajflow-infra-'));
  const ports: number[] = [];
  for (let i = 0; i < 4; i += 1) ports.push(await freePort(ports));
  return loadConfig({
    ...process.env,
    TRAJFLOW_KAFKA_BROKERS: '',
    TRAJFLOW_CLICKHOUSE_URL: '',
    TRAJFLOW_HOME: home,
    TRAJFLOW_KAFKA_PORT: String(ports[0]),
    TRAJFLOW_KAFKA_CONTROLLER_PORT: String(ports[1]),
    TRAJFLOW_CLICKHOUSE_HTTP_PORT: String(ports[2]),
    TRAJFLOW_CLICKHOUSE_TCP_PORT: String(ports[3]),
    ...extra,
  });
}

/** The pid of a process that has exited (and been reaped). */
export function deadPid(): number {
  const result = spawnSync('sh', ['-c', 'echo $$']);
  return Number(result.stdout.toString().trim());
}
